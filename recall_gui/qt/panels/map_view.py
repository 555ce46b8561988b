"""The map itself: a pyqtgraph plot of a table's points, with hover, click, and area selection.

The points are one picture of the view (:mod:`recall_gui.qt.panels.map_raster`), placed in map units,
so that a pan or a zoom moves and scales the picture at once; a new picture of the view follows, drawn on
a worker thread for a big map (a map of up to :data:`DRAW_HERE_POINTS` points is drawn here, at once).
While a picture is being drawn, a newer view waits for it and the newest one is drawn next: never more
than one picture is made at a time, however fast the view moves. Hover and click find the nearest point
through the map's k-d tree; a drag in a selection mode draws a rectangle or a lasso and reports its
corners.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QPalette
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QWidget

from recall_gui.qt.panels.map_raster import Frame, Picture, Points, render

if TYPE_CHECKING:
    import numpy.typing as npt

    from recall_gui.core.inspect import TableMap

Mode = Literal["pan", "rectangle", "lasso"]
#: Maps of up to this many points are drawn on the GUI thread (at once, well within a stall's budget);
#: bigger ones on a worker.
DRAW_HERE_POINTS = 50_000
#: How close (in pixels) the pointer must be to a point to hover or click it.
PICK_PIXELS = 6.0
HIT_COLOUR = QColor("#e5534b")
QUERY_COLOUR = QColor("#f2b705")
CHOSEN_COLOUR = QColor("#2f81f7")


class PictureItem(QGraphicsItem):
    """A picture of part of the map, painted into the rectangle (map units) it shows."""

    def __init__(self) -> None:
        super().__init__()
        self.image: QImage | None = None
        self.rect = QRectF()

    def show_picture(self, image: QImage | None, rect: QRectF) -> None:
        self.prepareGeometryChange()
        self.image, self.rect = image, rect
        self.update()

    def boundingRect(self) -> QRectF:
        return self.rect

    def paint(self, painter: QPainter, _option: Any, _widget: Any = None) -> None:
        if self.image is not None:
            painter.drawImage(self.rect, self.image)


@dataclass(frozen=True)
class _Drawn:
    generation: int
    painting: int
    points: Points
    picture: Picture
    image: QImage


@dataclass(frozen=True)
class _Drawing:
    """One picture to draw, with everything it reads (so a worker never reads the view's state)."""

    generation: int
    painting: int
    frame: Frame
    table_map: TableMap
    colours: tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint32]]
    chosen: npt.NDArray[np.bool_] | None
    points: Points | None
    order: npt.NDArray[np.intp] | None

    def run(self) -> _Drawn:
        points = self.points
        if points is None:  # the points sorted once per map, coloured once per colouring
            chosen_colour = int(CHOSEN_COLOUR.rgba())
            positions = self.table_map.positions
            points = Points(positions, *self.colours, self.chosen, chosen_colour, order=self.order)
        picture = render(points, self.frame)
        return _Drawn(self.generation, self.painting, points, picture, _as_image(picture))


def _as_image(picture: Picture) -> QImage:
    """The picture as a QImage ready to paint (premultiplied once here, not at every paint)."""
    height, width = picture.pixels.shape
    image = QImage(picture.pixels.data, width, height, width * 4, QImage.Format.Format_ARGB32)
    return image.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)  # a copy: owns its pixels


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
    #: An area was drawn: its corners in map units (a list of ``(x, y)``).
    areaSelected = Signal(object)
    #: A picture of the current view is shown (every point in view drawn, in the current colours).
    pictureShown = Signal()
    #: A worker finished a picture (internal: carries it to the GUI thread).
    _drawn = Signal(object)

    def __init__(self, parent: QWidget | None = None, *, workers: Executor | None = None) -> None:
        self.box = MapViewBox(self)
        background = QWidget().palette().color(QPalette.ColorRole.Base)
        super().__init__(parent, background=background, viewBox=self.box)
        self.setObjectName("mapPlot")
        self.setMinimumSize(200, 120)  # the page fits an 800x500 window; the map takes what room is left
        plot = self.getPlotItem()
        for axis in ("left", "bottom"):
            plot.hideAxis(axis)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        self.box.setDefaultPadding(0.04)
        self.workers = workers
        self._map: TableMap | None = None
        self._order: npt.NDArray[np.intp] | None = None
        self._colours: tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint32]] | None = None
        self._chosen: npt.NDArray[np.bool_] | None = None
        self._points: Points | None = None
        self._generation = 0
        #: Counts the colourings and choices shown: a picture's points are kept only if none came since.
        self._painting = 0
        self._drawing = False
        self._again = False
        self._shown: Frame | None = None
        self._shown_painting = 0
        self._shown_points = 0
        self.picture = PictureItem()
        self.box.addItem(self.picture, ignoreBounds=True)
        self._drawn.connect(self._on_drawn)
        self.box.sigRangeChanged.connect(self._on_moved)
        self.box.sigResized.connect(self._on_moved)
        self._hovered = -1
        self.hits = self._overlay(11, "o", None, HIT_COLOUR, 2.0, z=10)
        self.query_marker = self._overlay(20, "star", QUERY_COLOUR, QColor("#5c4400"), 1.0, z=12)
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
        self._generation += 1
        self._map, self._order, self._colours, self._chosen, self._points = None, None, None, None, None
        self._shown, self._shown_points = None, 0
        self.picture.show_picture(None, QRectF())
        self._hovered = -1
        self.label.hide()
        for overlay in (self.hits, self.query_marker):
            overlay.setData([])
        self.outline.setPath(QPainterPath())

    def begin(self, table_map: TableMap) -> None:
        """Start showing ``table_map``; its points appear with :meth:`show_points`."""
        self.clear_points()
        self._map = table_map
        positions = table_map.positions
        if len(positions):
            low, high = positions.min(axis=0), positions.max(axis=0)
            self.box.setRange(xRange=(float(low[0]), float(high[0])), yRange=(float(low[1]), float(high[1])))

    def show_points(self, codes: npt.NDArray[np.uint8], palette: npt.NDArray[np.uint32]) -> None:
        """Draw every point in its colour: ``palette[codes[i]]`` (ARGB numbers) for point ``i``."""
        if self._map is None:
            return
        self._colours = (codes, palette)
        self._repaint()

    def show_chosen(self, mask: npt.NDArray[np.bool_] | None) -> None:
        """Draw the points of ``mask`` on top in the chosen colour (``None``: no point is chosen)."""
        if self._map is None:
            return
        self._chosen = None if mask is None or not mask.any() else mask
        if self._chosen is None:
            self.outline.setPath(QPainterPath())
        self._repaint()

    def _repaint(self) -> None:
        self._painting += 1
        self._points = None
        self._redraw()

    @property
    def points_drawn(self) -> int:
        """How many points the picture shown has drawn (the points in view)."""
        return self._shown_points if self._shown is not None else 0

    @property
    def moving(self) -> bool:
        """Whether the picture shown is not (yet) of the current view in the current colours and choice."""
        if self._map is None or self._colours is None:
            return False
        return self._shown != self._frame() or self._shown_painting != self._painting

    def _frame(self) -> Frame:
        (left, right), (bottom, top) = self.box.viewRange()
        size = self.box.boundingRect().size()
        return Frame(
            float(left), float(bottom), float(right), float(top), int(size.width()), int(size.height())
        )

    def _on_moved(self, *_args: object) -> None:
        if self._map is not None and self._colours is not None:
            self._redraw()

    def _redraw(self) -> None:
        """Draw the current view: here for a small map, else on a worker (one picture at a time)."""
        if self._map is None or self._colours is None:
            return
        job = _Drawing(
            self._generation,
            self._painting,
            self._frame(),
            self._map,
            self._colours,
            self._chosen,
            self._points,
            self._order,
        )
        if self.workers is None or len(self._map) <= DRAW_HERE_POINTS:
            self._show(job.run())
            return
        if self._drawing:
            self._again = True
            return
        self._drawing, self._again = True, False
        try:
            future = self.workers.submit(job.run)
        except RuntimeError:  # the window is closing: its threads are gone
            self._drawing = False
            return
        future.add_done_callback(self._drawn.emit)

    def _on_drawn(self, done: Any) -> None:
        self._drawing = False
        if not done.cancelled():
            self._show(done.result())
        if self._again:
            self._redraw()

    def _show(self, result: _Drawn) -> None:
        if result.generation != self._generation:
            return  # of a map shown before
        self._order = result.points.order
        if result.painting == self._painting:  # else coloured before the newest colours or choice
            self._points = result.points
        frame = result.picture.frame
        rect = QRectF(frame.left, frame.bottom, frame.right - frame.left, frame.top - frame.bottom)
        self.picture.show_picture(result.image, rect)
        self._shown, self._shown_points = frame, result.picture.points
        self._shown_painting = result.painting
        if not self.moving:
            self.pictureShown.emit()

    def show_hits(self, indices: Sequence[int], query_at: tuple[float, float] | None) -> None:
        """Ring the points of a search's results; a star where the query itself lands (when known)."""
        if self._map is None:
            return
        shown = [i for i in indices if i >= 0]
        self.hits.setData(pos=self._map.positions[shown] if shown else np.zeros((0, 2)))
        self.query_marker.setData(pos=[query_at] if query_at is not None else np.zeros((0, 2)))

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
        if self._map is not None:
            self.areaSelected.emit(list(corners))
