"""The knowledge page and the review of entries: each search result marked with its entry's verdict (wrong
and outdated flagged), and the Review page opened at the selected entry (Ctrl+Shift+R)."""

from __future__ import annotations

from PySide6.QtCore import SignalInstance

from recall_gui import core
from recall_gui.core.registry import DatabaseEntry
from recall_gui.core.storage import content_sha256
from recall_gui.qt.pages.knowledge.looking_at import LookingAt
from recall_gui.qt.panels.entry_tools import EntryTools
from recall_gui.qt.panels.results_panel import ResultsPanel
from recall_gui.qt.panels.verdict_marks import VerdictLookup, marks_of
from recall_gui.qt.services import WindowServices


class ReviewLinks:
    """Verdicts beside the results, and "Review from here"."""

    def __init__(
        self,
        services: WindowServices,
        looking_at: LookingAt,
        results: ResultsPanel,
        tools: EntryTools,
        finished: SignalInstance,
    ) -> None:
        self.services = services
        self.looking_at = looking_at
        self.results = results
        model = results.results_model
        self.verdicts = VerdictLookup(
            services.reviews,
            services.operations.lane("knowledge-verdicts"),
            lambda records: model.set_verdicts(marks_of(records)),
        )
        #: The entry selected in the results or the browsed rows.
        self.item: object | None = None
        finished.connect(self.follow_results)
        results.entrySelected.connect(self._on_selected)
        tools.reviewRequested.connect(self.review_selected)

    def follow_results(self) -> None:
        """Look up the verdicts of the results shown."""
        result = self.results.results_model.result
        texts = [hit.content for hit in result.hits] if result is not None else []
        self.verdicts.follow(self.looking_at.current, texts)

    def _on_selected(self, item: object) -> None:
        self.item = item

    def reviewed_entry(self) -> DatabaseEntry | None:
        """The registered database the rows shown come from (a folder opened by its path counts when it is
        registered); ``None`` when it is not registered: its verdicts would have no database's name."""
        entry = self.looking_at.current
        if entry is None or entry.origin == "registry":
            return entry
        scope = core.search.agent_scope_of(core.search.ViewScope(entry), self.services.registry)
        return scope.entry if scope.opened_as_registered else None

    def review_selected(self) -> None:
        """Open the Review page at the selected entry."""
        item, entry = self.item, self.reviewed_entry()
        content = getattr(item, "content", None)
        if item is None or not isinstance(content, str):
            self.services.set_activity("Select an entry to review from it")
            return
        if entry is None:
            self.services.set_activity(
                "Only a registered database is reviewed: add this table to agents' databases first "
                "(File ▸ Add to Agents' Databases)"
            )
            return
        row_id = getattr(item, "row_id", None)
        row = row_id if isinstance(row_id, int) else None
        self.services.navigation.review_entry(entry, row, content_sha256(content))
