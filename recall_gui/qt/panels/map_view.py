"""The map itself: a pyqtgraph plot of a table's points, with hover, click, and area selection.

The points are one ``ScatterPlotItem`` in pixel mode. Giving it 100,000 points at once would hold the
GUI thread for a good fraction of a second (pyqtgraph builds a record per point), so they are added
5,000 at a time, one batch per turn of the event loop, while the item is hidden (no repaint per batch),
and shown once complete. One item, not one per batch or colour: each item costs every frame of a pan
its own bookkeeping, and only a single item's device-coordinate cache survives a pan
(docs/PERFORMANCE.md#the-map). While the view moves, a second item with an even sample of at most
:data:`PREVIEW_POINTS` points stands in for the full one, which comes back once the view rests: each frame
of a drag then draws a fraction of the points. Hover and click find the nearest point with one NumPy pass;
a drag in a selection mode draws a rectangle or a lasso and reports the points inside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainterPath, QPalette
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QWidget

from recall_gui.core.inspect import within

if TYPE_CHECKING:
    import numpy.typing as npt

    from recall_gui.core.inspect import TableMap

Mode = Literal["pan", "rectangle", "lasso"]
#: Points per scatter item (see the module's docstring).
CHUNK_POINTS = 5_000
#: Points drawn while the view moves (a sample of the map), and how long it must rest for all of them.
PREVIEW_POINTS = 20_000
REST_MS = 150
POINT_SIZE = 4
#: How close (in pixels) the pointer must be to a point to hover or click it.
PICK_PIXELS = 6.0
HIT_COLOUR = QColor("#e5534b")
QUERY_COLOUR = QColor("#f2b705")
CHOSEN_COLOUR = QColor("#2f81f7")


def point_size(points: int) -> int:
    """Pixels per point: bigger on a sparse map, smaller where 100,000 points share the view."""
    return 8 if points <= 2_000 else 6 if points <= 20_000 else POINT_SIZE


class MapViewBox(pg.ViewBox):  # type: ignore[misc]
    """A view box whose left-drag pans, or draws a rectangle or a lasso, as the mode says."""

    def __init__(self, view: MapView) -> None:
        super().__init__(enableMenu=False)
        self.view = view
        self.mode: Mode = "pan"
        self._trace: list[tuple[float, float]] = []

    def mouseDragEvent(self, ev: Any, axis: Any = None) -> None:
        if self.mode == "pan" or ev.button() != Qt.MouseButton.LeftButton:
            super().mouseDragEvent(ev, axis)
            return
        ev.accept()
        point = self.mapSceneToView(ev.scenePos())
        here = (float(point.x()), float(point.y()))
        if ev.isStart():
            start = self.mapSceneToView(ev.buttonDownScenePos())
            self._trace = [(float(start.x()), float(start.y()))]
        if self.mode == "lasso":
            self._trace.append(here)
            outline = list(self._trace)
        else:
            (x0, y0), (x1, y1) = self._trace[0], here
            outline = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        self.view.draw_outline(outline)
        if ev.isFinish():
            self.view.finish_outline(outline)
            self._trace = []


class MapView(pg.PlotWidget):  # type: ignore[misc]
    """``mapPlot``: the points of one :class:`~recall_gui.core.inspect.table_map.TableMap`."""

    #: The point under the pointer changed (its index, or -1 for none).
    pointHovered = Signal(int)
    #: A point was clicked (its index).
    pointClicked = Signal(int)
    #: An area was drawn: a boolean mask over the points (which lie inside it).
    areaSelected = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        self.box = MapViewBox(self)
        background = QWidget().palette().color(QPalette.ColorRole.Base)
        super().__init__(parent, background=background, viewBox=self.box)
        self.setObjectName("mapPlot")
        plot = self.getPlotItem()
        for axis in ("left", "bottom"):
            plot.hideAxis(axis)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        self.box.setDefaultPadding(0.04)
        self._map: TableMap | None = None
        self.points = pg.ScatterPlotItem(pxMode=True, pen=None, antialias=False)
        self.preview = pg.ScatterPlotItem(pxMode=True, pen=None, antialias=False)
        for item in (self.points, self.preview):
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            item.hide()
            self.box.addItem(item)
        self._stride = 1
        self._rest = QTimer(self)
        self._rest.setSingleShot(True)
        self._rest.setInterval(REST_MS)
        self._rest.timeout.connect(self._on_rest)
        self.box.sigRangeChanged.connect(self._on_moving)
        self._hovered = -1
        self.hits = self._overlay(11, "o", None, HIT_COLOUR, 2.0, z=10)
        self.query_marker = self._overlay(20, "star", QUERY_COLOUR, QColor("#5c4400"), 1.0, z=12)
        self.chosen = self._overlay(POINT_SIZE + 3, "o", CHOSEN_COLOUR, None, 0, z=5)
        self.outline = QGraphicsPathItem()
        self.outline.setPen(pg.mkPen(CHOSEN_COLOUR, width=1.5, style=Qt.PenStyle.DashLine, cosmetic=True))
        self.outline.setZValue(20)
        self.box.addItem(self.outline, ignoreBounds=True)
        self.label = pg.TextItem(
            "", anchor=(0, 1), color=self.palette().color(QPalette.ColorRole.ToolTipText)
        )
        self.label.fill = pg.mkBrush(self.palette().color(QPalette.ColorRole.ToolTipBase))
        self.label.border = pg.mkPen(self.palette().color(QPalette.ColorRole.Mid))
        self.label.setZValue(30)
        self.label.hide()
        self.box.addItem(self.label, ignoreBounds=True)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)

    def _overlay(
        self, size: int, symbol: str, brush: QColor | None, pen: QColor | None, width: float, *, z: int
    ) -> pg.ScatterPlotItem:
        item = pg.ScatterPlotItem(
            size=size,
            symbol=symbol,
            pxMode=True,
            brush=pg.mkBrush(brush) if brush is not None else None,
            pen=pg.mkPen(pen, width=width) if pen is not None else None,
            antialias=True,
        )
        item.setZValue(z)
        self.box.addItem(item)
        return item

    # --- what the page drives -----------------------------------------------------------------------

    @property
    def table_map(self) -> TableMap | None:
        return self._map

    def set_mode(self, mode: Mode) -> None:
        self.box.mode = mode
        self.setCursor(Qt.CursorShape.CrossCursor if mode != "pan" else Qt.CursorShape.ArrowCursor)

    def clear_points(self) -> None:
        for item in (self.points, self.preview):
            item.clear()
            item.hide()
        self._rest.stop()
        self._map = None
        self._hovered = -1
        self.label.hide()
        for overlay in (self.hits, self.query_marker, self.chosen):
            overlay.setData([])
        self.outline.setPath(QPainterPath())

    def begin(self, table_map: TableMap) -> None:
        """Start showing ``table_map`` (its points arrive through :meth:`add_points`)."""
        self.clear_points()
        self._map = table_map
        self._stride = max(1, -(-len(table_map) // PREVIEW_POINTS))  # ceiling division
        positions = table_map.positions
        if len(positions):
            low, high = positions.min(axis=0), positions.max(axis=0)
            self.box.setRange(xRange=(float(low[0]), float(high[0])), yRange=(float(low[1]), float(high[1])))

    def add_points(self, indices: npt.NDArray[np.intp], colour: QColor) -> None:
        """Add the points ``indices`` of the map in ``colour`` (at most :data:`CHUNK_POINTS` at a time);
        they appear with :meth:`finish`."""
        if self._map is None or not len(indices):
            return
        size, brush = point_size(len(self._map)), pg.mkBrush(colour)
        self.points.addPoints(pos=self._map.positions[indices], size=size, pen=None, brush=brush)
        if self._stride > 1:
            sampled = indices[indices % self._stride == 0]
            if len(sampled):
                self.preview.addPoints(pos=self._map.positions[sampled], size=size, pen=None, brush=brush)

    def finish(self) -> None:
        """Show the points added since :meth:`begin`."""
        self.preview.hide()
        self.points.show()

    @property
    def moving(self) -> bool:
        """Whether the sample stands in for the points (the view moved less than :data:`REST_MS` ago)."""
        return bool(self.preview.isVisible())

    def _on_moving(self, *_args: object) -> None:
        if self._map is None or self._stride == 1 or not (self.points.isVisible() or self.moving):
            return
        if not self.moving:
            self.points.hide()
            self.preview.show()
        self._rest.start()

    def _on_rest(self) -> None:
        if self.moving:
            self.preview.hide()
            self.points.show()

    @property
    def points_drawn(self) -> int:
        return len(self.points.data) if self.points.isVisible() else 0

    def show_hits(self, indices: Sequence[int], query_at: tuple[float, float] | None) -> None:
        """Ring the points of a search's results; a star where the query itself lands (when known)."""
        if self._map is None:
            return
        shown = [i for i in indices if i >= 0]
        self.hits.setData(pos=self._map.positions[shown] if shown else np.zeros((0, 2)))
        self.query_marker.setData(pos=[query_at] if query_at is not None else np.zeros((0, 2)))

    def show_chosen(self, mask: npt.NDArray[np.bool_] | None) -> None:
        if self._map is None or mask is None or not mask.any():
            self.chosen.setData([])
            self.outline.setPath(QPainterPath())
            return
        self.chosen.setData(pos=self._map.positions[mask])

    def show_label(self, index: int, text: str) -> None:
        """The hover label of point ``index``."""
        if self._map is None or not 0 <= index < len(self._map):
            self.label.hide()
            return
        x, y = (float(v) for v in self._map.positions[index])
        (x0, x1), (y0, y1) = self.box.viewRange()
        # Keep the label inside the view: below a point in the upper half, left of one on the right.
        self.label.setAnchor((1.0 if x > (x0 + x1) / 2 else 0.0, 0.0 if y > (y0 + y1) / 2 else 1.0))
        self.label.setText(text)
        self.label.setPos(x, y)
        self.label.show()

    def label_text(self) -> str:
        return self.label.textItem.toPlainText() if self.label.isVisible() else ""

    def scene_position(self, index: int) -> QPointF:
        """Where point ``index`` is in the scene (to point at it)."""
        assert self._map is not None
        x, y = self._map.positions[index]
        found: QPointF = self.box.mapViewToScene(QPointF(float(x), float(y)))
        return found

    def widget_position(self, index: int) -> QPointF:
        """Where point ``index`` is in this widget's coordinates."""
        found: QPointF = QPointF(self.mapFromScene(self.scene_position(index)))
        return found

    # --- pointer ------------------------------------------------------------------------------------

    def point_at(self, scene_pos: QPointF) -> int:
        """The point within :data:`PICK_PIXELS` of ``scene_pos``, or -1."""
        if self._map is None or not self.box.sceneBoundingRect().contains(scene_pos):
            return -1
        at = self.box.mapSceneToView(scene_pos)
        width, height = self.box.viewPixelSize()
        found = self._map.nearest(float(at.x()), float(at.y()), width, height, PICK_PIXELS)
        return -1 if found is None else found

    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        found = self.point_at(scene_pos)
        if found != self._hovered:
            self._hovered = found
            if found < 0:
                self.label.hide()
            self.pointHovered.emit(found)

    def _on_mouse_clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton or event.double():
            return
        found = self.point_at(event.scenePos())
        if found >= 0:
            self.pointClicked.emit(found)

    def draw_outline(self, corners: list[tuple[float, float]]) -> None:
        path = QPainterPath()
        if corners:
            path.moveTo(*corners[0])
            for corner in corners[1:]:
                path.lineTo(*corner)
            path.closeSubpath()
        self.outline.setPath(path)

    def finish_outline(self, corners: list[tuple[float, float]]) -> None:
        if self._map is None:
            return
        self.areaSelected.emit(within(self._map.positions, corners))
