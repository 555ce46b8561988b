"""The agent probe: the real server started through the SDK client, seen as an agent sees it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.base.tool import DEFAULT_DESCRIPTION
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.suffix import served_tool
from recall_gui.core.registry.suffix_store import SuffixMode, SuffixStore
from recall_gui.mcp.probe import (
    AgentListing,
    AgentPayload,
    AgentProbe,
    AgentProbeError,
    ServerLaunch,
    probe_call,
    probe_listing,
)
from tests.kbtools import KnowledgeBase
from tests.mcp.live import BackgroundLoop, SharedKnowledgeBase, build_shared_kb, forget_suffix, harness_json


@pytest.fixture(scope="module")
def shared_kb(tmp_path_factory: pytest.TempPathFactory, passage_vectors: Any) -> SharedKnowledgeBase:
    return build_shared_kb(tmp_path_factory.mktemp("probe-kb"), passage_vectors)


class HeldProbe:
    def __init__(self, probe: AgentProbe, loop: BackgroundLoop, changes: list[int]) -> None:
        self.probe, self.loop, self.changes = probe, loop, changes


@pytest.fixture(scope="module")
def held(shared_kb: SharedKnowledgeBase) -> Iterator[HeldProbe]:
    loop = BackgroundLoop()
    changes: list[int] = []
    launch = ServerLaunch.for_registry(shared_kb.registry_dir, env=shared_kb.env)
    try:
        probe = loop.hold(AgentProbe(launch, on_tools_changed=lambda: changes.append(1)))
        yield HeldProbe(probe, loop, changes)
    finally:
        loop.close()


def expected_tool(kb: SharedKnowledgeBase) -> dict[str, Any]:
    return served_tool(load_registry(kb.registry_dir), SuffixStore(kb.config_dir)).tool.to_mcp()


@pytest.mark.process
def test_the_listing_is_what_the_server_serves(held: HeldProbe, shared_kb: SharedKnowledgeBase) -> None:
    listing = held.loop.run(held.probe.list_tools())
    assert isinstance(listing, AgentListing)
    assert listing.tools == (expected_tool(shared_kb),)
    assert listing.tool() == expected_tool(shared_kb)
    assert listing.tool("recall_write") is None
    assert listing.description() == expected_tool(shared_kb)["description"]
    assert listing.protocol_version == "2025-11-25"
    assert listing.server_name == "recall-gui"
    assert listing.announces_changes is True


def test_a_call_returns_the_raw_payload(held: HeldProbe, shared_kb: SharedKnowledgeBase) -> None:
    arguments = {"db_name": "notes", "query": "nearest-neighbour vector search", "limit": 2}
    payload = held.loop.run(held.probe.call(arguments))
    expected = harness_json(shared_kb.registry_dir, arguments)
    assert payload.content == ({"type": "text", "text": expected},)
    assert payload.text == expected
    assert payload.is_error is False
    assert payload.elapsed_ms > 0


def test_a_failing_call_is_a_payload_as_the_agent_gets_it(held: HeldProbe) -> None:
    payload = held.loop.run(held.probe.call({"db_name": "archive", "query": "x"}))  # inactive
    assert payload.is_error is True
    assert payload.content == (
        {"type": "text", "text": "Database 'archive' not found. Active databases: notes"},
    )
    payload = held.loop.run(held.probe.call(None))
    assert (payload.is_error, payload.text) == (True, "missing 'db_name'")


def test_an_unknown_tool_is_a_probe_error(held: HeldProbe) -> None:
    with pytest.raises(AgentProbeError) as caught:
        held.loop.run(held.probe.call({}, tool="recall_write"))
    assert "tools/call recall_write failed: Unknown tool: recall_write" in caught.value.message


def test_changes_are_counted_and_the_next_listing_shows_them(
    held: HeldProbe, shared_kb: SharedKnowledgeBase
) -> None:
    store = SuffixStore(shared_kb.config_dir)
    before = held.probe.changes_seen
    try:
        store.save(SuffixMode.NOTES, "Ask notes about the team.", "")
        count = held.loop.run(asyncio.wait_for(held.probe.wait_for_change(after=before), 15))
        assert count == before + 1
        assert len(held.changes) == count
        listing = held.loop.run(held.probe.list_tools())
        assert listing.description() == expected_tool(shared_kb)["description"]
        assert listing.description().endswith(
            "- Name: notes\n  Description: Team notes\n  DB URI: "
            f"{shared_kb.db_dir}\n  Embedding: All-MiniLM-L6-v2 (384d)\n\n"
            "Ask notes about the team."
        )
    finally:
        forget_suffix(store)
    held.loop.run(asyncio.wait_for(held.probe.wait_for_change(after=before + 1), 15))
    assert held.loop.run(held.probe.list_tools()).tools == (expected_tool(shared_kb),)


def test_the_server_log_is_readable(held: HeldProbe, shared_kb: SharedKnowledgeBase) -> None:
    log = held.probe.server_log()
    assert f"serving recall_search for the registry in {shared_kb.registry_dir}" in log


@pytest.mark.process
def test_auto_mode_speaks_2026_and_hears_changes_on_a_listen_stream(kb: KnowledgeBase) -> None:
    """Also the default launch: the server inherits this process's environment, so it reads the same
    config dir (the window's saved suffix)."""
    store = SuffixStore()  # this process's config dir

    async def go() -> tuple[str, int, str | None, str]:
        async with AgentProbe(ServerLaunch.for_registry(kb.registry_dir), mode="auto") as probe:
            version = (await probe.list_tools()).protocol_version
            store.save(SuffixMode.OVERRIDE, "", "Heard on a listen stream.")
            count = await asyncio.wait_for(probe.wait_for_change(after=0), 15)
            description = (await probe.list_tools()).description()
        return version, count, description, probe.server_log()

    version, count, description, log = asyncio.run(go())
    assert version == "2026-07-28"
    assert count == 1
    assert description == DEFAULT_DESCRIPTION + "\n\nHeard on a listen stream."
    assert "telling clients" in log  # the log outlives the server


@pytest.mark.process
def test_one_shot_helpers_start_and_stop_a_server(kb: KnowledgeBase) -> None:
    async def go() -> tuple[AgentPayload, AgentListing]:
        payload = await probe_call(kb.registry_dir, {"db_name": "gone", "query": "x"})
        return payload, await probe_listing(kb.registry_dir)

    payload, listing = asyncio.run(go())
    assert (payload.is_error, payload.text) == (
        True,
        f"Database 'gone' not found. Active databases: {kb.name}",
    )
    assert listing.tools == (served_tool(load_registry(kb.registry_dir), SuffixStore()).tool.to_mcp(),)


@pytest.mark.process
def test_a_command_that_cannot_run_is_a_clear_error(tmp_path: Path) -> None:
    async def go() -> None:
        async with AgentProbe(ServerLaunch(str(tmp_path / "no-such-python"), ())):
            pass

    with pytest.raises(AgentProbeError) as caught:
        asyncio.run(go())
    assert caught.value.message.startswith("could not connect to the MCP server: cannot run ")
    assert "No such file or directory" in caught.value.message


@pytest.mark.process
def test_a_server_that_dies_at_start_shows_its_last_words() -> None:
    script = "import sys; print('ImportError: no module named mcp', file=sys.stderr); sys.exit(1)"

    async def go() -> None:
        async with AgentProbe(ServerLaunch(sys.executable, ("-c", script)), timeout=30):
            pass

    with pytest.raises(AgentProbeError) as caught:
        asyncio.run(go())
    assert (
        caught.value.message
        == "could not connect to the MCP server: the server closed the connection (did it exit?)"
    )
    assert caught.value.hint is not None
    assert "ImportError: no module named mcp" in caught.value.hint


def test_a_probe_that_is_not_entered_says_how_to_use_it(tmp_path: Path) -> None:
    probe = AgentProbe(ServerLaunch.for_registry(tmp_path))
    with pytest.raises(AgentProbeError) as caught:
        asyncio.run(probe.list_tools())
    assert caught.value.hint == "Use it as `async with AgentProbe(...)`."
