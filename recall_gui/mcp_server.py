"""`recall-gui mcp`: the `recall_search` tool served to any MCP client over stdio.

The server exposes exactly the tool cosh gives its own agent: the same name, input schema and description
(the default text plus the saved suffix, else the generated one), and calls answered by the same harness,
so a client receives byte for byte the JSON `recall-gui search` prints. Failures are tool errors carrying
the harness's message, in cosh's wording.

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
from pathlib import Path
from typing import Any

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

from recall_gui import __version__
from recall_gui.core.errors import RecallError
from recall_gui.core.harness import Harness
from recall_gui.core.paths import ACTIVE_FILE, DBS_FILE
from recall_gui.core.registry import load_registry
from recall_gui.core.suffix import SuffixStore, current_tool
from recall_gui.core.tool import TOOL_NAME, Recall

SERVER_NAME = "recall-gui"

#: How often the watcher looks at the registry and suffix files (three ``stat`` calls per look).
POLL_SECONDS = 0.5

logger = logging.getLogger("recall_gui.mcp")

#: What a file looked like the last time we looked: ``(inode, size, mtime_ns)``, ``None`` when absent.
#: The inode catches an atomic replace that keeps the size and lands within the same mtime tick.
Stamp = tuple[int, int, int] | None


def file_stamp(path: Path) -> Stamp:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


class ToolSource:
    """The tool as agents should see it now, read from the registry and the saved suffix."""

    def __init__(self, registry_dir: Path, suffix_store: SuffixStore | None = None) -> None:
        self.registry_dir = Path(registry_dir)
        self.suffix_store = suffix_store or SuffixStore()

    def current(self) -> Recall:
        """Read afresh: two small JSON files and a text file, cheap enough for every ``tools/list``.

        Raises ``OSError`` or ``ValueError`` when the saved suffix cannot be read (the registry never
        raises: its problems are reported and the rest is used).
        """
        return current_tool(load_registry(self.registry_dir), self.suffix_store)

    def stamps(self) -> tuple[Stamp, Stamp, Stamp]:
        return (
            file_stamp(self.registry_dir / DBS_FILE),
            file_stamp(self.registry_dir / ACTIVE_FILE),
            file_stamp(self.suffix_store.path),
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


async def call_recall_search(harness: Harness, arguments: Mapping[str, Any]) -> types.CallToolResult:
    """One tool call: the harness JSON as the only text content, or a tool error with its message.

    The agent gets the message alone, exactly as cosh's own tool reports it. The hint that comes with it
    ("activate it in the description panel", "fix the embedder in the registry") speaks to the person who
    runs the server, not to the agent, which can do neither: it goes to the log.
    """
    try:
        text = await harness.recall_search(arguments)
    except RecallError as error:
        hint = f" (hint: {error.hint})" if error.hint else ""
        logger.warning("recall_search failed: %s%s", error.message, hint)
        return types.CallToolResult(content=[types.TextContent(text=error.message)], is_error=True)
    except Exception as error:  # the boundary to the agent: a bug must not end the connection
        logger.exception("recall_search failed unexpectedly")
        message = f"recall_search failed unexpectedly: {type(error).__name__}: {error}"
        return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
    return types.CallToolResult(content=[types.TextContent(text=text)])


class RecallMcpServer:
    """The MCP server for one registry: tool listing, tool calls, change announcements."""

    def __init__(
        self,
        registry_dir: Path,
        *,
        suffix_store: SuffixStore | None = None,
        harness: Harness | None = None,
        poll_interval: float = POLL_SECONDS,
    ) -> None:
        self.source = ToolSource(registry_dir, suffix_store)
        self.harness = harness or Harness(Path(registry_dir))
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

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        try:
            recall = self.source.current()
        except (OSError, ValueError) as error:
            message = f"cannot read the saved description suffix {self.source.suffix_store.path}: {error}"
            logger.error("%s; fix or delete that file", message)
            raise MCPError(types.INTERNAL_ERROR, message) from None
        return types.ListToolsResult(tools=[mcp_tool(recall)])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name != TOOL_NAME:
            # Not a tool failure but a request for a tool that does not exist: a protocol error.
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name} (this server has {TOOL_NAME})")
        return await call_recall_search(self.harness, params.arguments or {})

    async def preload(self) -> None:
        """Load what the first ``recall_search`` needs while the client is busy elsewhere; failures are
        logged only (the first call reports them as it would have)."""
        from recall_gui.core.preload import preload

        report = await preload(self.harness)
        for name, reason in report.failed:
            logger.info("preloading %s failed (a call will say why): %s", name, reason)
        if report.warmed:
            logger.info("ready to search %s (%.1f s)", ", ".join(report.warmed), report.seconds)

    def initialization_options(self) -> InitializationOptions:
        return self.server.create_initialization_options(NotificationOptions(tools_changed=True))

    async def serve_stdio(self) -> None:
        """Serve this process's stdin and stdout until the client closes them, watching for changes."""
        try:
            async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as tasks:
                tasks.start_soon(self.watcher.run)
                if preload_wanted():
                    tasks.start_soon(self.preload)
                try:
                    await self.server.run(read_stream, write_stream, self.initialization_options())
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            await self.harness.aclose()


#: Set to 0 to have the server load nothing before the first call (the libraries and models then load
#: with it, as a fresh ``recall-gui search`` does).
PRELOAD_ENV = "RECALL_GUI_MCP_PRELOAD"


def preload_wanted() -> bool:
    return os.environ.get(PRELOAD_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def configure_logging() -> None:
    """Our messages at INFO, everyone else's at WARNING, all on stderr (``RECALL_GUI_MCP_LOG`` overrides)."""
    level = os.environ.get("RECALL_GUI_MCP_LOG", "INFO").upper()
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="recall-gui mcp: %(levelname)s: %(message)s"
    )
    logger.setLevel(level if level in logging.getLevelNamesMapping() else "INFO")


def run(registry_dir: Path, *, source: str = "") -> None:
    """Serve over this process's stdin and stdout until the client goes away."""
    configure_logging()
    where = f" ({source})" if source else ""
    logger.info("serving %s for the registry in %s%s", TOOL_NAME, registry_dir, where)
    asyncio.run(RecallMcpServer(registry_dir).serve_stdio())
