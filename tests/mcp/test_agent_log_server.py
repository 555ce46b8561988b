"""The server hands calls to the agent log without waiting for it: in-process, with the SDK's client."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import mcp_types as types
from mcp import Client

from recall_gui.core.agent_log.agent_log import LogFiles
from recall_gui.core.agent_log.call_log import CallLog, LogSwitch
from recall_gui.core.base.app_settings import SettingsStore
from recall_gui.mcp.server import RecallMcpServer
from tests.kbtools import KnowledgeBase


class HeldDisk(LogFiles):
    """A log folder on a disk that writes nothing until the test lets it (or, if it never does, for
    ``HOLD_S``: a call that waited for its log line would then be answered only after that)."""

    HOLD_S = 20.0

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.release = threading.Event()
        self.held_too_long = False

    def append(self, line: bytes, max_bytes: int) -> None:
        if not self.release.wait(self.HOLD_S):
            self.held_too_long = True
        super().append(line, max_bytes)


def test_a_call_is_answered_without_waiting_for_the_log(kb: KnowledgeBase, tmp_path: Path) -> None:
    files = HeldDisk(tmp_path / "log")
    log = CallLog(files, LogSwitch(SettingsStore(tmp_path / "config")))
    app = RecallMcpServer(kb.registry_dir, call_log=log)
    arguments = {"db_name": kb.name, "query": "how do tides work", "limit": 2}

    async def calls() -> int:
        async with Client(app.server, mode="legacy") as client:
            for _ in range(4):
                result = await client.call_tool("recall_search", arguments)
                assert isinstance(result.content[0], types.TextContent) and not result.is_error
        return len(files.read().records)

    written_meanwhile = asyncio.run(calls())
    files.release.set()
    log.close()
    asyncio.run(app.harness.aclose())
    # Every call was answered while the disk wrote nothing: none of them waited for its log line.
    assert written_meanwhile == 0 and not files.held_too_long
    records = files.read().records
    assert len(records) == 4 and {r.result_ids[0] for r in records} == {"tides"}  # close wrote the rest


def test_the_client_is_recorded_by_the_name_it_gave_at_initialize(kb: KnowledgeBase, tmp_path: Path) -> None:
    files = LogFiles(tmp_path / "log")
    log = CallLog(files, LogSwitch(SettingsStore(tmp_path / "config")))
    app = RecallMcpServer(kb.registry_dir, call_log=log)

    async def call() -> None:
        info = types.Implementation(name="claude-code", version="2.0.1")
        async with Client(app.server, mode="legacy", client_info=info) as client:
            await client.call_tool("recall_search", {"db_name": kb.name, "query": "espresso", "limit": 1})

    asyncio.run(call())
    log.close()
    asyncio.run(app.harness.aclose())
    (record,) = files.read().records
    assert (record.client, record.client_version, record.result_ids) == ("claude-code", "2.0.1", ("coffee",))
    assert record.client_label == "claude-code 2.0.1"
