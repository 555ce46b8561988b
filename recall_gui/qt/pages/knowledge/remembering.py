"""What the knowledge page keeps for the next start: the splitter between the table and the side tabs, the
limit, the detail's font and the registered database shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QSplitter

from recall_gui.core.base import DEFAULT_LIMIT
from recall_gui.qt.panels.detail_panel import MONOSPACE_SETTING, DetailPanel
from recall_gui.qt.panels.query_bar import MAX_LIMIT, QueryBar
from recall_gui.qt.settings import WindowMemory

if TYPE_CHECKING:
    from recall_gui.qt.pages.knowledge.looking_at import LookingAt


class Remembering:
    """Restores the page's widgets from the window's memory, and saves them there."""

    def __init__(
        self, looking_at: LookingAt, *, splitter: QSplitter, query_bar: QueryBar, detail: DetailPanel
    ) -> None:
        self.looking_at = looking_at
        self.splitter, self.query_bar, self.detail = splitter, query_bar, detail

    def restore(self, memory: WindowMemory) -> None:
        splitter = memory.bytes(WindowMemory.SPLITTER)
        if splitter is None or not self.splitter.restoreState(splitter):
            self.splitter.setSizes([760, 520])
        self.detail.set_monospace(bool(memory.integer(MONOSPACE_SETTING, 0)))
        limit = memory.integer(WindowMemory.LIMIT, DEFAULT_LIMIT)
        self.query_bar.limit_spin.setValue(min(max(limit, 1), MAX_LIMIT))

    def save(self, memory: WindowMemory) -> None:
        memory.set(WindowMemory.SPLITTER, self.splitter.saveState())
        memory.set(WindowMemory.LIMIT, self.query_bar.limit())
        memory.set(MONOSPACE_SETTING, int(self.detail.monospace.isChecked()))
        current = self.looking_at.current
        if current is not None and current.origin == "registry":
            memory.set(WindowMemory.DATABASE, current.name)
