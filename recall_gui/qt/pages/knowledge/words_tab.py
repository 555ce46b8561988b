"""The *Words* tab kept in step with the searches: after a search by text, the same query by LanceDB's
full-text and hybrid search, beside the agent's results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.qt.panels.method_compare import MethodComparePanel
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.search import SearchReport
    from recall_gui.qt.pages.knowledge.looking_at import LookingAt
    from recall_gui.qt.pages.knowledge.searching import Searching


class WordsTab:
    """Fills ``panel`` with the words' answers for the last search by text of ``searching``."""

    def __init__(
        self,
        services: WindowServices,
        looking_at: LookingAt,
        *,
        searching: Searching,
        panel: MethodComparePanel,
    ) -> None:
        self.services = services
        self.looking_at = looking_at
        self.searching = searching
        self.panel = panel
        #: The same query by words and hybrid, after a search.
        self.comparing_words = services.operations.lane("words")

    def request(self, where: str) -> None:
        """After a search by text (with the metadata filter ``where``): compare its query by words."""
        report, searched = self.searching.last_report, self.searching.searched
        if report is None or searched is None or self.searching.like is not None:
            return
        self.comparing_words.start(self.compare_words(report, where))

    async def compare_words(self, report: SearchReport, where: str) -> None:
        """Fill the tab: LanceDB's full-text and hybrid answers for the query just searched."""
        entry, query, limit = report.database, report.result.query, len(report.result.hits)
        if self.looking_at.version is not None:
            self.panel.show_note("Words are compared on the latest version: open the latest to compare.")
            return
        harness = await self.services.harness()
        try:
            found = {
                method: await core.search.text_search(
                    harness, entry, query, max(limit, 1), method, where=where or None
                )
                for method in ("fts", "hybrid")
            }
        except RecallError as error:
            self.panel.show_note(error.full_text())
            return
        if self.searching.last_report is not report:
            return  # a newer search is shown
        lists = {"vector": [hit.id for hit in report.result.hits]}
        lists.update({method: [e.id for e in result.output.results] for method, result in found.items()})
        self.panel.show_lists(query, lists)
