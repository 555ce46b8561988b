"""`recall-gui mcp`: the `recall_search` tool served to any MCP client over stdio.

The server exposes exactly the tool cosh gives its own agent: the same name, input schema and description
(the default text plus the suffix: the generated database list and the user's notes, or their override),
and calls answered by the same harness, so a client receives byte for byte the JSON `recall-gui search`
prints. Failures are tool errors carrying the harness's message, in cosh's wording.

The tool is re-read from disk for every ``tools/list``, so a suffix saved in the window or a registry
changed by cosh is served without a restart. A small watcher polls the stamps of those files and tells
connected clients that the tool list changed: with ``notifications/tools/list_changed`` on a
handshake-era connection, and through ``subscriptions/listen`` streams on a 2026-07-28 one.

stdout belongs to the protocol: everything this module says goes to the log on stderr.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from recall_gui import __version__, core
from recall_gui.core.agent_log import CallLog, CallRecord, now_iso
from recall_gui.core.base import (
    ACTIVE_FILE,
    DBS_FILE,
    TOOL_NAME,
    Recall,
    RecallError,
    cache_problem,
    masked,
    printable,
    recordable,
)
from recall_gui.core.embedders import ModelInfo
from recall_gui.core.registry import (
    FileStamp,
    Registry,
    SuffixStore,
    SuffixWarning,
    load_registry,
    served_tool,
)
from recall_gui.core.search import Harness
from recall_gui.core.storage import content_sha256
from recall_gui.mcp.wire import AnsweringStdin, RefusedCall

SERVER_NAME = "recall-gui"

#: How often the watcher looks at the registry and suffix files (five ``stat`` calls per look).
POLL_SECONDS = 0.5

logger = logging.getLogger("recall_gui.mcp")


class ToolSource:
    """The tool as agents should see it now, read from the registry and the saved suffix."""

    def __init__(
        self, registry_dir: Path, suffix_store: SuffixStore | None = None, registry: Registry | None = None
    ) -> None:
        self.registry_dir = Path(registry_dir)
        self.suffix_store = suffix_store or SuffixStore()
        self._registry = registry
        self._logged: tuple[SuffixWarning, ...] = ()

    def registry(self) -> Registry:
        """The registry snapshot, read again when its files changed (a large one takes long to read)."""
        if self._registry is None or self._registry.changed_on_disk():
            self._registry = load_registry(self.registry_dir)
        return self._registry

    def current(self) -> Recall:
        """The tool from the registry as it is on disk now and the saved notes, for every ``tools/list``.

        Never fails over the user's settings: a suffix file that cannot be read leaves the generated
        database list served, and goes to the log with every other warning about what agents are told
        (once, until the warnings change).
        """
        served = served_tool(self.registry(), self.suffix_store)
        warnings = served.warnings()
        if warnings != self._logged:
            for warning in warnings:
                hint = f" (hint: {warning.hint})" if warning.hint else ""
                logger.warning("%s%s", warning.message, hint)
            self._logged = warnings
        return served.tool

    def stamps(self) -> tuple[FileStamp, ...]:
        return (
            FileStamp.of(self.registry_dir / DBS_FILE),
            FileStamp.of(self.registry_dir / ACTIVE_FILE),
            *(FileStamp.of(path) for path in self.suffix_store.paths()),
        )


class ToolWatcher:
    """Notices that the served tool changed: file stamps say when to look, the tool itself says whether.

    A registry rewrite that leaves the description alone (or one hidden behind a saved suffix) changes
    the stamps but not the tool, and announces nothing. The stamps are read before the tool, so a write
    racing a look is always seen by the next one.
    """

    def __init__(
        self,
        source: ToolSource,
        announce: Callable[[], Awaitable[None]],
        *,
        interval: float = POLL_SECONDS,
    ) -> None:
        self.source = source
        self.announce = announce
        self.interval = interval
        self._stamps = source.stamps()
        self._tool = self._read_tool()

    def _read_tool(self) -> dict[str, Any] | None:
        """The tool in wire form, or ``None`` while it cannot be read (that is logged, and a change too)."""
        try:
            return self.source.current().to_mcp()
        except (OSError, ValueError) as error:
            logger.warning("cannot read the tool description: %s", error)
            return None

    def check(self) -> bool:
        """True when the tool differs from the one seen at the previous change (or at start)."""
        stamps = self.source.stamps()
        if stamps == self._stamps:
            return False
        self._stamps = stamps
        tool = self._read_tool()
        if tool == self._tool:
            return False
        self._tool = tool
        return True

    async def run(self) -> None:
        while True:
            await anyio.sleep(self.interval)
            if self.check():
                logger.info("the tool description changed; telling clients")
                await self.announce()


class ListChangedAnnouncer:
    """Tells connected clients that the tool list changed, as their protocol era allows.

    Handshake-era clients get ``notifications/tools/list_changed`` on the connection once they have sent
    ``notifications/initialized``. 2026-07-28 clients receive it only on a ``subscriptions/listen`` stream
    they opened, so the change is also published on the bus those streams read. The announcer is a
    server middleware because that is where the SDK hands out the connection's session.
    """

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self._sessions: list[ServerSession] = []

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized" and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._sessions.append(ctx.session)
        return result

    async def announce(self) -> None:
        await self.bus.publish(ToolsListChanged())
        for session in self._sessions:
            await session.send_tool_list_changed()


def mcp_tool(recall: Recall) -> types.Tool:
    return types.Tool.model_validate(recall.to_mcp())


@dataclass(frozen=True)
class CallFacts:
    """What the agent log keeps of a call's outcome besides its arguments."""

    result_ids: tuple[str, ...] = ()
    error: str | None = None
    embed_ms: float | None = None
    search_ms: float | None = None
    table_version: int | None = None
    #: What embedded the query (not recorded in the agent log; the server's log names a stand-in).
    model: ModelInfo | None = None
    #: The sha256 of each result's content (entries that share an id are told apart by it).
    result_sha256: tuple[str, ...] = ()


async def answer_call(
    harness: Harness, arguments: Mapping[str, Any]
) -> tuple[types.CallToolResult, CallFacts]:
    """One tool call: the harness JSON as the only text content, or a tool error with its message; and
    the facts the agent log records of it.

    The agent gets the message alone, exactly as cosh's own tool reports it. The hint that comes with it
    ("activate it in the description panel", "fix the embedder in the registry") speaks to the person who
    runs the server, not to the agent, which can do neither: it goes to the log.
    """
    try:
        report = await harness.run(arguments)
    except RecallError as error:
        hint = f" (hint: {error.hint})" if error.hint else ""
        logger.warning("recall_search failed: %s%s", error.message, hint)
        failed = types.CallToolResult(content=[types.TextContent(text=error.message)], is_error=True)
        return failed, CallFacts(error=error.message)
    except Exception as error:  # the boundary to the agent: a bug must not end the connection
        logger.exception("recall_search failed unexpectedly")
        message = masked(f"recall_search failed unexpectedly: {type(error).__name__}: {error}")
        failed = types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
        return failed, CallFacts(error=message)
    result = report.result
    facts = CallFacts(
        tuple(hit.id for hit in result.hits),
        None,
        report.embed_ms,
        result.search_ms,
        result.table_version,
        report.model,
        tuple(content_sha256(hit.content) for hit in result.hits),
    )
    return types.CallToolResult(content=[types.TextContent(text=report.to_json())]), facts


async def call_recall_search(harness: Harness, arguments: Mapping[str, Any]) -> types.CallToolResult:
    """One tool call's result, as the agent receives it (see :func:`answer_call`)."""
    return (await answer_call(harness, arguments))[0]


def call_record(
    ctx: ServerRequestContext[Any, Any], received: str, params: types.CallToolRequestParams, facts: CallFacts
) -> CallRecord:
    """The agent log's record of one call: the client as it named itself at ``initialize`` (or in a
    2026-07-28 request's envelope), the arguments as received (but for what nests too deeply to read
    back), and the outcome."""
    client = ctx.session.client_params.client_info if ctx.session.client_params is not None else None
    return CallRecord(
        time=received,
        client=client.name if client is not None else None,
        client_version=client.version if client is not None else None,
        tool=params.name,
        arguments=recordable(params.arguments),
        result_ids=facts.result_ids,
        error=facts.error,
        embed_ms=facts.embed_ms,
        search_ms=facts.search_ms,
        table_version=facts.table_version,
        result_sha256=facts.result_sha256,
    )


def refused_call_record(call: RefusedCall, client: tuple[str | None, str | None]) -> CallRecord:
    """The agent log's record of a ``tools/call`` answered before the tool (params it cannot read)."""
    return CallRecord(
        time=now_iso(),
        client=client[0],
        client_version=client[1],
        tool=call.tool,
        arguments=call.arguments,
        error=call.error,
    )


class RecallMcpServer:
    """The MCP server for one registry: tool listing, tool calls, change announcements."""

    def __init__(
        self,
        registry_dir: Path,
        *,
        suffix_store: SuffixStore | None = None,
        harness: Harness | None = None,
        poll_interval: float = POLL_SECONDS,
        call_log: CallLog | None = None,
    ) -> None:
        self.harness = harness or Harness(Path(registry_dir))
        same_registry = self.harness.registry_dir == Path(registry_dir)
        self.source = ToolSource(registry_dir, suffix_store, self.harness.registry if same_registry else None)
        #: Where calls are recorded (the settings beside the saved notes say whether).
        self.call_log = call_log or CallLog.for_server(self.source.suffix_store.directory)
        self.announcer = ListChangedAnnouncer()
        self.watcher = ToolWatcher(self.source, self.announcer.announce, interval=poll_interval)
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=__version__,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self.announcer.bus),
        )
        self.server.middleware.append(self.announcer)
        self._stand_ins_said: set[str] = set()

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        try:
            recall = self.source.current()
        except (OSError, ValueError) as error:
            message = f"cannot read the description suffix in {self.source.suffix_store.directory}: {error}"
            logger.error("%s; fix or delete that file", message)
            raise MCPError(types.INTERNAL_ERROR, message) from None
        return types.ListToolsResult(tools=[mcp_tool(recall)])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        received = now_iso()
        if params.name != TOOL_NAME:
            # Not a tool failure but a request for a tool that does not exist: a protocol error.
            message = f"Unknown tool: {params.name} (this server has {TOOL_NAME})"
            self._record(call_record(ctx, received, params, CallFacts(error=message)))
            raise MCPError(types.INVALID_PARAMS, message)
        result, facts = await answer_call(self.harness, params.arguments or {})
        self._record(call_record(ctx, received, params, facts))
        if facts.model is not None:
            self._say_stand_in(facts.model)
        return result

    def _say_stand_in(self, model: ModelInfo) -> None:
        """A stand-in model goes to the log once per model: its answers may differ from cosh's own."""
        note = model.note()
        if note is not None and model.name not in self._stand_ins_said:
            self._stand_ins_said.add(model.name)
            logger.warning("%s", note)

    def _record(self, record: CallRecord) -> None:
        """Hand the call to the agent log, whose thread writes it: the reply does not wait for the disk,
        and nothing the log does can fail the call."""
        try:
            self.call_log.submit(record)
        except Exception:
            logger.exception("cannot hand the call to the agent log")

    async def preload(self) -> None:
        """Load what the first ``recall_search`` needs while the client is busy elsewhere; failures are
        logged only (the first call reports them as it would have)."""
        report = await core.search.preload(self.harness)
        for name, reason in report.failed:
            logger.info("preloading %s failed (a call will say why): %s", name, reason)
        if report.warmed:
            logger.info("ready to search %s (%.1f s)", ", ".join(report.warmed), report.seconds)

    def initialization_options(self) -> InitializationOptions:
        return self.server.create_initialization_options(NotificationOptions(tools_changed=True))

    async def serve_stdio(self) -> None:
        """Serve this process's stdin and stdout until the client closes them, watching for changes.

        Lines the SDK cannot read are answered in front of it (see :mod:`recall_gui.mcp.wire`); the
        transport only iterates what it is given as stdin.
        """
        stdin = AnsweringStdin(
            anyio.wrap_file(sys.stdin.buffer),
            on_refused_call=lambda call: self._record(refused_call_record(call, stdin.client)),
        )
        try:
            async with (
                stdio_server(stdin=cast("anyio.AsyncFile[str]", stdin)) as (read_stream, write_stream),
                anyio.create_task_group() as tasks,
            ):
                stdin.attach(write_stream)
                tasks.start_soon(self.watcher.run)
                if preload_wanted():
                    tasks.start_soon(self.preload)
                try:
                    await self.server.run(read_stream, write_stream, self.initialization_options())
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            await self.harness.aclose()
            await anyio.to_thread.run_sync(self.call_log.close)


#: Set to 0 to have the server load nothing before the first call (the libraries and models then load
#: with it, as a fresh ``recall-gui search`` does).
PRELOAD_ENV = "RECALL_GUI_MCP_PRELOAD"


def preload_wanted() -> bool:
    return os.environ.get(PRELOAD_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


class PrintableFormatter(logging.Formatter):
    """Each message on one line with its control characters escaped: names and queries come from
    agents and the registry, and must neither drive the terminal nor forge log lines (a traceback
    after the message keeps its lines). A password in an address is masked, here and in tracebacks."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return printable(masked(super().formatMessage(record)))

    def formatException(self, ei: Any) -> str:
        return masked(super().formatException(ei))


def configure_logging() -> None:
    """Our messages at INFO, everyone else's at WARNING, all on stderr (``RECALL_GUI_MCP_LOG`` overrides)."""
    level = os.environ.get("RECALL_GUI_MCP_LOG", "INFO").upper()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(PrintableFormatter("recall-gui mcp: %(levelname)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    logger.setLevel(level if level in logging.getLevelNamesMapping() else "INFO")


def run(registry_dir: Path, *, source: str = "") -> None:
    """Serve over this process's stdin and stdout until the client goes away."""
    configure_logging()
    where = f" ({source})" if source else ""
    logger.info("serving %s for the registry in %s%s", TOOL_NAME, registry_dir, where)
    cache = cache_problem()
    if cache is not None:
        logger.warning("%s", cache)
    server = RecallMcpServer(registry_dir)
    logger.info("%s", server.call_log.describe())
    asyncio.run(server.serve_stdio())
