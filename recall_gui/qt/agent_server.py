"""The window's own MCP server: ``recall-gui mcp`` started as a subprocess and seen through the agent probe.

One server runs per window, for the window's registry and config dir (so it serves the suffix the window
saves). It lives on the qasync loop: a holder task enters the probe and stays inside it until it is told
to stop, because the SDK's client must be left by the same task that entered it (both it and the shared
start run in an awaited lane of the window's operations: their outcome is for whoever awaits them).
Requests come from other tasks and go through the open probe. Nothing here blocks the GUI thread: even the
SDK's import (about a second) happens on the background thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from recall_gui.core.base import CONFIG_ENV, RecallError
from recall_gui.mcp.probe import AgentListing, AgentPayload, AgentProbe, AgentProbeError, ServerLaunch
from recall_gui.qt.operations import Operations

log = logging.getLogger(__name__)

#: What the probe imports when it starts; imported on the background thread first.
CLIENT_MODULES = ("anyio", "mcp", "mcp.client.subscriptions", "mcp.shared.exceptions", "mcp_types.version")

#: The SDK bounds its own shutdown (stdin closed, a grace period, then a kill); this only guards a hang.
STOP_TIMEOUT_S = 30.0


class ServerState(Enum):
    STOPPED = "stopped"
    STARTING = "starting"
    RUNNING = "running"
    #: It could not start, or a request to it failed (it may have exited); the next start replaces it.
    FAILED = "failed"


@dataclass(frozen=True)
class ServerTarget:
    """What a server is started for: a registry, and the config dir holding the saved suffix."""

    registry_dir: Path
    config_dir: Path


def launch_for(target: ServerTarget) -> ServerLaunch:
    """``python -m recall_gui mcp --registry DIR`` with this process's environment, pointed at the
    window's config dir, so the server resolves the same saved suffix, model cache and settings."""
    env = {**os.environ, CONFIG_ENV: str(target.config_dir)}
    return ServerLaunch.for_registry(target.registry_dir, env=env)


def _import_client() -> None:
    for name in CLIENT_MODULES:
        importlib.import_module(name)


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a future's exception as seen: whoever awaited it may have been cancelled meanwhile."""
    if not future.cancelled():
        future.exception()


class AgentServer(QObject):
    """Starts, restarts and stops the server; forwards ``tools/list`` and ``tools/call`` to it."""

    #: :attr:`state` or :attr:`error` changed.
    stateChanged = Signal()
    #: The server announced that its tool list changed.
    toolsChanged = Signal()

    def __init__(
        self,
        chores: Executor,
        operations: Operations,
        launch: Callable[[ServerTarget], ServerLaunch] = launch_for,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        #: Where blocking chores run (loading the MCP client's modules).
        self.chores = chores
        #: The start callers share and the holder: awaited (by the callers, by :meth:`stop`).
        self._tasks = operations.lane(awaited=True)
        #: How a target becomes a command line (replaceable, e.g. to try another interpreter).
        self.launch = launch
        self.state = ServerState.STOPPED
        #: Why the server is :attr:`ServerState.FAILED`.
        self.error: RecallError | None = None
        self.target: ServerTarget | None = None
        self.command: ServerLaunch | None = None
        self._probe: AgentProbe | None = None
        self._holder: asyncio.Task[None] | None = None
        self._release: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self._ensuring: asyncio.Task[None] | None = None
        self._ensuring_target: ServerTarget | None = None
        self._closing = False

    @property
    def running(self) -> bool:
        return self.state is ServerState.RUNNING and self._probe is not None

    def _set_state(self, state: ServerState, error: RecallError | None = None) -> None:
        self.state, self.error = state, error
        with contextlib.suppress(RuntimeError):  # the view may already be deleted when a stop finishes
            self.stateChanged.emit()

    # --- lifetime -------------------------------------------------------------------------------------

    async def ensure(self, target: ServerTarget) -> None:
        """Have a working server for ``target``: keep the running one, or (re)start it.

        Raises :class:`AgentProbeError` when it cannot start (:attr:`error` holds it too). The work runs
        in a task of its own that callers share: a caller superseded mid-start (a newer listing) neither
        abandons a half-started server nor makes the next caller start another one.
        """
        task = self._ensuring
        if task is None or task.done() or self._ensuring_target != target:
            task = self._tasks.start(self._ensure(target))
            self._ensuring, self._ensuring_target = task, target
        await asyncio.shield(task)

    async def _ensure(self, target: ServerTarget) -> None:
        async with self._lock:
            if self._closing:
                raise AgentProbeError("the window is closing: no MCP server is started any more")
            if self.running and self.target == target:
                return
            await self._stop_holder()
            await self._start(target)

    async def _start(self, target: ServerTarget) -> None:
        loop = asyncio.get_running_loop()
        self.target = target
        self.command = self.launch(target)
        self._set_state(ServerState.STARTING)
        try:
            await loop.run_in_executor(self.chores, _import_client)
        except ImportError as error:
            failure = AgentProbeError(
                f"cannot load the MCP client: {error}",
                hint="Reinstall recall-gui with its dependencies (the `mcp` package).",
            )
            self._set_state(ServerState.FAILED, failure)
            raise failure from error
        probe = AgentProbe(self.command, on_tools_changed=self.toolsChanged.emit)
        entered: asyncio.Future[None] = loop.create_future()
        entered.add_done_callback(_retrieve)
        self._release = asyncio.Event()
        self._holder = self._tasks.start(self._hold(probe, entered, self._release))
        try:
            # Shielded: a cancelled caller leaves the start to the holder, which stop() ends.
            await asyncio.shield(entered)
        except RecallError as error:
            self._set_state(ServerState.FAILED, error)
            raise

    async def _hold(self, probe: AgentProbe, entered: asyncio.Future[None], release: asyncio.Event) -> None:
        """Enter the probe, serve requests until released, leave it (the SDK stops the process)."""
        try:
            async with probe:
                self._probe = probe
                self._set_state(ServerState.RUNNING)
                entered.set_result(None)
                await release.wait()
        except Exception as error:
            if not entered.done():
                entered.set_exception(error)
            else:
                log.warning("the MCP server did not stop cleanly: %s", error)
        finally:
            if self._probe is probe:
                self._probe = None
                if self.state is ServerState.RUNNING:
                    self._set_state(ServerState.STOPPED)
            if not entered.done():  # cancelled before the server answered
                entered.cancel()

    def request_stop(self, *, closing: bool = False) -> None:
        """Begin stopping (from a Qt event handler, which cannot await); :meth:`stop` waits for the end.

        ``closing``: the window is going away, so no later request may start a server again.
        """
        self._closing = self._closing or closing
        if self._release is not None:
            self._release.set()

    async def stop(self) -> None:
        """Stop the server and wait until its process is gone."""
        async with self._lock:
            await self._stop_holder()

    async def _stop_holder(self) -> None:
        holder = self._holder
        self.request_stop()
        self._holder, self._release = None, None
        if holder is not None:
            # asyncio.wait, not wait_for: a cancelled caller must not cancel the holder mid-shutdown.
            await asyncio.wait({holder}, timeout=STOP_TIMEOUT_S)
        if self.state is not ServerState.STOPPED:
            self._set_state(ServerState.STOPPED)

    # --- requests -------------------------------------------------------------------------------------

    def _require_probe(self) -> AgentProbe:
        if not self.running or self._probe is None:
            raise AgentProbeError(
                "the MCP server is not running", hint="Press Refresh in the Agent view to start it."
            )
        return self._probe

    async def list_tools(self) -> AgentListing:
        probe = self._require_probe()
        try:
            return await probe.list_tools()
        except AgentProbeError as error:
            self._set_state(ServerState.FAILED, error)
            raise

    async def call(self, arguments: Mapping[str, Any]) -> AgentPayload:
        probe = self._require_probe()
        try:
            return await probe.call(arguments)
        except AgentProbeError as error:
            self._set_state(ServerState.FAILED, error)
            raise

    def server_log(self) -> str:
        return self._probe.server_log() if self._probe is not None else ""
