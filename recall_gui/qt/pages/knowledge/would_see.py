"""The tools under the table for the selected entry: would the agent see it (its rank for the query,
within the limit or not), and saving the selected results as a golden check."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from recall_gui import core
from recall_gui.core.base import GoldenFileError, RecallError, SearchHit, SearchResult, quoted
from recall_gui.core.golden import GoldenCheck, check_for, place_text
from recall_gui.core.messages import UserMessage
from recall_gui.core.search import agent_scope_of, differences, same_search
from recall_gui.core.storage import content_sha256
from recall_gui.qt.panels.entry_tools import NO_QUERY, EntryTools
from recall_gui.qt.panels.query_bar import QueryBar
from recall_gui.qt.panels.results_panel import ResultsPanel
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from recall_gui.qt.pages.knowledge.looking_at import LookingAt
    from recall_gui.qt.pages.knowledge.searching import Searching


class WouldSee:
    """The verdict for the selected entry and the golden-check action, kept in step with the selection."""

    def __init__(
        self,
        services: WindowServices,
        looking_at: LookingAt,
        *,
        searching: Searching,
        entry_tools: EntryTools,
        query_bar: QueryBar,
        results: ResultsPanel,
        selected: Callable[[], object | None],
        shown: SignalInstance,
    ) -> None:
        self.services = services
        self.looking_at = looking_at
        self.searching = searching
        self.entry_tools = entry_tools
        self.query_bar = query_bar
        self.results = results
        #: The entry open in the detail now (a verdict for another one is not shown).
        self._selected = selected
        self._shown = shown
        #: Ranking the selected entry for the query (selecting another cancels it).
        self.ranking = services.operations.lane("visibility")

    def show(self, item: object) -> None:
        """The tools for ``item`` (a search hit or a browsed row; ``None``: nothing selected)."""
        tools, entry, searching = self.entry_tools, self.looking_at.current, self.searching
        searched, like = searching.searched, searching.like
        self.ranking.cancel()
        is_hit = isinstance(item, SearchHit)
        golden = is_hit and like is None and searched is not None
        tip = None if golden else "Search for a question first, then select the rows it must return"
        tools.set_enabled(
            more_like=item is not None and entry is not None, golden=golden, golden_tip=tip or ""
        )
        if item is None or entry is None:
            tools.show_verdict(NO_QUERY, "neutral")
            return
        if isinstance(item, SearchHit):
            result = self.results.results_model.result
            if result is None or item not in result.hits:
                return
            if like is not None:
                rank = result.hits.index(item) + 1
                tools.show_verdict(
                    f"{rank:,} of the entries most like “{like}”, at distance {item.distance:.4f} "
                    f"({result.metric_label}).",
                    "neutral",
                )
                return
            if self._show_in_result(item, result):
                return
            query, limit = result.query, searching.shown_limit
        else:
            typed = self.query_bar.query()
            query = typed if typed.strip() else (searched[1] if searched else "")
            limit = self.query_bar.limit()
        if getattr(item, "row_id", None) is None or not query.strip():
            tools.show_verdict(NO_QUERY, "neutral")
            return
        tools.show_verdict(f"Ranking this entry for {quoted(query)}…", "neutral")
        self.ranking.start(self.show_visibility(item, query, limit))

    def _show_in_result(self, hit: SearchHit, result: SearchResult) -> bool:
        """The verdict for a result of a search that is the agent's own (the same table, the latest
        version, no filter): its place among the results, no search needed. ``False`` when the results
        shown come from another scope, so the agent's search must be run."""
        view = self.looking_at.view(self.searching.shown_limit)
        if view is None:
            return False
        scope = agent_scope_of(view, self.services.registry)
        if not same_search(view, scope):
            return False
        place = core.search.in_result(result, hit, view.limit)
        verdict = core.search.AgentVerdict(scope, place, differences(view, scope))
        self.entry_tools.show_visibility(verdict, self.services.model_of(view.entry))
        return True

    async def show_visibility(self, item: object, query: str, limit: int) -> None:
        """Where the selected ``item`` (a browsed row or a search hit) ranks in the agent's search for
        ``query`` with ``limit``, and in the view's own when that differs; shown if it is still
        selected."""
        entry, row_id = self.looking_at.current, getattr(item, "row_id", None)
        view = self.looking_at.view(limit)
        if entry is None or view is None or row_id is None:
            return

        harness = await self.services.harness()
        try:
            entry_id, content = getattr(item, "id", ""), getattr(item, "content", "")
            shared = self.looking_at.repeats.is_shared(entry_id)
            verdict = await core.search.would_agent_see(
                harness,
                view,
                query,
                row_id,
                entry_id=entry_id,
                content_sha256=content_sha256(content) if shared else None,
            )
        except RecallError as error:
            if self._selected() is item:
                self.entry_tools.show_verdict(f"Cannot tell where it ranks: {error.message}", "warning")
                self._shown.emit()
            return
        if self._selected() is item and self.looking_at.current is entry:
            self.entry_tools.show_visibility(verdict, self.services.model_of(verdict.scope.entry))
            self._shown.emit()

    def add_golden_check(self) -> GoldenCheck | None:
        """Save the last query, with the selected result rows as the ids it must return, as a golden check
        (in the golden file the Checks page shows). Returns the check, ``None`` if there was none to add."""
        entry, searched, services = self.looking_at.current, self.searching.searched, self.services
        selected = (
            self.results.selected_items()
            if self.results.mode == "results" and self.searching.like is None
            else []
        )
        # By id, or by content where other rows share the id (an id any of them has names no entry).
        repeats = self.looking_at.repeats
        ids = tuple(
            dict.fromkeys(
                core.golden.expected_of(item.id, item.content, repeats)
                for item in selected
                if isinstance(item, SearchHit)
            )
        )
        if entry is None or searched is None or not ids:
            services.show_message(
                UserMessage(
                    "Nothing to add as a golden check.",
                    "Search for a question, select the rows the agent must get for it, then add them.",
                    "warning",
                    "search",
                )
            )
            return None

        _name, query, limit = searched
        registry = services.registry
        check = check_for(entry, registry, query, ids, limit)
        golden = services.golden
        try:
            replaced = golden.add(check)
        except GoldenFileError as error:
            services.show_message(
                UserMessage(
                    f"The golden check is kept, but not saved: {error.message}",
                    "Save the checks to another file on the Checks page (Save As…).",
                    "warning",
                )
            )
            return check
        done = "Updated" if replaced else "Added"
        entries = f"{len(ids):,} entr{'y' if len(ids) == 1 else 'ies'}"
        details = (
            f"{done} the golden check {quoted(query)} ({entries}, limit {limit}) "
            f"in {golden.path.name}, on {place_text(check, registry)}"
        )
        services.set_activity(details)
        self.entry_tools.confirm_golden(
            f"{done} in {golden.path.name}", f"{details}. The Checks page (Ctrl+5) runs it."
        )
        registered = registry.get(check.db_name) if check.db_name is not None else None
        if registered is not None and not registered.active:
            services.show_message(
                UserMessage(
                    f"{registered.name} is not active: agents cannot search it, so this check cannot run "
                    "until it is.",
                    "Activate it on the Agent's tool description page.",
                    "warning",
                )
            )
        return check
