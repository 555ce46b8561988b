"""Helpers for MCP tests: a real server spawned over stdio, and the SDK client kept open across tests.

Starting a server (and loading the embedding model in it) takes seconds, so the tests of a module share
one. pytest tests are synchronous; the open client lives in an asyncio loop on its own thread, and tests
hand coroutines to it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Coroutine
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.stdio import get_default_environment

from recall_gui.core.registry.suffix_store import SuffixStore
from recall_gui.core.search.harness import Harness
from tests.kbtools import PASSAGES, cosh_entry, write_lance_table, write_registry
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")

#: Long enough for a loaded machine to start a server and load the model; never reached when all is well.
WAIT_SECONDS = 90.0


def server_env(root: Path) -> dict[str, str]:
    """The isolated environment of a spawned server (and of the CLI runs it is compared with)."""
    return {
        "PYTHONPATH": str(ROOT),
        "RECALL_GUI_CONFIG_DIR": str(root / "config"),
        "RECALL_GUI_DATA_DIR": str(root / "data"),
        "XDG_DATA_HOME": str(root / "xdg-data"),
        "XDG_CONFIG_HOME": str(root / "xdg-config"),
        "RECALL_GUI_CACHE_DIR": os.environ["RECALL_GUI_CACHE_DIR"],
        "FASTEMBED_CACHE_PATH": os.environ.get("FASTEMBED_CACHE_PATH", str(root / "fastembed")),
        "HF_HUB_OFFLINE": "1",
        "RECALL_GUI_DOWNLOAD_MODELS": "0",
    }


def server_parameters(registry_dir: Path, env: dict[str, str]) -> StdioServerParameters:
    """`python -m recall_gui mcp --registry DIR`, as an MCP client's configuration would say."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "recall_gui", "mcp", "--registry", str(registry_dir)], env=env
    )


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The `recall-gui` command with exactly the environment an MCP client gives the server."""
    return subprocess.run(
        [sys.executable, "-m", "recall_gui", *args],
        check=False,
        capture_output=True,
        text=True,
        env=get_default_environment() | env,
        timeout=WAIT_SECONDS,
    )


@dataclass(frozen=True)
class SharedKnowledgeBase:
    """A real knowledge base with two databases: ``notes`` (active) and ``archive`` (inactive)."""

    root: Path
    db_dir: Path
    registry_dir: Path
    env: dict[str, str]

    @property
    def config_dir(self) -> Path:
        return Path(self.env["RECALL_GUI_CONFIG_DIR"])


def forget_suffix(store: SuffixStore) -> None:
    """Put the config dir back as a new user has it: nothing saved, the generated list served."""
    for path in store.paths():
        path.unlink(missing_ok=True)


def build_shared_kb(root: Path, passage_vectors: Any) -> SharedKnowledgeBase:
    db_dir = root / "lancedb"
    ids, contents = tuple(PASSAGES), tuple(PASSAGES.values())
    write_lance_table(db_dir, "notes", ids, contents, passage_vectors)
    write_lance_table(db_dir, "archive", ids[::-1], contents[::-1], passage_vectors[::-1])
    registry_dir = write_registry(
        root / "registry",
        [cosh_entry("notes", db_dir, "Team notes"), cosh_entry("archive", db_dir, "Old notes")],
        active=["notes"],
    )
    return SharedKnowledgeBase(root, db_dir, registry_dir, server_env(root))


class BackgroundLoop:
    """An asyncio loop on its own thread that keeps async resources open between synchronous tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="mcp-test-loop", daemon=True)
        self._thread.start()
        self._holders: list[tuple[asyncio.Event, concurrent.futures.Future[None]]] = []

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = WAIT_SECONDS) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def hold(self, manager: AbstractAsyncContextManager[T]) -> T:
        """Enter ``manager`` in a task of its own and keep it entered until :meth:`close`."""
        entered: concurrent.futures.Future[T] = concurrent.futures.Future()
        release = self.run(self._make_event())

        async def holder() -> None:
            try:
                async with manager as value:
                    entered.set_result(value)
                    await release.wait()
            except BaseException as error:
                if entered.done():
                    raise
                entered.set_exception(error)

        done = asyncio.run_coroutine_threadsafe(holder(), self.loop)
        self._holders.append((release, done))
        return entered.result(WAIT_SECONDS)

    @staticmethod
    async def _make_event() -> asyncio.Event:
        return asyncio.Event()

    def close(self) -> None:
        """Leave every held manager (newest first), then stop the loop."""
        try:
            for release, done in reversed(self._holders):
                self.loop.call_soon_threadsafe(release.set)
                done.result(WAIT_SECONDS)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(WAIT_SECONDS)
            self.loop.close()


@dataclass
class LiveSession:
    """An initialized SDK client session to a spawned server, with what the server sent unasked."""

    session: ClientSession
    initialize: Any
    log_path: Path
    notifications: list[Any] = field(default_factory=list)
    #: Lines on the server's stdout that were not protocol messages (the client reports them as errors).
    stream_errors: list[Exception] = field(default_factory=list)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def list_changed_count(self) -> int:
        return sum(1 for n in self.notifications if n.method == "notifications/tools/list_changed")

    def wait_for_list_changed(self, after: int, timeout: float = 15.0) -> int:
        """Wait (bounded) until more than ``after`` list-changed notifications arrived; their count."""
        wait_until(
            lambda: self.list_changed_count() > after,
            f"more than {after} list-changed notifications",
            timeout,
        )
        return self.list_changed_count()


@asynccontextmanager
async def live_session(parameters: StdioServerParameters, log_path: Path) -> AsyncIterator[LiveSession]:
    """Spawn the server, speak the initialize handshake, and record what it sends on its own."""
    received: list[Any] = []
    errors: list[Exception] = []

    async def on_message(message: Any) -> None:
        (errors if isinstance(message, Exception) else received).append(message)

    with log_path.open("w", encoding="utf-8") as log:
        async with (
            stdio_client(parameters, errlog=log) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            result = await session.initialize()
            yield LiveSession(session, result, log_path, received, errors)


def harness_json(registry_dir: Path, arguments: dict[str, Any]) -> str:
    """What the core's harness answers in this process (the CLI's `search` prints the same plus a newline)."""

    async def search() -> str:
        harness = Harness(registry_dir)
        try:
            return await harness.recall_search(arguments)
        finally:
            await harness.aclose()

    return asyncio.run(search())


def wire(model: Any) -> dict[str, Any]:
    """A received protocol object in wire form (camelCase keys, absent fields left out)."""
    return dict(model.model_dump(by_alias=True, mode="json", exclude_none=True))
