"""Pointing at the map: the label of the point under the pointer, opening the point clicked, and the points
chosen by a rectangle or lasso, which narrow the knowledge page's table to their rows."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QLabel, QPushButton

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.qt.pages.map.shown import MapShown
from recall_gui.qt.scope.table_scope import TableScope
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from recall_gui.qt.panels.map_view import MapView

SELECTED_LABEL = "chosen on the map"


def _sorted_ids(row_ids: npt.NDArray[np.uint64], mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint64]:
    """The row ids of the chosen points, ascending (as the browse table pages them)."""
    import numpy as np

    return np.sort(row_ids[mask])


class Pointing:
    """The labels, the point opened and the points chosen; ``chosen_note`` and the two buttons say what is
    chosen."""

    def __init__(
        self,
        services: WindowServices,
        knowledge: TableScope,
        shown: MapShown,
        *,
        ensure_view: Callable[[], Awaitable[MapView]],
        chosen_note: QLabel,
        buttons: tuple[QPushButton, QPushButton],
        label_shown: SignalInstance,
    ) -> None:
        self.services = services
        self.knowledge = knowledge
        self.shown = shown
        self._ensure_view = ensure_view
        self.chosen_note = chosen_note
        self.show_button, self.clear_button = buttons
        self._label_shown = label_shown

    async def show_label(self, index: int) -> None:
        """The id and first line of the point ``index``, next to it."""
        shown = self.shown
        table_map, target, view = shown.table_map, shown.target, shown.view
        if table_map is None or target is None or view is None or index < 0:
            return
        row_id = int(table_map.row_ids[index])
        label = shown.labels.get(row_id)
        if label is None:
            try:
                found = await core.inspect.point_labels(await self.services.session(), target, [row_id])
            except RecallError:
                return
            label = found.get(row_id, ("", ""))
            if len(shown.labels) > 10_000:
                shown.labels.clear()
            shown.labels[row_id] = label
        if shown.table_map is not table_map:
            return
        identifier, first = label
        view.show_label(index, f"{identifier}\n{first[:100] + ('…' if len(first) > 100 else '')}")
        self._label_shown.emit()

    async def open_point(self, index: int) -> None:
        """Open the row of point ``index`` in the knowledge page's entry detail."""
        table_map = self.shown.table_map
        if table_map is None or not 0 <= index < len(table_map):
            return
        await self.knowledge.open_row(int(table_map.row_ids[index]))

    async def choose(self, mask: npt.NDArray[np.bool_]) -> None:
        """Narrow the knowledge page's table to the points in ``mask``."""
        table_map = self.shown.table_map
        if table_map is None:
            return
        if not mask.any():
            await self.clear_choice()
            return
        loop = asyncio.get_running_loop()
        row_ids = await loop.run_in_executor(self.services.chores, _sorted_ids, table_map.row_ids, mask)
        if self.shown.table_map is not table_map:
            return
        self.shown.chosen = mask
        (await self._ensure_view()).show_chosen(mask)
        self.show_chosen(len(row_ids))
        await self.knowledge.show_selection(row_ids, SELECTED_LABEL, self.knowledge.read_inputs())

    async def choose_inside(self, corners: list[tuple[float, float]]) -> None:
        """Narrow the knowledge page's table to the points inside the outline ``corners`` (tested on a
        worker: a lasso around most of a million points takes a moment)."""
        table_map = self.shown.table_map
        if table_map is None:
            return
        loop = asyncio.get_running_loop()
        mask = await loop.run_in_executor(
            self.services.chores, core.inspect.within, table_map.positions, corners
        )
        if self.shown.table_map is table_map:
            await self.choose(mask)

    async def clear_choice(self) -> None:
        self.shown.chosen = None
        if self.shown.view is not None:
            self.shown.view.show_chosen(None)
        self.show_chosen(None)
        if self.knowledge.selection is not None:
            await self.knowledge.clear_selection(self.knowledge.read_inputs())

    def show_chosen(self, count: int | None) -> None:
        visible = count is not None
        self.chosen_note.setText(
            f"{count:,} point{'' if count == 1 else 's'} chosen: the knowledge page's table shows only "
            "these rows."
            if visible
            else "Choose Rectangle or Lasso and drag on the map to narrow the knowledge page's table."
        )
        self.show_button.setEnabled(visible)
        self.clear_button.setEnabled(visible)
