"""The map page: the knowledge page's table (at the version it shows) as a 2D map of its vectors.

Every row is on the map, up to a million. The neighbour layout (t-SNE of a sample, the other rows placed
from their nearest neighbours, kept per table version) is shown at once when it is kept; else the PCA
map is drawn first and the layout replaces it in place when it is done, with a progress bar and a Cancel
button meanwhile. Hovering a point shows its id and first line, clicking it opens the entry on the
knowledge page, the current search's results are ringed (and the query starred), the points can be
coloured by a column, and a rectangle or lasso drawn on the map narrows the knowledge page's table to
the rows inside it. pyqtgraph is imported when the page is first shown, not at start-up.

The page builds the widgets and composes its parts (this package's ``__init__`` lists them); the slots read
the widgets and start the parts' operations in their lanes.
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

from recall_gui.qt.pages.map.drawing import NO_COLOUR, Drawing
from recall_gui.qt.pages.map.making import NO_DATABASE, Making
from recall_gui.qt.pages.map.pointing import Pointing
from recall_gui.qt.pages.map.shown import MapShown
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.scope.table_scope import TableScope
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import push_button

if TYPE_CHECKING:
    from recall_gui.core.inspect import TableMap
    from recall_gui.core.session import Method
    from recall_gui.qt.panels.map_view import MapView, Mode

MODES: tuple[Mode, ...] = ("pan", "rectangle", "lasso")


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
        #: The colouring, the rows being chosen, the label under the pointer, the point being opened: a
        #: newer request of each kind cancels the older one (and no other kind; the map's own is making's).
        self.colouring, self.choosing = lane("map-colour"), lane("map-choice")
        self.hovering, self.opening = lane("map-hover"), lane("map-open")
        self._stale = True
        self._build_widgets()
        #: What the page shows, and the parts that make, draw and point at it.
        self.shown = shown = MapShown()
        self.drawing = Drawing(
            services,
            knowledge,
            shown,
            ensure_view=self._ensure_view,
            status=self.status,
            legend=self.legend,
            colour_combo=self.colour_combo,
            plain=lambda: self.palette().color(QPalette.ColorRole.Highlight).name(),
            map_shown=self.mapShown,
        )
        self.pointing = Pointing(
            services,
            knowledge,
            shown,
            ensure_view=self._ensure_view,
            chosen_note=self.chosen_note,
            buttons=(self.show_button, self.clear_button),
            label_shown=self.labelShown,
        )
        self.making = Making(
            services,
            knowledge,
            shown,
            drawing=self.drawing,
            pointing=self.pointing,
            ensure_view=self._ensure_view,
            widgets=(self.status, self.progress, self.cancel_button, self.projection_combo),
        )
        self._lay_out()
        self.making.show_busy(False)
        self.pointing.show_chosen(None)

        self.projection_combo.activated.connect(lambda _i: self.request_map())
        self.seed_spin.editingFinished.connect(self._on_seed_changed)
        self.colour_combo.activated.connect(lambda _i: self.request_colour())
        self.cancel_button.clicked.connect(self.cancel)
        self.show_button.clicked.connect(self.showKnowledge)
        self.clear_button.clicked.connect(self.request_clear_choice)
        self.modes.idToggled.connect(self._on_mode)
        knowledge.scopeChanged.connect(self._on_scope_changed)
        knowledge.searchFinished.connect(self.drawing.show_search)
        knowledge.browseReady.connect(self.drawing.show_search)

    def _lay_out(self) -> None:
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
        layout.addLayout(self.controls)
        layout.addWidget(self.status)
        layout.addLayout(progress_row)
        layout.addLayout(self.area, 1)
        layout.addWidget(self.legend)
        layout.addLayout(chosen_row)

    def _build_widgets(self) -> None:
        self.status = StatusNote("mapStatus")
        self.status.show_note(NO_DATABASE, "neutral")
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
        self.controls = self._controls()

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
    def view(self) -> MapView | None:
        return self.shown.view

    @property
    def table_map(self) -> TableMap | None:
        return self.shown.table_map

    def method(self) -> Method:
        chosen = self.projection_combo.currentData()
        return "pca" if chosen == "pca" else "tsne"

    async def _ensure_view(self) -> MapView:
        """The map widget, made on first use; pyqtgraph is imported on a worker thread first (importing it
        on the GUI thread holds the window)."""
        if self.shown.view is None:
            import importlib

            loop = asyncio.get_running_loop()
            name = "recall_gui.qt.panels.map_view"
            await loop.run_in_executor(self.services.chores, importlib.import_module, name)
            if self.shown.view is not None:  # made meanwhile by another caller
                return self.shown.view
            from recall_gui.qt.panels.map_view import MapView

            view = self.shown.view = MapView(workers=self.services.chores)
            self.area.removeWidget(self.placeholder)
            self.placeholder.deleteLater()
            self.area.addWidget(view, 1)
            view.pointHovered.connect(self._on_hovered)
            view.pointClicked.connect(self._on_clicked)
            view.areaSelected.connect(self._on_area)
        return self.shown.view

    def cancel(self) -> bool:
        """Stop making the map (the Cancel button)."""
        return self.making.cancel()

    # --- slots --------------------------------------------------------------------------------------

    def request_map(self) -> None:
        self._stale = False
        self.making.request(self.method(), self.seed_spin.value())

    def request_colour(self) -> None:
        column = self.colour_combo.currentData()
        self.colouring.start(self.drawing.colour(column if isinstance(column, str) else None))

    def request_clear_choice(self) -> None:
        self.choosing.start(self.pointing.clear_choice())

    def _on_seed_changed(self) -> None:
        table_map = self.shown.table_map
        if table_map is not None and table_map.projection.seed != self.seed_spin.value():
            self.request_map()

    def _on_mode(self, number: int, checked: bool) -> None:
        if checked and self.shown.view is not None:
            self.shown.view.set_mode(MODES[number])

    def _on_hovered(self, index: int) -> None:
        if index >= 0:
            self.hovering.start(self.pointing.show_label(index))

    def _on_clicked(self, index: int) -> None:
        self.opening.start(self.pointing.open_point(index))
        self.showKnowledge.emit()

    def _on_area(self, corners: object) -> None:
        if isinstance(corners, list):
            self.choosing.start(self.pointing.choose_inside(corners))

    def _on_scope_changed(self) -> None:
        self._stale = True
        if self.isVisible():
            self.request_map()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.request_map()
