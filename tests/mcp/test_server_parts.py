"""The server's parts in-process: the tool it lists, how calls and failures become results, the watcher."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from recall_gui.core.base.tool import DEFAULT_DESCRIPTION, Recall
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_changes import set_active, set_description
from recall_gui.core.registry.suffix import served_tool
from recall_gui.core.registry.suffix_store import SuffixMode, SuffixStore
from recall_gui.core.search.harness import Harness
from recall_gui.mcp.server import (
    ListChangedAnnouncer,
    RecallMcpServer,
    ToolSource,
    ToolWatcher,
    call_recall_search,
    mcp_tool,
)
from tests.kbtools import KnowledgeBase


def call(kb: KnowledgeBase, arguments: dict[str, Any]) -> types.CallToolResult:
    async def go() -> types.CallToolResult:
        harness = Harness(kb.registry_dir)
        try:
            return await call_recall_search(harness, arguments)
        finally:
            await harness.aclose()

    return asyncio.run(go())


def text_of(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def test_the_listed_tool_is_the_core_tool_in_wire_form() -> None:
    recall = Recall().with_description("Available databases:\n\n(none active)\n")
    wire = mcp_tool(recall).model_dump(by_alias=True, mode="json", exclude_none=True)
    assert wire == recall.to_mcp()


def test_a_call_answers_with_the_harness_json_as_its_only_text(kb: KnowledgeBase) -> None:
    result = call(kb, {"db_name": kb.name, "query": "how do tides work", "limit": 1})
    assert result.is_error is False
    assert json.loads(text_of(result)) == {
        "query": "how do tides work",
        "results": [{"id": "tides", "content": kb.contents[kb.ids.index("tides")]}],
    }


def test_a_failure_sends_the_message_and_logs_the_hint(
    kb: KnowledgeBase, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="recall_gui.mcp"):
        result = call(kb, {"db_name": "gone", "query": "x"})
    assert result.is_error is True
    assert text_of(result) == f"Database 'gone' not found. Active databases: {kb.name}"
    assert f'No database called "gone" is registered in {kb.registry_dir}' in caplog.text


def test_an_unexpected_failure_is_a_tool_error_not_a_crash(
    kb: KnowledgeBase, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(Harness):
        async def run(self, args: Any) -> Any:
            raise RuntimeError("disk on fire")

    async def go() -> types.CallToolResult:
        harness = Broken(kb.registry_dir)
        try:
            return await call_recall_search(harness, {"db_name": kb.name, "query": "x"})
        finally:
            await harness.aclose()

    with caplog.at_level("ERROR", logger="recall_gui.mcp"):
        result = asyncio.run(go())
    assert result.is_error is True
    assert text_of(result) == "recall_search failed unexpectedly: RuntimeError: disk on fire"
    assert "Traceback" in caplog.text


# --- the watcher --------------------------------------------------------------------------------------


@pytest.fixture
def watcher(kb: KnowledgeBase, tmp_path: Path) -> ToolWatcher:
    async def announce() -> None:  # the tests call check(), which decides; announcing is tested over stdio
        raise AssertionError("not used here")

    return ToolWatcher(ToolSource(kb.registry_dir, SuffixStore(tmp_path / "config")), announce)


def test_the_source_reads_the_tool_the_cli_prints(kb: KnowledgeBase, tmp_path: Path) -> None:
    store = SuffixStore(tmp_path / "config")
    store.save(SuffixMode.NOTES, "Mine.", "")
    served = served_tool(load_registry(kb.registry_dir), store)
    assert ToolSource(kb.registry_dir, store).current() == served.tool


def test_the_source_reads_the_registry_again_only_when_its_files_changed(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A registry of 50k entries takes a second or more to read: not for every tools/list."""
    import recall_gui.core.registry.registry_keeper as keeper_module

    reads: list[Path] = []

    def counted(directory: Path, previous: Any = None) -> Any:
        reads.append(directory)
        return load_registry(directory, previous)

    monkeypatch.setattr(keeper_module, "load_registry", counted)
    source = ToolSource(kb.registry_dir, SuffixStore(tmp_path / "config"))
    first = source.current()
    assert [source.current() for _ in range(3)] == [first] * 3
    assert len(reads) == 1
    set_description(kb.registry_dir, kb.name, "Changed by another program")
    assert "Changed by another program" in source.current().description
    assert len(reads) == 2


def test_nothing_changed_means_nothing_to_announce(watcher: ToolWatcher) -> None:
    assert watcher.check() is False
    assert watcher.check() is False


def test_a_saved_suffix_is_a_change_and_only_once(watcher: ToolWatcher) -> None:
    watcher.source.suffix_store.save(SuffixMode.NOTES, "Only notes here.", "")
    assert watcher.check() is True
    assert watcher.check() is False
    watcher.source.suffix_store.save(SuffixMode.NOTES, "", "")
    assert watcher.check() is True


def test_a_registry_rewrite_that_keeps_the_tool_is_not_a_change(
    watcher: ToolWatcher, kb: KnowledgeBase
) -> None:
    dbs = kb.registry_dir / "rag_dbs.json"
    data = json.loads(dbs.read_text(encoding="utf-8"))
    data["dbs"][0]["created_at"] += 1  # a field the description does not show
    dbs.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.utime(dbs, ns=(1, 1))  # the stamps differ even if the rewrite landed in the same mtime tick
    assert watcher.source.stamps() != watcher._stamps
    assert watcher.check() is False


def test_a_changed_description_or_activation_is_a_change(watcher: ToolWatcher, kb: KnowledgeBase) -> None:
    set_description(kb.registry_dir, kb.name, "A new description")
    assert watcher.check() is True
    set_active(kb.registry_dir, kb.name, False)
    assert watcher.check() is True
    assert "(none active)" in watcher.source.current().description


def test_registry_changes_under_saved_notes_still_reach_the_agent(
    watcher: ToolWatcher, kb: KnowledgeBase
) -> None:
    watcher.source.suffix_store.save(SuffixMode.NOTES, "A sentence of mine.", "")
    assert watcher.check() is True
    set_description(kb.registry_dir, kb.name, "Another description")
    assert watcher.check() is True
    (entry,) = load_registry(kb.registry_dir).active
    assert watcher.source.current().description == (
        f"{DEFAULT_DESCRIPTION}\n\nAvailable databases:\n\n- Name: {kb.name}\n"
        "  Description: Another description\n"
        f"  DB URI: {kb.db_dir}\n  Embedding: {entry.embedder.label}\n\nA sentence of mine."
    )
    assert "Description: Another description\n" in watcher.source.current().description


def test_registry_changes_hidden_by_an_override_are_not_a_change(
    watcher: ToolWatcher, kb: KnowledgeBase
) -> None:
    watcher.source.suffix_store.save(SuffixMode.OVERRIDE, "", f"Use {kb.name}.")
    assert watcher.check() is True
    set_description(kb.registry_dir, kb.name, "Another description")
    assert watcher.check() is False


def test_an_edit_of_the_same_size_in_the_same_tick_is_still_seen(watcher: ToolWatcher) -> None:
    store = watcher.source.suffix_store
    store.save(SuffixMode.NOTES, "words A", "")
    assert watcher.check() is True
    stat = store.notes_path.stat()
    store.save(SuffixMode.NOTES, "words B", "")  # same size; an atomic save is a new file (a new inode)
    os.utime(store.notes_path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert watcher.check() is True


def test_the_watcher_announces_what_it_notices(kb: KnowledgeBase, tmp_path: Path) -> None:
    announced: list[str | None] = []
    store = SuffixStore(tmp_path / "config")

    async def go() -> None:
        heard = asyncio.Event()

        async def announce() -> None:
            announced.append(store.load().notes)
            heard.set()

        watcher = ToolWatcher(ToolSource(kb.registry_dir, store), announce, interval=0.01)
        task = asyncio.create_task(watcher.run())
        store.save(SuffixMode.NOTES, "First.", "")
        async with asyncio.timeout(10):
            await heard.wait()
        task.cancel()

    asyncio.run(go())
    assert announced == ["First."]


def test_the_announcer_publishes_to_listen_streams() -> None:
    from mcp.server.subscriptions import ToolsListChanged

    async def go() -> list[object]:
        announcer = ListChangedAnnouncer()
        events: list[object] = []
        unsubscribe = announcer.bus.subscribe(events.append)
        await announcer.announce()
        unsubscribe()
        return events

    assert asyncio.run(go()) == [ToolsListChanged()]


def test_an_unreadable_suffix_still_lists_the_tool_with_the_generated_list_and_logs_why(
    kb: KnowledgeBase, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SuffixStore(tmp_path / "config")
    store.directory.mkdir(parents=True)
    store.notes_path.write_bytes(b"\xff\xfe not UTF-8")
    app = RecallMcpServer(kb.registry_dir, suffix_store=store)  # starts all the same

    async def list_tools() -> types.ListToolsResult:
        async with Client(app.server, mode="legacy") as client:
            return await client.list_tools()

    with caplog.at_level("WARNING", logger="recall_gui.mcp"):
        (tool,) = asyncio.run(list_tools()).tools
        asyncio.run(list_tools())
    (entry,) = load_registry(kb.registry_dir).active
    assert tool.description == (
        f"{DEFAULT_DESCRIPTION}\n\nAvailable databases:\n\n- Name: {kb.name}\n"
        f"  Description: {entry.description}\n"
        f"  DB URI: {kb.db_dir}\n  Embedding: {entry.embedder.label}\n\n"
    )
    problem = f"{store.notes_path} cannot be read: it is not UTF-8 text (byte 0xff at position 0)"
    assert caplog.text.count(problem) == 1  # logged once, not at every listing
    assert "Agents get the generated database list without your text" in caplog.text
    store.save(SuffixMode.NOTES, "Readable again.", "")
    assert app.watcher.check() is True  # fixing the file is a change the clients hear about
    assert (tmp_path / "config" / "tool_notes.txt.unreadable").read_bytes() == b"\xff\xfe not UTF-8"
