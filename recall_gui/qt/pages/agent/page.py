"""The Agent view: the tool and a search as an MCP client receives them from the real server.

Everything shown here went through ``recall-gui mcp`` and the SDK's own client
(:mod:`recall_gui.mcp.probe`): the tool listing (name, description, input schema, the server's name and
protocol version), a diff between the served description and the one the description page shows, and the
raw payload of the knowledge page's current query, compared with the window's own search for the same
arguments. What the other pages hold comes from the services' drafts, never from their widgets.

The server starts when the view is first shown (or on Refresh), follows the window's registry, and stops
when the window closes. Operations are plain ``async def`` methods that tests await directly; slots start
them in their lanes (``qt/operations.py``). A failure shows inside the view, with what to do; the rest of
the window is unaffected.
"""

from __future__ import annotations

import html
import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QSplitter, QTabWidget, QVBoxLayout, QWidget

from recall_gui.core.agent_log import DescriptionVerdict, WindowAnswer, compare_payload, judge_description
from recall_gui.core.base import TOOL_NAME, RecallError, compose_description
from recall_gui.core.drafts import SearchDraft
from recall_gui.core.inspect import diff_lines
from recall_gui.core.registry import DatabaseEntry
from recall_gui.core.search import ViewScope, agent_scope_of, differences
from recall_gui.core.storage import content_sha256
from recall_gui.mcp.probe import AgentListing, AgentPayload
from recall_gui.qt.agent_server import AgentServer, ServerState, ServerTarget
from recall_gui.qt.panels.diff_view import DiffView
from recall_gui.qt.panels.status_note import StatusNote, Tone
from recall_gui.qt.panels.verdict_marks import VerdictLookup, flagged_count, given_text
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import group_box, push_button, selectable_label, text_view

if TYPE_CHECKING:
    from recall_gui.core.review import ReviewRecord

#: How long the editor must rest before the diff is recomputed.
DIFF_DELAY_MS = 300

RETRY_HINT = "Press Refresh to start the server again."

VERDICTS: dict[DescriptionVerdict, tuple[str, Tone]] = {
    DescriptionVerdict.SAME: ("The agent gets exactly what you see.", "good"),
    DescriptionVerdict.UNSAVED: (
        "Unsaved edits: the agent still gets the served description below. "
        "Save the suffix on the description page (Ctrl+S) to serve yours.",
        "warning",
    ),
    DescriptionVerdict.DIFFERENT: (
        "The server serves something else than your editor shows, and nothing is unsaved. "
        "Another program may have changed the registry or the saved suffix: press F5 to reload the registry.",
        "bad",
    ),
}


def results_of(text: str) -> list[tuple[str, str]]:
    """The id and content of each result of a payload (none when it is not the tool's JSON)."""
    try:
        results = json.loads(text).get("results", [])
        return [(str(result["id"]), str(result["content"])) for result in results]
    except (ValueError, AttributeError, TypeError, KeyError):
        return []


def pretty_json(text: str) -> str:
    """``text`` indented if it is JSON, else as it is."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


class AgentPage(QWidget):
    """``agentServerState``, ``agentRefreshButton``, ``agentError``, ``agentVerdict``, ``agentToolTabs``
    (``agentDescriptionView``, ``agentSchemaView``, ``agentToolJsonView``), ``agentDiffView``,
    ``agentCallArguments``, ``agentRunButton``, ``agentPayloadState`` and ``agentPayloadTabs``
    (``agentPayloadPretty``, ``agentPayloadRaw``, ``agentPayloadResult``)."""

    #: A listing was asked for and is shown, or its failure is.
    listingFinished = Signal()
    #: The diff and the verdict were recomputed.
    diffUpdated = Signal()
    #: The current query went through the server; its payload (or the failure) is shown.
    payloadFinished = Signal()

    def __init__(self, services: WindowServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("agentPage")
        self.services = services
        self.drafts = services.drafts
        self.server = AgentServer(services.chores, services.operations, parent=self)
        lane = services.operations.lane
        #: Listing the tools, and one call through the server (a newer one of each cancels the older);
        #: the window's own answer, awaited beside the call.
        self.listing, self.calling = lane("agent-list"), lane("agent-call")
        self.answering = lane(awaited=True)
        #: The verdicts of the results the agent got, from the database's review (shown, never filtered).
        self.verdicts = VerdictLookup(services.reviews, lane("agent-verdicts"), self._show_verdicts)
        self._given: list[tuple[str, str]] = []
        self._listing: AgentListing | None = None
        #: The last ``tools/call`` result received (``None`` before the first, or after a failed call).
        self.last_payload: AgentPayload | None = None
        #: The arguments the payload shown answered (``None`` while none is shown).
        self._payload_for: dict[str, Any] | None = None
        self._payload_note: tuple[str, Tone] = ("Not run yet.", "neutral")
        self._diff_timer = QTimer(self)
        self._diff_timer.setSingleShot(True)
        self._diff_timer.setInterval(DIFF_DELAY_MS)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("agentSplitter")
        self.splitter.setChildrenCollapsible(False)
        upper = QSplitter(Qt.Orientation.Horizontal)
        upper.setChildrenCollapsible(False)
        upper.addWidget(self._listing_box())
        upper.addWidget(self._diff_box())
        upper.setSizes([560, 700])
        self.splitter.addWidget(upper)
        self.splitter.addWidget(self._call_box())
        self.splitter.setSizes([430, 330])
        # The wrapped labels above make the page's height follow its width, counted from the splitter's
        # preferred height (its text views'): a page-wide scroll bar at 1280x800. Its least height holds.
        self.splitter.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
        self.splitter.setMinimumHeight(self.splitter.minimumSizeHint().height())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(8)
        layout.addLayout(self._server_row())
        layout.addWidget(self.error_note)
        layout.addWidget(self.splitter, 1)

        self.refresh_button.clicked.connect(self.request_listing)
        self.run_button.clicked.connect(self.request_call)
        self.server.stateChanged.connect(self._show_server_state)
        self.server.toolsChanged.connect(self.request_listing)
        self._unsubscribe = [
            self.drafts.suffix.changed.add(self._diff_timer.start),
            self.drafts.search_changed.add(self._follow_search),
        ]
        self._diff_timer.timeout.connect(self._on_editor_rested)
        self._show_server_state()
        self.update_diff()
        self._show_arguments()

    # --- layout ---------------------------------------------------------------------------------------

    def _server_row(self) -> QHBoxLayout:
        self.server_state = selectable_label("agentServerState", wrap=True)
        self.refresh_button = push_button(
            "Ref&resh", "agentRefreshButton", "List the tool again (starting the server if it is not running)"
        )
        self.error_note = StatusNote("agentError")
        self.error_note.hide()
        row = QHBoxLayout()
        row.addWidget(self.server_state, 1)
        row.addWidget(self.refresh_button)
        return row

    def _listing_box(self) -> QWidget:
        """The tool exactly as ``tools/list`` delivered it."""
        self.tool_title = QLabel("Nothing listed yet.")
        self.tool_title.setObjectName("agentToolTitle")
        self.tool_title.setTextFormat(Qt.TextFormat.RichText)
        self.description_view = text_view("agentDescriptionView", read_only=True)
        self.schema_view = text_view("agentSchemaView", read_only=True, monospace=True)
        self.tool_json_view = text_view("agentToolJsonView", read_only=True, monospace=True)
        self.tool_tabs = QTabWidget()
        self.tool_tabs.setObjectName("agentToolTabs")
        self.tool_tabs.addTab(self.description_view, "Description")
        self.tool_tabs.addTab(self.schema_view, "Input schema")
        self.tool_tabs.addTab(self.tool_json_view, "Tool JSON")
        return group_box(
            "What an MCP client receives (tools/list)", [(self.tool_title, 0), (self.tool_tabs, 1)]
        )

    def _diff_box(self) -> QWidget:
        """The served description against the editor's, and the verdict."""
        self.verdict = StatusNote("agentVerdict")
        self.diff_view = DiffView("agentDiffView")
        legend = QLabel("<b>−</b> served to agents &nbsp;&nbsp; <b>+</b> shown on the description page")
        legend.setObjectName("agentDiffLegend")
        legend.setEnabled(False)  # drawn in the palette's dim text colour
        return group_box(
            "Served description vs. the description page",
            [(self.verdict, 0), (self.diff_view, 1), (legend, 0)],
        )

    def _call_box(self) -> QWidget:
        """The knowledge page's query sent as ``tools/call``, and the payload that came back."""
        self.call_arguments = selectable_label("agentCallArguments", wrap=True)
        self.run_button = push_button(
            "R&un Through the Server",
            "agentRunButton",
            "Call recall_search on the server with the knowledge page's database, query and limit",
        )
        arguments_row = QWidget()
        row = QHBoxLayout(arguments_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.call_arguments, 1)
        row.addWidget(self.run_button)
        self.payload_state = StatusNote("agentPayloadState")
        self.payload_pretty = text_view("agentPayloadPretty", read_only=True, monospace=True)
        self.payload_raw = text_view("agentPayloadRaw", read_only=True, monospace=True)
        self.payload_result = text_view("agentPayloadResult", read_only=True, monospace=True)
        self.payload_pretty.setPlaceholderText("Run the query to see what the agent gets.")
        self.payload_tabs = QTabWidget()
        self.payload_tabs.setObjectName("agentPayloadTabs")
        self.payload_tabs.addTab(self.payload_pretty, "Payload (pretty)")
        self.payload_tabs.addTab(self.payload_raw, "Payload (raw text)")
        self.payload_tabs.addTab(self.payload_result, "MCP result")
        self.payload_state.show_note("Not run yet.", "neutral")
        self.verdicts_note = StatusNote("agentVerdicts")
        self.verdicts_note.hide()
        return group_box(
            "The current query, as the agent gets it (tools/call)",
            [(arguments_row, 0), (self.payload_state, 0), (self.verdicts_note, 0), (self.payload_tabs, 1)],
        )

    # --- the server -----------------------------------------------------------------------------------

    def target(self) -> ServerTarget:
        """The window's registry and the config dir its suffix is saved in: what the server must serve."""
        return ServerTarget(Path(self.services.location.directory), Path(self.drafts.suffix.store.directory))

    def _show_server_state(self) -> None:
        server, listing = self.server, self._listing
        command = server.command
        self.server_state.setToolTip(shlex.join([command.command, *command.args]) if command else "")
        if server.state is ServerState.STARTING:
            self.server_state.setText("Starting the MCP server (recall-gui mcp)…")
        elif server.state is ServerState.RUNNING and listing is not None:
            changes = (
                "announces tool-list changes" if listing.announces_changes else "no change announcements"
            )
            name = f"{listing.server_name or 'unnamed server'} {listing.server_version or ''}".rstrip()
            self.server_state.setText(
                f"Server: {name} · MCP {listing.protocol_version} · {changes} · "
                f"registry {server.target.registry_dir if server.target else ''}"
            )
        elif server.state is ServerState.RUNNING:
            self.server_state.setText("The MCP server is running.")
        elif server.state is ServerState.FAILED:
            self.server_state.setText("The MCP server is not available.")
            if listing is not None:
                self._forget_listing()  # show only what the server provides now
        else:
            self.server_state.setText("The MCP server starts when you open this view.")
        self._show_failure(server.error if server.state is ServerState.FAILED else None)

    def _show_failure(self, error: RecallError | None) -> None:
        if error is None:
            self.error_note.hide()
            return
        message = error.message[:1].upper() + error.message[1:]
        command = self.server.command
        run_it = (
            f" To see why, run it in a terminal: {shlex.join([command.command, *command.args])}"
            if command is not None
            else ""
        )
        message += "" if message.endswith((".", "!", "?")) else "."
        hint = f"\n{error.hint}" if error.hint else ""
        self.error_note.show_note(f"{message}\n{RETRY_HINT}{run_it}{hint}", "bad")
        self.error_note.show()

    async def refresh_listing(self) -> None:
        """Make sure the server runs for the window's registry, list its tools, show them and the diff."""
        try:
            await self.server.ensure(self.target())
            listing = await self.server.list_tools()
        except RecallError:
            pass  # the server's state shows it, with what to do
        else:
            self._listing = listing
            self._show_listing(listing)
            self._show_server_state()
            self.update_diff()
        self.listingFinished.emit()  # not when superseded: the newer listing will say it

    def _show_listing(self, listing: AgentListing) -> None:
        tool = listing.tool()
        if tool is None:
            names = ", ".join(str(t.get("name")) for t in listing.tools) or "no tool at all"
            self._clear_tool(f"The server does not list {TOOL_NAME}: it lists {html.escape(names)}.")
            return
        self.tool_title.setText(f"<b>{html.escape(str(tool.get('name')))}</b> — as listed by the server")
        self.description_view.setPlainText(str(tool.get("description", "")))
        self.schema_view.setPlainText(json.dumps(tool.get("inputSchema"), indent=2, ensure_ascii=False))
        self.tool_json_view.setPlainText(json.dumps(tool, indent=2, ensure_ascii=False))

    def _clear_tool(self, title: str) -> None:
        self.tool_title.setText(title)
        for view in (self.description_view, self.schema_view, self.tool_json_view):
            view.clear()

    def _forget_listing(self) -> None:
        self._listing = None
        self._clear_tool("Nothing listed: the server is not available.")
        self.update_diff()

    # --- the diff -------------------------------------------------------------------------------------

    def shown_description(self) -> str:
        """The description the description page shows: the default text plus the suffix agents would get
        if it were saved now (the generated list and the notes, or the override)."""
        return compose_description(self.drafts.suffix.shown)

    def update_diff(self, *, checking: bool = False) -> DescriptionVerdict | None:
        """Compare the served description with the editor's; ``None`` while nothing was listed yet.

        ``checking``: a fresh listing is on its way, so a difference nothing explains is not reported yet.
        """
        served = self._listing.description() if self._listing is not None else None
        verdict = None
        if served is None:
            self.verdict.show_note(
                "Not compared yet: the server has not listed the tool."
                if self._listing is None
                else f"Nothing to compare: the server does not list {TOOL_NAME}.",
                "neutral",
            )
            self.diff_view.show_diff((), "")
        else:
            verdict = judge_description(served, self.shown_description(), unsaved=self.drafts.suffix.dirty)
            text, tone = VERDICTS[verdict]
            if checking and verdict is DescriptionVerdict.DIFFERENT:
                text, tone = "Asking the server what it serves now…", "neutral"
            self.verdict.show_note(text, tone)
            self.diff_view.show_diff(
                diff_lines(served, self.shown_description()),
                "No difference: the served description is the one your editor shows.",
            )
        self.diffUpdated.emit()
        return verdict

    def _on_editor_rested(self) -> None:
        served = self._listing.description() if self._listing is not None else None
        unexplained = (
            served is not None
            and self.server.running
            and judge_description(served, self.shown_description(), unsaved=self.drafts.suffix.dirty)
            is DescriptionVerdict.DIFFERENT
        )
        self.update_diff(checking=unexplained)
        if unexplained:
            # Nothing unsaved, yet different: the server re-reads the files for every listing, so ask it
            # now rather than wait for its announcement (e.g. right after Save).
            self.request_listing()

    # --- the current query ----------------------------------------------------------------------------

    def current_call(self) -> tuple[DatabaseEntry | None, dict[str, Any]]:
        """The knowledge page's database, query and limit, as the arguments an agent would send: a folder
        opened by its path is called by the name the registry holds its table under, if it does."""
        search: SearchDraft = self.drafts.search
        entry = search.database
        if entry is not None:
            scope = agent_scope_of(self._view(entry, search), self.services.registry)
            entry = scope.entry if scope.entry.origin == "registry" else entry
        arguments = {"db_name": entry.name if entry else "", "query": search.query, "limit": search.limit}
        return entry, arguments

    @staticmethod
    def _view(entry: DatabaseEntry, search: SearchDraft) -> ViewScope:
        return search.view or ViewScope(entry, limit=search.limit)

    def view_differences(self) -> tuple[str, ...]:
        """How the knowledge page's view differs from the agent's scope (the latest version, no filter,
        the name an agent calls), in words; empty when it shows the agent's scope."""
        search = self.drafts.search
        if search.database is None:
            return ()
        view = self._view(search.database, search)
        scope = agent_scope_of(view, self.services.registry)
        return tuple(text for text in differences(view, scope) if not text.startswith("no agent searches"))

    def _follow_search(self) -> None:
        """The knowledge page's query changed: shown at once if this page is, else when it is shown."""
        if self.isVisible():
            self._show_arguments()

    def _show_arguments(self) -> None:
        entry, arguments = self.current_call()
        if entry is None:
            self.call_arguments.setText("No database chosen on the Knowledge base page.")
        elif entry.origin == "opened":
            self.call_arguments.setText(
                f"{entry.table_name} is opened from its folder, not registered: agents cannot search it. "
                "Add it with File ▸ Add to Agents' Databases… first."
            )
        elif not arguments["query"].strip():
            self.call_arguments.setText(f"No query typed on the Knowledge base page (database {entry.name}).")
        else:
            self.call_arguments.setText("arguments: " + json.dumps(arguments, ensure_ascii=False))
        runnable = entry is not None and entry.origin == "registry" and bool(arguments["query"].strip())
        self.run_button.setEnabled(runnable)
        if self._payload_for is None:
            return
        if self._payload_for == arguments:
            self.payload_state.show_note(*self._payload_note)
        else:  # what is below answered an earlier call: never let it read as the answer to this one
            earlier = json.dumps(self._payload_for, ensure_ascii=False)
            self.payload_state.show_note(
                f"Shown below: the payload for an earlier call ({earlier}). "
                "Run Through the Server sends the call above.",
                "neutral",
            )

    async def run_call(self, entry: DatabaseEntry, arguments: dict[str, Any]) -> None:
        """Send ``arguments`` to the server as ``tools/call`` and show the payload next to the window's own
        search for the same database, query and limit."""
        self.payload_state.show_note("Running the query through the server…", "neutral")
        try:
            await self.server.ensure(self.target())
        except RecallError as error:
            self.payload_state.show_note(f"The server is not available: {error.message}", "bad")
            self.payloadFinished.emit()
            return
        view_differences = self.view_differences()
        window = self.answering.start(
            self._window_answer(entry, arguments["query"], arguments["limit"], view_differences)
        )
        try:
            payload = await self.server.call(arguments)
        except RecallError as error:
            window.cancel()
            self.last_payload = None
            self._payload_for = None
            self.payload_state.show_note(f"The call failed: {error.message}. {RETRY_HINT}", "bad")
            for view in (self.payload_pretty, self.payload_raw, self.payload_result):
                view.clear()
            self.payloadFinished.emit()
            return
        except BaseException:
            window.cancel()
            raise
        answer = await window
        self.last_payload = payload
        self._payload_for = arguments
        self._show_payload(payload, answer, entry)
        self.payloadFinished.emit()

    async def _window_answer(
        self, entry: DatabaseEntry, query: str, limit: int, view_differences: tuple[str, ...] = ()
    ) -> WindowAnswer:
        """The window's own search for the same database, query and limit, in the agent's scope (the
        latest version, no filter: the knowledge page's very search when it shows that scope), and how
        the page's view differs from it."""
        try:
            harness = await self.services.harness()
            report = await harness.search_database(entry, query, limit)
            repeats = await harness.session.tables.id_repeats(entry.target)
        except RecallError as error:
            return WindowAnswer(error=error.message, view_differences=view_differences)
        ids = tuple(repeats.label(hit.id, content_sha256(hit.content)) for hit in report.result.hits)
        return WindowAnswer(ids=ids, view_differences=view_differences, model=report.model, repeats=repeats)

    def _show_payload(self, payload: AgentPayload, answer: WindowAnswer, entry: DatabaseEntry) -> None:
        text = payload.text
        self.payload_raw.setPlainText(text)
        self.payload_pretty.setPlainText(pretty_json(text))
        result = {"content": list(payload.content), "isError": payload.is_error}
        self.payload_result.setPlainText(json.dumps(result, indent=2, ensure_ascii=False))
        comparison = compare_payload(text, payload.is_error, answer)
        summary = comparison.summary
        if payload.is_error and not entry.active:
            summary += (
                f" {entry.name} is not active: agents cannot search it (tick it on the description page)."
            )
        kind = "Tool error (isError: true)" if payload.is_error else "Result (isError: false)"
        self._payload_note = (
            f"{kind} · {payload.elapsed_ms:.0f} ms — {summary}",
            "good" if comparison.matches else "bad",
        )
        self.payload_state.show_note(*self._payload_note)
        self._given = results_of(text) if not payload.is_error else []
        self.verdicts.follow(entry, [content for _id, content in self._given])

    def _show_verdicts(self, records: list[ReviewRecord | None]) -> None:
        text = given_text(self._given, records)
        if text:
            self.verdicts_note.show_note(text, "bad" if flagged_count(records) else "neutral")
        self.verdicts_note.setVisible(bool(text))

    # --- slots and events (thin: they read the widgets and start an operation) ------------------------

    def request_listing(self) -> None:
        self.listing.start(self.refresh_listing())

    def request_call(self) -> None:
        entry, arguments = self.current_call()
        self._show_arguments()
        if entry is None or entry.origin == "opened" or not arguments["query"].strip():
            return
        self.calling.start(self.run_call(entry, arguments))

    def follow_registry(self) -> None:
        """After the registry was read again: a server for another registry directory is replaced."""
        if self.server.state is not ServerState.STOPPED and self.server.target != self.target():
            self.request_listing()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._show_arguments()
        # Starts the server the first time; later, notices a crash or a change as soon as the user looks.
        QTimer.singleShot(0, self.request_listing)

    # --- closing --------------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """The window is closing: begin stopping the server (:meth:`aclose` waits for it)."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._diff_timer.stop()
        self.server.request_stop(closing=True)

    async def aclose(self) -> None:
        await self.server.stop()
