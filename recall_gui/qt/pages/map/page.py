"""The map page: the knowledge page's table (at the version it shows) as a 2D map of its vectors.

Every row is on the map, up to a million. The neighbour layout (t-SNE of a sample, the other rows placed
from their nearest neighbours, kept per table version) is shown at once when it is kept; else the PCA
map is drawn first and the layout replaces it in place when it is done, with a progress bar and a Cancel
button meanwhile. Hovering a point shows its id and first line, clicking it opens the entry on the
knowledge page, the current search's results are ringed (and the query starred), the points can be
coloured by a column, and a rectangle or lasso drawn on the map narrows the knowledge page's table to
the rows inside it. pyqtgraph is imported when the page is first shown, not at start-up.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette, QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.qt.panels.status_note import StatusNote, Tone
from recall_gui.qt.scope.table_scope import TableScope
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import push_button

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from recall_gui.core.inspect import Colouring, TableMap
    from recall_gui.core.session import Method
    from recall_gui.core.storage import TableTarget
    from recall_gui.qt.panels.map_view import MapView, Mode

NO_COLOUR = "(one colour)"
SELECTED_LABEL = "chosen on the map"
MODES: tuple[Mode, ...] = ("pan", "rectangle", "lasso")
METHOD_TEXTS = {
    "tsne": "The neighbour layout keeps rows that are near in vector space (by the agent's metric) near on\n"
    "the map: t-SNE of a sample, every other row placed where its nearest sampled rows are, then drawn\n"
    "toward its nearest rows. Distances between far-apart groups mean little.",
    "pca": "PCA: the two directions in which the vectors differ most. Linear: a query lands where it\n"
    "belongs, but unrelated topics may overlap.",
}


def _sorted_ids(row_ids: npt.NDArray[np.uint64], mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint64]:
    """The row ids of the chosen points, ascending (as the browse table pages them)."""
    import numpy as np

    return np.sort(row_ids[mask])


class MapPage(QWidget):
    """``projectionCombo``, ``colourCombo``, ``seedSpin``, the mode buttons, ``mapStatus``, ``mapProgress``
    with ``mapCancelButton``, and the map itself (``mapPlot``, made when the page is first shown)."""

    #: A map is drawn (every point added, colours and highlights set).
    mapShown = Signal()
    #: The label of a hovered point is shown.
    labelShown = Signal()
    #: The knowledge page should be shown (a point was opened, or the chosen rows are to be seen).
    showKnowledge = Signal()

    def __init__(
        self, services: WindowServices, knowledge: TableScope, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mapPage")
        self.services = services
        self.knowledge = knowledge
        lane = services.operations.lane
        #: The map being made, its colouring, the rows being chosen, the label under the pointer, the point
        #: being opened: a newer request of each kind cancels the older one (and no other kind).
        self.making, self.colouring = lane("map"), lane("map-colour")
        self.choosing, self.hovering, self.opening = lane("map-choice"), lane("map-hover"), lane("map-open")
        self.view: MapView | None = None
        self._map: TableMap | None = None
        self._target: TableTarget | None = None
        #: The column the points are coloured by, and its values at the points of the map they were read for.
        self._colour_column: str | None = None
        self._colours: tuple[TableMap, Colouring] | None = None
        #: The map being made was stopped by Cancel (not by a newer request, which says what it does).
        self._stopped = False
        self._labels: dict[int, tuple[str, str]] = {}
        self._chosen: npt.NDArray[np.bool_] | None = None
        self._stale = True

        self._build_widgets()
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)
        chosen_row = QHBoxLayout()
        chosen_row.addWidget(self.chosen_note, 1)
        chosen_row.addWidget(self.show_button)
        chosen_row.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(6)
        layout.addLayout(self._controls())
        layout.addWidget(self.status)
        layout.addLayout(progress_row)
        layout.addLayout(self.area, 1)
        layout.addWidget(self.legend)
        layout.addLayout(chosen_row)
        self._show_busy(False)
        self._show_chosen(None)

        self.projection_combo.activated.connect(lambda _i: self.request_map())
        self.seed_spin.editingFinished.connect(self._on_seed_changed)
        self.colour_combo.activated.connect(lambda _i: self.request_colour())
        self.cancel_button.clicked.connect(self.cancel)
        self.show_button.clicked.connect(self.showKnowledge)
        self.clear_button.clicked.connect(self.request_clear_choice)
        self.modes.idToggled.connect(self._on_mode)
        knowledge.scopeChanged.connect(self._on_scope_changed)
        knowledge.searchFinished.connect(self.show_search)
        knowledge.browseReady.connect(self.show_search)

    def _build_widgets(self) -> None:
        self.status = StatusNote("mapStatus")
        self.status.show_note("Choose a database on the knowledge page; its map appears here.", "neutral")
        self.progress = QProgressBar()
        self.progress.setObjectName("mapProgress")
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.cancel_button = push_button("Cancel", "mapCancelButton", "Stop making the map")
        self.legend = QLabel()
        self.legend.setObjectName("mapLegend")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.chosen_note = QLabel()
        self.chosen_note.setObjectName("mapChosen")
        self.chosen_note.setWordWrap(True)
        self.show_button = push_button(
            "Show in &Table", "mapShowButton", "See the chosen rows on the knowledge page"
        )
        self.clear_button = push_button("C&lear Choice", "mapClearButton", "Show every row again")
        self.area = QVBoxLayout()
        self.area.setContentsMargins(0, 0, 0, 0)
        self.placeholder = QLabel("Drawing the map…")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setEnabled(False)
        self.area.addWidget(self.placeholder, 1)

    def _controls(self) -> QHBoxLayout:
        self.projection_combo = QComboBox()
        self.projection_combo.setObjectName("projectionCombo")
        self.projection_combo.addItem("t-SNE", "tsne")
        self.projection_combo.addItem("PCA", "pca")
        self.projection_combo.setToolTip(
            "How the vectors are flattened onto the plane: by their neighbours (t-SNE of a sample, every\n"
            "other row placed from its nearest rows; PCA is shown while it is made), or PCA alone"
        )
        self.seed_spin = QSpinBox()
        self.seed_spin.setObjectName("seedSpin")
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setToolTip("The same seed draws the same map")
        self.seed_spin.setMaximumWidth(90)
        self.colour_combo = QComboBox()
        self.colour_combo.setObjectName("colourCombo")
        self.colour_combo.addItem(NO_COLOUR, None)
        self.colour_combo.setToolTip("Colour the points by a column's values")
        self.colour_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.colour_combo.setMinimumContentsLength(12)
        self.modes = QButtonGroup(self)
        row = QHBoxLayout()
        row.setSpacing(8)
        for label, widget in (("&Projection:", self.projection_combo), ("Seed:", self.seed_spin)):
            caption = QLabel(label)
            caption.setBuddy(widget)
            row.addWidget(caption)
            row.addWidget(widget)
        colour_label = QLabel("C&olour by:")
        colour_label.setBuddy(self.colour_combo)
        row.addWidget(colour_label)
        row.addWidget(self.colour_combo)
        row.addStretch(1)
        for number, (text, name, tip) in enumerate(
            (
                ("Pan", "mapPanButton", "Drag to move the map; the wheel zooms"),
                ("Rectangle", "mapRectangleButton", "Drag a rectangle to choose the points inside it"),
                ("Lasso", "mapLassoButton", "Draw around the points to choose them"),
            )
        ):
            button = QToolButton()
            button.setText(text)
            button.setObjectName(name)
            button.setToolTip(tip)
            button.setCheckable(True)
            button.setChecked(number == 0)
            self.modes.addButton(button, number)
            row.addWidget(button)
        return row

    # --- state --------------------------------------------------------------------------------------

    @property
    def table_map(self) -> TableMap | None:
        return self._map

    def method(self) -> Method:
        chosen = self.projection_combo.currentData()
        return "pca" if chosen == "pca" else "tsne"

    async def _ensure_view(self) -> MapView:
        """The map widget, made on first use; pyqtgraph is imported on a worker thread first (importing it
        on the GUI thread holds the window)."""
        if self.view is None:
            import importlib

            loop = asyncio.get_running_loop()
            name = "recall_gui.qt.panels.map_view"
            await loop.run_in_executor(self.services.chores, importlib.import_module, name)
            if self.view is not None:  # made meanwhile by another caller
                return self.view
            from recall_gui.qt.panels.map_view import MapView

            self.view = MapView(workers=self.services.chores)
            self.area.removeWidget(self.placeholder)
            self.placeholder.deleteLater()
            self.area.addWidget(self.view, 1)
            self.view.pointHovered.connect(self._on_hovered)
            self.view.pointClicked.connect(self._on_clicked)
            self.view.areaSelected.connect(self._on_area)
        return self.view

    def _show_busy(self, busy: bool, text: str = "") -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if busy:
            self.progress.setValue(0)
            self.progress.setFormat(text or "%p%")

    def _on_progress(self, fraction: float, stage: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.progress.setFormat(f"{stage} — %p%")

    # --- operations ---------------------------------------------------------------------------------

    async def make_map(self, method: Method | None = None, seed: int | None = None) -> TableMap | None:
        """Make (or take from the cache) the map of the knowledge page's table and draw it: for the
        neighbour layout, the PCA map first unless the layout is kept, then the layout in its place."""
        entry = self.knowledge.current
        self._stale = False
        view = await self._ensure_view()
        if entry is None:
            view.clear_points()
            self._map = None
            self.status.show_note("Choose a database on the knowledge page; its map appears here.", "neutral")
            return None
        method = method or self.method()
        seed = self.seed_spin.value() if seed is None else seed
        target = self.knowledge.target()
        session = await self.services.session()
        try:
            kept = (
                await core.inspect.kept_map(session, target, method, seed=seed) if method == "tsne" else None
            )
        except RecallError as error:
            self._failed(error)
            return None
        if kept is not None or method == "pca":
            return await self._made(entry, target, kept or await self._build(target, "pca", seed, entry.name))
        first = await self._build(target, "pca", seed, entry.name)
        if first is None or await self._made(entry, target, first) is None:
            return None
        if len(first) < core.inspect.MIN_LAYOUT_ROWS:  # too few rows to have neighbours: PCA shows them all
            self._select_method("pca")
            return first
        return await self._made(entry, target, await self._build(target, "tsne", seed, entry.name))

    async def _build(self, target: TableTarget, method: Method, seed: int, name: str) -> TableMap | None:
        """One map made in the background (with progress and Cancel for the neighbour layout)."""
        session = await self.services.session()
        if method == "tsne":
            self._show_busy(True, "starting the neighbour layout…")
            what = "the PCA map for now; laying out every row by its neighbours"
            self.status.show_note(f"{name}: {what}…", "neutral")
        else:
            self.status.show_note(f"Making the PCA map of {name}…", "neutral")
        try:
            return await core.inspect.build_map(
                session, target, method, seed=seed, progress=self._on_progress
            )
        except asyncio.CancelledError:
            self._show_busy(False)
            if self._stopped:
                self._stopped = False
                what = "The neighbour layout" if method == "tsne" else "Making the PCA map"
                shown = "PCA" if self._map is None or self._map.method == "pca" else "the one before"
                said = "no map is shown" if self._map is None else f"the map shown is {shown}"
                self.status.show_note(f"{what} was cancelled; {said}.", "neutral")
                self._select_method(self._map.method if self._map else "pca")
            raise
        except RecallError as error:
            self._failed(error)
            return None
        finally:
            if method == "tsne":
                self._show_busy(False)

    def _failed(self, error: RecallError) -> None:
        self._show_busy(False)
        self.status.show_note(f"The map could not be made: {error.message}", "bad")
        self._select_method("pca")

    async def _made(self, entry: object, target: TableTarget, table_map: TableMap | None) -> TableMap | None:
        """Draw ``table_map`` if the knowledge page still shows ``entry``. The rows chosen on the map
        before stay chosen if it shows them all; else the knowledge page's table shows every row again."""
        if table_map is None or self.knowledge.current is not entry:
            return None
        before, chosen = (self._map, self._target), self._chosen
        self._target, self._map, self._labels, self._chosen = target, table_map, {}, None
        carried = await self._carried(before, chosen, table_map) if chosen is not None else None
        if self._map is not table_map:
            return None
        if chosen is not None and self._chosen is None:  # (not chosen again on the new map meanwhile)
            self._chosen = carried
            if carried is None and self.knowledge.selection is not None:
                await self.knowledge.clear_selection(self.knowledge.read_inputs())
        self._show_chosen(None if self._chosen is None else int(self._chosen.sum()))
        await self._fill_columns(target)
        await self.draw()
        return table_map

    async def _carried(
        self, before: tuple[TableMap | None, TableTarget | None], chosen: npt.NDArray[np.bool_], now: TableMap
    ) -> npt.NDArray[np.bool_] | None:
        """The rows ``chosen`` on the map ``before`` as points of the map ``now``, if it maps the same table
        and version (on a worker: a million row ids are looked up)."""
        (old, was), target = before, self._target
        if old is None or was is None or target is None or self.knowledge.selection is None:
            return None
        if (was.uri, was.table_name, old.version) != (target.uri, target.table_name, now.version):
            return None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.services.chores, lambda: now.points_of(old.row_ids[chosen]))

    def _select_method(self, method: str) -> None:
        self.projection_combo.setCurrentIndex(max(self.projection_combo.findData(method), 0))

    async def _fill_columns(self, target: TableTarget) -> None:
        try:
            facts = await core.tables.describe_schema(await self.services.session(), target)
        except RecallError:
            return
        chosen = self.colour_combo.currentData()
        names = [c.name for c in facts.columns if c.role == "" and not c.arrow_type.startswith("struct")]
        self.colour_combo.clear()
        self.colour_combo.addItem(NO_COLOUR, None)
        for name in names:
            self.colour_combo.addItem(name, name)
        self.colour_combo.setCurrentIndex(
            max(self.colour_combo.findData(chosen), 0) if chosen in names else 0
        )
        if chosen not in names:
            self._colour_column = None

    async def draw(self) -> None:
        """Draw the map's points in their colours, and say what the map shows and how it was made."""
        from recall_gui.qt.panels.map_colours import coloured, legend_html

        table_map, view = self._map, await self._ensure_view()
        if table_map is None:
            return
        if view.table_map is not table_map:
            view.begin(table_map)
        plain = self.palette().color(QPalette.ColorRole.Highlight).name()
        colouring = await self._colouring_of(table_map)
        column = None if colouring is None else colouring.column
        loop = asyncio.get_running_loop()
        groups, codes, palette = await loop.run_in_executor(
            self.services.chores, coloured, len(table_map), colouring, plain
        )
        if self._map is not table_map or self._colour_column != column:
            return  # a newer map or colouring is drawn instead
        view.show_points(codes, palette)
        view.show_chosen(self._chosen)
        self.legend.setText(legend_html(colouring, groups))
        self.show_search()
        self.status.show_note(self._describe(table_map), self._tone(table_map))
        self.status.setToolTip(METHOD_TEXTS[table_map.method])
        self.mapShown.emit()

    def _describe(self, table_map: TableMap) -> str:
        cached = " (kept from before)" if table_map.from_cache else ""
        older = " — an older version, not the latest" if self.knowledge.version is not None else ""
        took = f", {table_map.elapsed_s:.0f} s" if table_map.elapsed_s >= 1 else ""
        not_kept = (
            f" Not kept for next time ({table_map.not_kept}): laid out again then, which is slower."
            if table_map.not_kept
            else ""
        )
        return (
            f"{table_map.table}: {table_map.describe()}{older}{cached}. "
            f"Laid out by {table_map.how}{took}.{not_kept} "
            "Hover a point for its id, click to open it; drag a rectangle or lasso to narrow the table."
        )

    def _tone(self, table_map: TableMap) -> Tone:
        if table_map.sampled or self.knowledge.version is not None or table_map.not_kept:
            return "warning"
        return "good"

    async def colour(self, column: str | None) -> None:
        """Colour the points by ``column``'s values (``None``: one colour)."""
        self._colour_column = column
        await self.draw()

    async def _colouring_of(self, table_map: TableMap) -> Colouring | None:
        """The chosen column's values at the points of ``table_map``: those read for a map of the same
        points, else read (one colour if they cannot be)."""
        column, target, kept = self._colour_column, self._target, self._colours
        if column is None or target is None:
            return None
        loop = asyncio.get_running_loop()
        if kept is not None and kept[1].column == column:
            fits = await loop.run_in_executor(self.services.chores, kept[0].same_points, table_map)
            if fits:
                return kept[1]
        try:
            colouring = await core.inspect.colour_by(
                await self.services.session(), target, table_map, column, workers=self.services.chores
            )
        except RecallError as error:
            if self._colour_column == column:
                self._colour_column = None
                self.colour_combo.setCurrentIndex(0)
            self.services.show_error(error)
            return None
        self._colours = (table_map, colouring)
        return colouring

    def show_search(self) -> None:
        """Ring the knowledge page's current results on the map (when they come from the version mapped)."""
        table_map, view = self._map, self.view
        if table_map is None or view is None:
            return
        report = self.knowledge.last_report
        if report is None or report.result.table_version != table_map.version:
            view.show_hits([], None)
            return
        row_ids = [hit.row_id for hit in report.result.hits if hit.row_id is not None]
        found = [int(i) for i in table_map.index_of(row_ids)] if row_ids else []
        query_at = None
        if report.vector is not None:
            query_at = table_map.projection.place(report.vector)
        shown = [i for i in found if i >= 0]
        if query_at is None and shown:  # t-SNE is not linear: the query goes among its nearest results
            near = table_map.positions[shown[:3]].mean(axis=0)
            query_at = (float(near[0]), float(near[1]))
        view.show_hits(found, query_at)

    async def show_label(self, index: int) -> None:
        """The id and first line of the point ``index``, next to it."""
        table_map, target, view = self._map, self._target, self.view
        if table_map is None or target is None or view is None or index < 0:
            return
        row_id = int(table_map.row_ids[index])
        label = self._labels.get(row_id)
        if label is None:
            try:
                found = await core.inspect.point_labels(await self.services.session(), target, [row_id])
            except RecallError:
                return
            label = found.get(row_id, ("", ""))
            if len(self._labels) > 10_000:
                self._labels.clear()
            self._labels[row_id] = label
        if self._map is not table_map:
            return
        identifier, first = label
        view.show_label(index, f"{identifier}\n{first[:100] + ('…' if len(first) > 100 else '')}")
        self.labelShown.emit()

    async def open_point(self, index: int) -> None:
        """Open the row of point ``index`` in the knowledge page's entry detail."""
        table_map = self._map
        if table_map is None or not 0 <= index < len(table_map):
            return
        await self.knowledge.open_row(int(table_map.row_ids[index]))

    async def choose(self, mask: npt.NDArray[np.bool_]) -> None:
        """Narrow the knowledge page's table to the points in ``mask``."""
        table_map = self._map
        if table_map is None:
            return
        if not mask.any():
            await self.clear_choice()
            return
        loop = asyncio.get_running_loop()
        row_ids = await loop.run_in_executor(self.services.chores, _sorted_ids, table_map.row_ids, mask)
        if self._map is not table_map:
            return
        self._chosen = mask
        (await self._ensure_view()).show_chosen(mask)
        self._show_chosen(len(row_ids))
        await self.knowledge.show_selection(row_ids, SELECTED_LABEL, self.knowledge.read_inputs())

    async def choose_inside(self, corners: list[tuple[float, float]]) -> None:
        """Narrow the knowledge page's table to the points inside the outline ``corners`` (tested on a
        worker: a lasso around most of a million points takes a moment)."""
        table_map = self._map
        if table_map is None:
            return
        loop = asyncio.get_running_loop()
        mask = await loop.run_in_executor(
            self.services.chores, core.inspect.within, table_map.positions, corners
        )
        if self._map is table_map:
            await self.choose(mask)

    async def clear_choice(self) -> None:
        self._chosen = None
        if self.view is not None:
            self.view.show_chosen(None)
        self._show_chosen(None)
        if self.knowledge.selection is not None:
            await self.knowledge.clear_selection(self.knowledge.read_inputs())

    def _show_chosen(self, count: int | None) -> None:
        visible = count is not None
        self.chosen_note.setText(
            f"{count:,} point{'' if count == 1 else 's'} chosen: the knowledge page's table shows only "
            "these rows."
            if visible
            else "Choose Rectangle or Lasso and drag on the map to narrow the knowledge page's table."
        )
        self.show_button.setEnabled(visible)
        self.clear_button.setEnabled(visible)

    def cancel(self) -> bool:
        """Stop making the map (the Cancel button)."""
        self._stopped = self.making.cancel()
        return self._stopped

    # --- slots --------------------------------------------------------------------------------------

    def request_map(self) -> None:
        self._stopped = False
        self.making.start(self.make_map())

    def request_colour(self) -> None:
        column = self.colour_combo.currentData()
        self.colouring.start(self.colour(column if isinstance(column, str) else None))

    def request_clear_choice(self) -> None:
        self.choosing.start(self.clear_choice())

    def _on_seed_changed(self) -> None:
        if self._map is not None and self._map.projection.seed != self.seed_spin.value():
            self.request_map()

    def _on_mode(self, number: int, checked: bool) -> None:
        if checked and self.view is not None:
            self.view.set_mode(MODES[number])

    def _on_hovered(self, index: int) -> None:
        if index >= 0:
            self.hovering.start(self.show_label(index))

    def _on_clicked(self, index: int) -> None:
        self.opening.start(self.open_point(index))
        self.showKnowledge.emit()

    def _on_area(self, corners: object) -> None:
        if isinstance(corners, list):
            self.choosing.start(self.choose_inside(corners))

    def _on_scope_changed(self) -> None:
        self._stale = True
        if self.isVisible():
            self.request_map()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.request_map()
