"""The agent's-eye view: start the real MCP server and look at it through the SDK's own client.

The window's "Agent view" uses this to show what an MCP client really receives (the tool listing, and
the raw payload of a ``tools/call``), as opposed to what the app believes it serves. Nothing here is
Qt: it is plain asyncio/anyio code that any event loop running asyncio can await.

The ``mcp`` package is imported when a probe starts, not when this module is imported, so the window's
start-up does not pay for it.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Literal, cast

from recall_gui import __version__
from recall_gui.core.agent_log import WINDOW_CLIENT
from recall_gui.core.base import TOOL_NAME, RecallError

if TYPE_CHECKING:
    import anyio
    from mcp import Client
    from mcp.client.session import IncomingMessage
    from pydantic import BaseModel

#: How long one request may take; the first search also loads the embedding model.
DEFAULT_TIMEOUT = 60.0

#: The name the probe gives itself at ``initialize`` (the agent log shows it as the calls' client, and
#: tells the window's calls from agents' by it).
PROBE_CLIENT_NAME = WINDOW_CLIENT

#: How much of the server's log an error message quotes.
_LOG_TAIL_CHARS = 2000

ConnectMode = Literal["legacy", "auto"]


class AgentProbeError(RecallError):
    """The MCP server could not be started, or did not answer as a server must."""


@dataclass(frozen=True)
class ServerLaunch:
    """How to start the server: the command line an MCP client's configuration would hold."""

    command: str
    args: tuple[str, ...]
    #: The server's environment; the SDK's client puts it over a few safe variables (HOME, PATH, ...).
    env: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def for_registry(
        cls, registry_dir: Path | str | None, *, env: Mapping[str, str] | None = None
    ) -> ServerLaunch:
        """``python -m recall_gui mcp [--registry DIR]`` with this interpreter; in the packaged build,
        whose executable is the ``recall-gui`` program itself, ``recall-gui mcp [--registry DIR]``.

        By default the server inherits this process's whole environment, so it resolves the same
        config dir (the saved suffix), registry and model cache as the window.
        """
        args = ["mcp"] if getattr(sys, "frozen", False) else ["-m", "recall_gui", "mcp"]
        if registry_dir is not None:
            args += ["--registry", str(registry_dir)]
        return cls(sys.executable, tuple(args), dict(os.environ if env is None else env))


@dataclass(frozen=True)
class AgentListing:
    """``tools/list`` as the client received it, and what the server promised at the handshake."""

    #: Every tool in wire form (camelCase keys, as in ``recall-gui tool``), in the server's order.
    tools: tuple[dict[str, Any], ...]
    protocol_version: str
    server_name: str | None
    server_version: str | None
    #: Whether the server declared that it announces tool-list changes.
    announces_changes: bool

    def tool(self, name: str = TOOL_NAME) -> dict[str, Any] | None:
        return next((tool for tool in self.tools if tool.get("name") == name), None)

    def description(self, name: str = TOOL_NAME) -> str | None:
        tool = self.tool(name)
        return None if tool is None else tool.get("description")


@dataclass(frozen=True)
class AgentPayload:
    """A ``tools/call`` result as the client received it."""

    #: The content blocks in wire form, e.g. ``({"type": "text", "text": "..."},)``.
    content: tuple[dict[str, Any], ...]
    is_error: bool
    elapsed_ms: float

    @property
    def text(self) -> str:
        """The text the agent reads: its text blocks joined (recall_search sends exactly one)."""
        return "\n".join(block["text"] for block in self.content if block.get("type") == "text")


def _wire(model: BaseModel) -> dict[str, Any]:
    """A received object in its wire form: protocol key names, absent fields left out."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _leaf(error: BaseException) -> BaseException:
    """The one real error inside the exception groups anyio's task groups wrap around it."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


class AgentProbe:
    """One running server, seen through the SDK's client. Use as ``async with AgentProbe(...) as probe``.

    ``mode="legacy"`` speaks the initialize handshake, as the MCP clients in use today do; ``"auto"``
    lets the SDK negotiate, which picks the 2026-07-28 protocol with this server. Either way the probe
    counts the server's tool-list change announcements (on 2026-07-28 through a listen stream it opens).
    """

    def __init__(
        self,
        launch: ServerLaunch,
        *,
        mode: ConnectMode = "legacy",
        timeout: float = DEFAULT_TIMEOUT,
        on_tools_changed: Callable[[], None] | None = None,
    ) -> None:
        self.launch = launch
        self.mode = mode
        self.timeout = timeout
        self.on_tools_changed = on_tools_changed
        self._stack = AsyncExitStack()
        self._client: Client | None = None
        self._log: IO[str] | None = None
        self._final_log = ""
        self._changes = 0
        self._changed: anyio.Event | None = None

    # --- lifetime -----------------------------------------------------------------------------------

    async def __aenter__(self) -> AgentProbe:
        import anyio
        from mcp import Client, StdioServerParameters, stdio_client
        from mcp_types import Implementation

        self._changed = anyio.Event()
        # The server's stderr: shown in error messages, and kept after the server stopped.
        self._log = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed in _stop
        parameters = StdioServerParameters(
            command=self.launch.command, args=list(self.launch.args), env=dict(self.launch.env)
        )
        client = Client(
            stdio_client(parameters, errlog=cast("Any", self._log)),
            mode=self.mode,
            cache=None,
            read_timeout_seconds=self.timeout,
            # How the agent log tells the window's own calls from an agent's.
            client_info=Implementation(name=PROBE_CLIENT_NAME, version=__version__),
            message_handler=self._on_message,
        )
        try:
            self._client = await self._stack.enter_async_context(client)
            await self._listen_for_changes()
        except BaseException as error:
            await self._stop()
            if isinstance(error, Exception):
                raise self._failure("could not connect to the MCP server", error) from error
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._stop()

    async def _stop(self) -> None:
        """Stop the server (the SDK closes its stdin, then terminates it), then keep its log as text."""
        try:
            await self._stack.aclose()
        finally:
            self._client = None
            if self._log is not None:
                self._final_log = self._read_log(self._log)
                self._log.close()
                self._log = None

    async def _listen_for_changes(self) -> None:
        """On 2026-07-28 change announcements ride a listen stream the client must open and keep open."""
        import anyio
        from mcp.client.subscriptions import SubscriptionLost
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        client = self._require_client()
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        tasks = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(tasks.cancel_scope.cancel)
        subscription = await self._stack.enter_async_context(client.listen(tools_list_changed=True))

        async def drain() -> None:
            # Each event is also handed to the message handler, which does the counting.
            try:
                async for _event in subscription:
                    pass
            except SubscriptionLost:
                pass  # the server went away; the next request reports it

        tasks.start_soon(drain)

    async def _on_message(self, message: IncomingMessage) -> None:
        import anyio
        import mcp_types as types

        if isinstance(message, types.ToolListChangedNotification):
            self._changes += 1
            # Waiters hold the event being set; later waiters get a fresh one.
            if self._changed is not None:
                self._changed.set()
            self._changed = anyio.Event()
            if self.on_tools_changed is not None:
                self.on_tools_changed()

    # --- what an agent sees -------------------------------------------------------------------------

    async def list_tools(self) -> AgentListing:
        client = self._require_client()
        try:
            result = await client.list_tools()
        except Exception as error:
            raise self._failure("tools/list failed", error) from error
        capabilities = client.server_capabilities
        info = client.server_info
        return AgentListing(
            tools=tuple(_wire(tool) for tool in result.tools),
            protocol_version=client.protocol_version,
            server_name=info.name if info else None,
            server_version=info.version if info else None,
            announces_changes=bool(capabilities.tools and capabilities.tools.list_changed),
        )

    async def call(self, arguments: Mapping[str, Any] | None, *, tool: str = TOOL_NAME) -> AgentPayload:
        """Call ``tool`` with ``arguments`` (sent as given: ``None`` sends none at all)."""
        client = self._require_client()
        started = time.perf_counter()
        try:
            result = await client.call_tool(tool, None if arguments is None else dict(arguments))
        except Exception as error:
            raise self._failure(f"tools/call {tool} failed", error) from error
        elapsed_ms = (time.perf_counter() - started) * 1000
        return AgentPayload(tuple(_wire(block) for block in result.content), result.is_error, elapsed_ms)

    # --- change announcements -----------------------------------------------------------------------

    @property
    def changes_seen(self) -> int:
        """How many ``notifications/tools/list_changed`` arrived so far."""
        return self._changes

    async def wait_for_change(self, *, after: int) -> int:
        """Wait until more than ``after`` announcements arrived and return their count.

        Bound the wait with ``anyio.fail_after`` or ``asyncio.timeout``.
        """
        while self._changes <= after and self._changed is not None:
            await self._changed.wait()
        return self._changes

    # --- diagnostics --------------------------------------------------------------------------------

    def server_log(self) -> str:
        """What the server wrote on stderr (its log): so far while it runs, all of it after it stopped."""
        return self._final_log if self._log is None else self._read_log(self._log)

    @staticmethod
    def _read_log(log: IO[str]) -> str:
        fd = log.fileno()
        # pread leaves the file offset alone: the server writes through the same open file description.
        return os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", errors="replace")

    def _require_client(self) -> Client:
        if self._client is None:
            raise AgentProbeError(
                "the agent probe is not connected", hint="Use it as `async with AgentProbe(...)`."
            )
        return self._client

    def _failure(self, doing: str, error: Exception) -> Exception:
        """An :class:`AgentProbeError` saying what failed, quoting the end of the server's log."""
        leaf = _leaf(error)
        if isinstance(leaf, AgentProbeError):
            return leaf
        if not isinstance(leaf, Exception):
            return error
        error = leaf
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
            detail = "the server closed the connection (did it exit?)"
        elif isinstance(error, MCPError):
            detail = f"{error.message} (MCP error {error.code})"
        elif isinstance(error, TimeoutError):
            detail = f"no answer within {self.timeout:g} s"
        elif isinstance(error, OSError):
            detail = f"cannot run {self.launch.command}: {error.strerror or error}"
        else:
            detail = f"{type(error).__name__}: {error}"
        log = self.server_log().strip()
        hint = f"The server's log ends with:\n{log[-_LOG_TAIL_CHARS:]}" if log else None
        return AgentProbeError(f"{doing}: {detail}", hint=hint)


async def probe_listing(
    registry_dir: Path | str | None, *, mode: ConnectMode = "legacy", env: Mapping[str, str] | None = None
) -> AgentListing:
    """Start a server for ``registry_dir``, list its tools as a client, stop it."""
    async with AgentProbe(ServerLaunch.for_registry(registry_dir, env=env), mode=mode) as probe:
        return await probe.list_tools()


async def probe_call(
    registry_dir: Path | str | None,
    arguments: Mapping[str, Any],
    *,
    mode: ConnectMode = "legacy",
    env: Mapping[str, str] | None = None,
) -> AgentPayload:
    """Start a server for ``registry_dir``, call recall_search once as a client, stop it."""
    async with AgentProbe(ServerLaunch.for_registry(registry_dir, env=env), mode=mode) as probe:
        return await probe.call(arguments)


__all__ = [
    "AgentListing",
    "AgentPayload",
    "AgentProbe",
    "AgentProbeError",
    "ServerLaunch",
    "probe_call",
    "probe_listing",
]
