"""Searching the current database as the agent does, and for entries like a selected one: the newest
search wins, the status bar shows what the last one took, and its results stay marked when the limit
changes after it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QLabel

from recall_gui import core
from recall_gui.core.base import DEFAULT_LIMIT, MAX_QUERY_CHARS, RecallError, SearchHit, plural, quoted
from recall_gui.core.messages import UserMessage
from recall_gui.core.storage import IdRepeats, content_sha256
from recall_gui.qt.panels.query_bar import QueryBar
from recall_gui.qt.panels.results_panel import ResultsPanel
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import ElidedLabel

if TYPE_CHECKING:
    from recall_gui.core.embedders import ReadExtent
    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.search import SearchReport
    from recall_gui.core.session import Session
    from recall_gui.core.storage import TableTarget
    from recall_gui.qt.operations import Lane
    from recall_gui.qt.pages.knowledge.looking_at import LookingAt
    from recall_gui.qt.scope.inputs import Inputs


def short_method(method: str) -> str:
    """How a search ranked, in a word or two: "all rows compared", "flat scan", "index IVF_PQ"."""
    if method.startswith("index:"):
        return f"index {method.removeprefix('index:')}"
    return {"exact": "all rows compared", "flat": "flat scan"}.get(method, method)


@dataclass(frozen=True)
class Found:
    """A search's answer as the page shows it: the report, why it is empty (if it is), the ids the
    table's rows share, and how much of the query the model read (``None``: not known)."""

    report: SearchReport
    empty: str | None
    repeats: IdRepeats
    query_read: ReadExtent | None


async def shared_ids(session: Session, target: TableTarget) -> IdRepeats:
    """The ids ``target``'s rows share; none known when they cannot be read (the search itself stands)."""
    try:
        return await session.tables.id_repeats(target)
    except RecallError:
        return IdRepeats()


async def query_read(session: Session, entry: DatabaseEntry, query: str) -> ReadExtent | None:
    """How much of ``query`` ``entry``'s model reads (``None`` for a cloud model, or a model not here),
    measured on the session's compute thread."""
    try:
        reading = await session.models.reading(entry.embedder)
    except RecallError:
        return None
    if reading is None:
        return None
    return await asyncio.get_running_loop().run_in_executor(session.compute_executor, reading.extent, query)


class Searching:
    """The search lane of the page (searches, "more like this"; browsing and choosing supersede it) and
    the status bar's account of the last search."""

    def __init__(
        self,
        services: WindowServices,
        looking_at: LookingAt,
        *,
        query_bar: QueryBar,
        results: ResultsPanel,
        browse: Callable[[Inputs], Coroutine[Any, Any, None]],
        finished: SignalInstance,
    ) -> None:
        self.services = services
        self.looking_at = looking_at
        self.query_bar = query_bar
        self.results = results
        self._browse = browse
        self._finished = finished
        #: The search lane: a search, "more like this", browsing, opening a version or an entry; a newer
        #: request cancels the one running and supersedes what it would show.
        self.lane = services.operations.lane("search", topic="search", show_busy=self._show_busy)
        #: The caption of the search results shown and the limit they were asked with.
        self.results_caption: tuple[str, int] | None = None
        #: The last search by text shown in this database: (database, query, limit).
        self.searched: tuple[str, str, int] | None = None
        #: The results shown: the limit they were asked with, and the entry they are "more like" (if so:
        #: its id, or ``content·3f2a9c1e`` where other rows share it).
        self.shown_limit = DEFAULT_LIMIT
        self.like: str | None = None
        #: The search whose results are shown (the map rings them), if the table shows results.
        self.last_report: SearchReport | None = None
        self.status_labels = self._status_labels()

    def shown_search(self) -> tuple[SearchReport, int] | None:
        """The search whose results are shown and the limit it asked with (what an export says)."""
        report, searched = self.last_report, self.searched
        return None if report is None or searched is None else (report, searched[2])

    def _show_busy(self, text: str | None) -> None:
        self.query_bar.set_busy(text is not None)
        self.services.set_activity(text or "Ready")

    # --- the status bar ---------------------------------------------------------------------------------

    def _status_labels(self) -> list[QLabel]:
        """Result count, embedding time, search time and model of the last search (for the status bar)."""
        self.status_count = QLabel()
        self.status_count.setObjectName("statusCount")
        self.status_embed = QLabel()
        self.status_embed.setObjectName("statusEmbed")
        self.status_search = ElidedLabel()
        self.status_search.setObjectName("statusSearch")
        self.status_model = ElidedLabel()
        self.status_model.setObjectName("statusModel")
        return [self.status_count, self.status_embed, self.status_search, self.status_model]

    def show_status(self, report: SearchReport | None) -> None:
        if report is None:
            for label in self.status_labels:
                label.clear()
            return
        # Short texts, the rest in their tooltips: the status bar of an 800-pixel window must hold all four
        # (and what is added to it) without cutting any to a few letters.
        result = report.result
        self.status_count.setText(plural(len(result.hits), "result"))
        self.status_embed.setText(f"Embedding {report.embed_ms:.1f} ms")
        self.status_search.setText(f"Search {result.search_ms:.1f} ms, {short_method(result.method)}")
        how = f"{result.method_label}, {result.metric_label}"
        self.status_search.setToolTip(how + (f"\n{result.note}" if result.note else ""))
        model = report.model
        if model is None:  # a stored vector, not a model's
            self.status_model.setText(f"Model: none ({report.model_used})")
            self.status_model.setToolTip(f"total {report.total_ms:.1f} ms")
            return
        self.status_model.setText(f"Model: {'exact' if model.exact else 'STAND-IN'}")
        about = model.note() or f"The agent's own model: {model.source}."
        self.status_model.setToolTip(
            f"{about}\n{report.database.embedder.label} — total {report.total_ms:.1f} ms"
        )

    # --- searching --------------------------------------------------------------------------------------

    def search(self, inputs: Inputs) -> asyncio.Task[Any] | None:
        """Run the agent's search on the current database in the search lane (cancelling the request
        running there); an empty query browses instead. ``None``: no database to search."""
        entry = self._entry_to_search()
        if entry is None:
            return None
        if not inputs.query.strip():
            return self.lane.start(self._browse(inputs))
        find, busy, success, failure = self._search_request(entry, inputs)
        return self.lane.run(find, busy=busy, success=success, failure=failure)

    async def search_within(self, inputs: Inputs) -> None:
        """:meth:`search` as the last step of a request already running in a lane (opening a version,
        choosing a database): in its task, so cancelling that request cancels the search."""
        entry = self._entry_to_search()
        if entry is None:
            return
        if not inputs.query.strip():
            await self._browse(inputs)
            return
        find, busy, success, failure = self._search_request(entry, inputs)
        await self.lane.run_within(find, busy=busy, success=success, failure=failure)

    def _entry_to_search(self) -> DatabaseEntry | None:
        entry = self.looking_at.current
        if entry is None:
            self.services.show_message(
                UserMessage(
                    "Choose a database first.",
                    "Pick one in the Database list (F5 reloads it).",
                    "warning",
                    "search",
                )
            )
        return entry

    def _search_request(
        self, entry: DatabaseEntry, inputs: Inputs
    ) -> tuple[
        Callable[[], Coroutine[Any, Any, Found]],
        str,
        Callable[[Found], None],
        Callable[[RecallError], None],
    ]:
        """The search of ``inputs`` in ``entry``: what it runs, says while it runs, shows, and shows
        when it fails."""
        services, query, limit = self.services, inputs.query, inputs.limit
        self.results_caption = None
        version = self.looking_at.version

        async def find() -> Found:
            harness = await services.harness()
            where = inputs.where or None
            report = await harness.search_database(entry, query, limit, where=where, version=version)
            session = harness.session
            repeats = await shared_ids(session, entry.target.at(version))
            read = await query_read(session, entry, query)
            if report.result.hits:
                return Found(report, None, repeats, read)
            try:
                why = await core.tables.why_empty(session, entry.target.at(version), where)
            except RecallError:  # the search succeeded: not knowing why it found nothing is no failure
                why = None
            return Found(report, why, repeats, read)

        def failed(error: RecallError) -> None:
            self.show_status(None)
            self.results.show_result(
                None, f"The search in {entry.name} failed: {error.message}", "No results."
            )
            self._finished.emit()

        def found(outcome: Found) -> None:
            self._show_found(entry, inputs, outcome)

        return find, f"Searching {entry.name}…", found, failed

    def _show_found(self, entry: DatabaseEntry, inputs: Inputs, found: Found) -> None:
        services, query, limit = self.services, inputs.query, inputs.limit
        report, empty = found.report, found.empty
        services.dismiss("search")
        if len(query) >= MAX_QUERY_CHARS:
            services.show_message(
                UserMessage(
                    f"The query box holds at most {MAX_QUERY_CHARS:,} characters: a longer paste is cut "
                    "there, and these results are for the text it holds.",
                    "Embedding models read only the start of a long query (the line under the query box "
                    "says where this one stopped), so the results are the same as for the whole text.",
                    "info",
                    "search",
                )
            )
        if report.result.note:
            services.show_message(
                UserMessage(
                    f"Searched with {report.result.method_label}: {report.result.note}.",
                    None,
                    "info",
                    "search",
                )
            )

        hits = len(report.result.hits)
        scope = self.looking_at.scope(inputs)
        caption = f"{plural(hits, 'result')} for {quoted(query)} in {entry.name}{scope}"
        copies = core.golden.copies_of_earlier(report.result.hits)
        if copies:
            distinct = hits - len(copies)
            caption += f" · {distinct:,} distinct (≈ n: a near-copy of result n)"
        self.searched, self.shown_limit, self.like = (entry.name, query, limit), limit, None
        self.looking_at.where = inputs.where or None
        self.last_report = report
        self.looking_at.repeats = found.repeats
        self.results.show_result(report.result, caption, empty, copies=copies, repeats=found.repeats)
        self.query_bar.show_reading(found.query_read, query)
        self.results_caption = (caption, limit)
        self.on_limit_changed(self.query_bar.limit())  # changed while it searched
        self.show_status(report)
        self._finished.emit()

    def more_like_this(self, item: object, limit: int) -> asyncio.Task[bool] | None:
        """Search the current database with ``item``'s stored vector and show the entries most like it, in
        the search lane. ``None``: no database to search."""
        entry, services = self.looking_at.current, self.services
        if entry is None:
            return None

        async def find() -> tuple[SearchHit, SearchReport, IdRepeats]:
            hit: SearchHit | None = item if isinstance(item, SearchHit) else None
            row_id = getattr(item, "row_id", None)
            if (hit is None or hit.vector is None) and row_id is not None:
                hit = await core.tables.fetch_row(await services.session(), entry.target, row_id)
            if hit is None:
                raise RecallError("the selected entry is no longer in the table", hint="Browse it again.")
            session = await services.session()
            repeats = await shared_ids(session, entry.target)
            name = repeats.label(hit.id, content_sha256(hit.content))
            report = await core.search.more_like(await services.harness(), entry, hit, limit, name)
            return hit, report, repeats

        def found(outcome: tuple[SearchHit, SearchReport, IdRepeats]) -> None:
            hit, report, repeats = outcome
            services.dismiss("search")
            count = len(report.result.hits)
            name = repeats.label(hit.id, content_sha256(hit.content))
            caption = (
                f"{count:,} entr{'y' if count == 1 else 'ies'} most like {quoted(name)} in {entry.name} "
                "(searched with its stored vector)"
            )
            self.shown_limit, self.like = limit, name
            self.results_caption = None  # Enter searches the query box, not more like this entry
            self.looking_at.repeats = repeats
            self.results.show_result(report.result, caption, repeats=repeats)
            self.show_status(report)
            self._finished.emit()

        return self.lane.run(
            find,
            busy=f"Searching {entry.name} for entries like the selected one…",
            success=found,
            failure=lambda _error: self._finished.emit(),
        )

    def cancel(self, *also: Lane) -> bool:
        """Stop the running search (Esc), and what runs in ``also`` (choosing a database); its results will
        never be shown. ``False`` if none was running."""
        stopped = self.lane.cancel()
        for lane in also:
            stopped = lane.cancel() or stopped
        if not (stopped or self.lane.busy):
            return False
        self.lane.supersede()
        self.lane.set_busy(None)
        self.services.set_activity("Search cancelled")
        return True

    # --- the limit ----------------------------------------------------------------------------------------

    def on_limit_changed(self, limit: int) -> None:
        """Results found with another limit say so: they are not what the agent would get now."""
        if self.results_caption is None or self.results.mode != "results":
            return
        caption, searched_with = self.results_caption
        if limit != searched_with:
            caption += f" — the limit is now {limit:,}: press Enter to search again"
        self.results.set_caption(caption)

    def on_limit_refused(self, why: str) -> None:
        self.services.show_message(
            UserMessage(why, "Type a whole number in that range (cosh's default is 5).", "warning", "search")
        )
