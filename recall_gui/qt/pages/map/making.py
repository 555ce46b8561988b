"""Making the map of the knowledge page's table: the neighbour layout taken from the cache when it is kept,
else the PCA map drawn first and the layout in its place when it is done (with progress and Cancel), and
the points chosen before carried over to the map that replaces them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QComboBox, QProgressBar, QPushButton

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.qt.pages.map.drawing import Drawing
from recall_gui.qt.pages.map.pointing import Pointing
from recall_gui.qt.pages.map.shown import MapShown
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.scope.table_scope import TableScope
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from recall_gui.core.inspect import TableMap
    from recall_gui.core.session import Method
    from recall_gui.core.storage import TableTarget
    from recall_gui.qt.panels.map_view import MapView

NO_DATABASE = "Choose a database on the knowledge page; its map appears here."


class Making:
    """Makes the map in the page's ``making`` lane and hands it to ``drawing``."""

    def __init__(
        self,
        services: WindowServices,
        knowledge: TableScope,
        shown: MapShown,
        *,
        drawing: Drawing,
        pointing: Pointing,
        ensure_view: Callable[[], Awaitable[MapView]],
        widgets: tuple[StatusNote, QProgressBar, QPushButton, QComboBox],
    ) -> None:
        """``widgets``: the status note, the progress bar, its Cancel button and the projection's list."""
        self.services = services
        self.knowledge = knowledge
        self.shown = shown
        self.drawing, self.pointing = drawing, pointing
        self._ensure_view = ensure_view
        self.status, self.progress, self.cancel_button, self.projection_combo = widgets
        #: The map being made (a newer request cancels the older one).
        self.lane = services.operations.lane("map")
        #: The map being made was stopped by Cancel (not by a newer request, which says what it does).
        self.stopped = False

    def show_busy(self, busy: bool, text: str = "") -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if busy:
            self.progress.setValue(0)
            self.progress.setFormat(text or "%p%")

    def on_progress(self, fraction: float, stage: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.progress.setFormat(f"{stage} — %p%")

    def select_method(self, method: str) -> None:
        self.projection_combo.setCurrentIndex(max(self.projection_combo.findData(method), 0))

    def request(self, method: Method, seed: int) -> None:
        self.stopped = False
        self.lane.start(self.make_map(method, seed))

    def cancel(self) -> bool:
        """Stop making the map (the Cancel button)."""
        self.stopped = self.lane.cancel()
        return self.stopped

    async def make_map(self, method: Method, seed: int) -> TableMap | None:
        """Make (or take from the cache) the map of the knowledge page's table and draw it: for the
        neighbour layout, the PCA map first unless the layout is kept, then the layout in its place."""
        entry = self.knowledge.current
        view = await self._ensure_view()
        if entry is None:
            view.clear_points()
            self.shown.table_map = None
            self.status.show_note(NO_DATABASE, "neutral")
            return None
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
            self.select_method("pca")
            return first
        return await self._made(entry, target, await self._build(target, "tsne", seed, entry.name))

    async def _build(self, target: TableTarget, method: Method, seed: int, name: str) -> TableMap | None:
        """One map made in the background (with progress and Cancel for the neighbour layout)."""
        session = await self.services.session()
        if method == "tsne":
            self.show_busy(True, "starting the neighbour layout…")
            what = "the PCA map for now; laying out every row by its neighbours"
            self.status.show_note(f"{name}: {what}…", "neutral")
        else:
            self.status.show_note(f"Making the PCA map of {name}…", "neutral")
        try:
            return await core.inspect.build_map(session, target, method, seed=seed, progress=self.on_progress)
        except asyncio.CancelledError:
            self.show_busy(False)
            if self.stopped:
                self.stopped = False
                self._say_stopped(method)
            raise
        except RecallError as error:
            self._failed(error)
            return None
        finally:
            if method == "tsne":
                self.show_busy(False)

    def _say_stopped(self, method: Method) -> None:
        table_map = self.shown.table_map
        what = "The neighbour layout" if method == "tsne" else "Making the PCA map"
        shown = "PCA" if table_map is None or table_map.method == "pca" else "the one before"
        said = "no map is shown" if table_map is None else f"the map shown is {shown}"
        self.status.show_note(f"{what} was cancelled; {said}.", "neutral")
        self.select_method(table_map.method if table_map else "pca")

    def _failed(self, error: RecallError) -> None:
        self.show_busy(False)
        self.status.show_note(f"The map could not be made: {error.message}", "bad")
        self.select_method("pca")

    async def _made(self, entry: object, target: TableTarget, table_map: TableMap | None) -> TableMap | None:
        """Draw ``table_map`` if the knowledge page still shows ``entry``. The rows chosen on the map
        before stay chosen if it shows them all; else the knowledge page's table shows every row again."""
        shown = self.shown
        if table_map is None or self.knowledge.current is not entry:
            return None
        before, chosen = (shown.table_map, shown.target), shown.chosen
        shown.target, shown.table_map, shown.labels, shown.chosen = target, table_map, {}, None
        carried = await self._carried(before, chosen, table_map) if chosen is not None else None
        if shown.table_map is not table_map:
            return None
        if chosen is not None and shown.chosen is None:  # (not chosen again on the new map meanwhile)
            shown.chosen = carried
            if carried is None and self.knowledge.selection is not None:
                await self.knowledge.clear_selection(self.knowledge.read_inputs())
        self.pointing.show_chosen(None if shown.chosen is None else int(shown.chosen.sum()))
        await self.drawing.fill_columns(target)
        await self.drawing.draw()
        return table_map

    async def _carried(
        self, before: tuple[TableMap | None, TableTarget | None], chosen: npt.NDArray[np.bool_], now: TableMap
    ) -> npt.NDArray[np.bool_] | None:
        """The rows ``chosen`` on the map ``before`` as points of the map ``now``, if it maps the same table
        and version (on a worker: a million row ids are looked up)."""
        (old, was), target = before, self.shown.target
        if old is None or was is None or target is None or self.knowledge.selection is None:
            return None
        if (was.uri, was.table_name, old.version) != (target.uri, target.table_name, now.version):
            return None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.services.chores, lambda: now.points_of(old.row_ids[chosen]))
