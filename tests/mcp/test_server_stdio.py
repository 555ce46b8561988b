"""`recall-gui mcp` spawned over stdio and driven by the SDK's real client.

What a client lists and receives is compared with what `recall-gui tool` and `recall-gui search` print
for the same registry, environment and arguments. The tests of this module share one server (starting
it and loading the model takes seconds); tests that change the suffix or the registry put them back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, stdio_client
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPError

from recall_gui import __version__
from recall_gui.core.base.tool import DEFAULT_DESCRIPTION
from recall_gui.core.registry.registry_changes import set_active, set_description
from recall_gui.core.registry.suffix_store import SuffixMode, SuffixStore
from tests.kbtools import snapshot_tree
from tests.mcp.live import (
    BackgroundLoop,
    LiveSession,
    SharedKnowledgeBase,
    build_shared_kb,
    forget_suffix,
    harness_json,
    live_session,
    run_cli,
    server_parameters,
    wire,
)


@pytest.fixture(scope="module")
def shared_kb(tmp_path_factory: pytest.TempPathFactory, passage_vectors: Any) -> SharedKnowledgeBase:
    return build_shared_kb(tmp_path_factory.mktemp("mcp-kb"), passage_vectors)


class Server:
    """The shared server, seen through the SDK client, with the CLI runs it is compared to."""

    def __init__(self, kb: SharedKnowledgeBase, live: LiveSession, loop: BackgroundLoop) -> None:
        self.kb, self.live, self.loop = kb, live, loop
        self._searches: dict[tuple[str, ...], str] = {}

    def list_tools(self) -> list[dict[str, Any]]:
        return [wire(tool) for tool in self.loop.run(self.live.session.list_tools()).tools]

    def call(self, arguments: dict[str, Any] | None, name: str = "recall_search") -> types.CallToolResult:
        return self.loop.run(self.live.session.call_tool(name, arguments))

    def cli_tool(self) -> dict[str, Any]:
        done = run_cli(self.kb.env, "tool", "--registry", str(self.kb.registry_dir))
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    def cli_search(self, *args: str) -> str:
        """`recall-gui search ARGS` (each distinct run once per module: it loads the model each time)."""
        if args not in self._searches:
            done = run_cli(self.kb.env, "search", "--registry", str(self.kb.registry_dir), *args)
            assert done.returncode == 0, done.stderr
            self._searches[args] = done.stdout
        return self._searches[args]

    def harness_json(self, arguments: dict[str, Any]) -> str:
        return harness_json(self.kb.registry_dir, arguments)


@pytest.fixture(scope="module")
def server(shared_kb: SharedKnowledgeBase) -> Iterator[Server]:
    loop = BackgroundLoop()
    try:
        parameters = server_parameters(shared_kb.registry_dir, shared_kb.env)
        live = loop.hold(live_session(parameters, shared_kb.root / "server.log"))
        yield Server(shared_kb, live, loop)
    finally:
        loop.close()


def only_text(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


# --- the handshake and the listing --------------------------------------------------------------------


@pytest.mark.process
def test_handshake_names_the_server_and_promises_list_changed(server: Server) -> None:
    result = server.live.initialize
    assert result.server_info.name == "recall-gui"
    assert result.server_info.version == __version__
    assert result.capabilities.tools is not None
    assert result.capabilities.tools.list_changed is True
    # One tool, nothing else: no resources, prompts or logging to advertise.
    assert result.capabilities.resources is None and result.capabilities.prompts is None


@pytest.mark.process
def test_tools_list_is_exactly_what_recall_gui_tool_prints(server: Server) -> None:
    tools = server.list_tools()
    assert tools == [server.cli_tool()]
    assert tools[0]["description"].startswith(
        DEFAULT_DESCRIPTION + "\n\nAvailable databases:\n\n- Name: notes\n"
    )
    assert "archive" not in tools[0]["description"]  # inactive databases are not offered


# --- calls --------------------------------------------------------------------------------------------


@pytest.mark.process
def test_tools_call_returns_exactly_what_recall_gui_search_prints(server: Server) -> None:
    result = server.call({"db_name": "notes", "query": "capital of France", "limit": 2})
    assert result.is_error is False
    text = only_text(result)
    assert text + "\n" == server.cli_search("--db", "notes", "--limit", "2", "capital of France")
    assert [hit["id"] for hit in json.loads(text)["results"]] == ["paris", "berlin"]


@pytest.mark.slow
def test_tools_call_keeps_every_character_and_cosh_default_limit(server: Server) -> None:
    # Compared with the harness in this process (the CLI runs the same harness: see the test above).
    arguments = {"db_name": "notes", "query": "rocket emoji 🚀 and Arabic ش"}
    text = only_text(server.call(arguments))
    assert text == server.harness_json(arguments)
    assert "🚀" in text and "\\u" not in text
    assert len(json.loads(text)["results"]) == 5


def test_unknown_database_is_a_tool_error_with_cosh_text(server: Server) -> None:
    result = server.call({"db_name": "nope", "query": "anything"})
    assert result.is_error is True
    # The message alone, in cosh's words; the hint is for the person running the server: it is logged.
    assert only_text(result) == "Database 'nope' not found. Active databases: notes"
    assert "Database 'nope' not found" in server.live.log()
    assert 'hint: No database called "nope" is registered' in server.live.log()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (None, "missing 'db_name'"),
        ({}, "missing 'db_name'"),
        ({"query": "x"}, "missing 'db_name'"),
        ({"db_name": 7, "query": "x"}, "missing 'db_name'"),
        ({"db_name": "notes"}, "missing 'query'"),
    ],
    ids=["no-arguments", "empty", "no-db_name", "db_name-not-text", "no-query"],
)
def test_missing_arguments_are_tool_errors_with_cosh_text(
    server: Server, arguments: dict[str, Any] | None, message: str
) -> None:
    result = server.call(arguments)
    assert result.is_error is True
    assert only_text(result) == message


def test_an_unknown_tool_is_a_protocol_error(server: Server) -> None:
    with pytest.raises(MCPError) as caught:
        server.call({"db_name": "notes", "query": "x"}, name="recall_write")
    assert caught.value.code == types.INVALID_PARAMS
    assert "Unknown tool: recall_write" in caught.value.message


def test_serving_writes_nothing(server: Server) -> None:
    before = snapshot_tree(server.kb.db_dir), snapshot_tree(server.kb.registry_dir)
    server.call({"db_name": "notes", "query": "tides and the Moon", "limit": 3})
    server.list_tools()
    assert (snapshot_tree(server.kb.db_dir), snapshot_tree(server.kb.registry_dir)) == before


def test_stdout_carries_only_protocol_messages(server: Server) -> None:
    # Loading fastembed and onnxruntime is where stray output would come from: make sure it happened.
    assert server.call({"db_name": "notes", "query": "espresso"}).is_error is False
    assert server.live.stream_errors == []
    assert "serving recall_search" in server.live.log()  # the log went to stderr


# --- changes while the server runs --------------------------------------------------------------------


@pytest.mark.process
def test_a_suffix_saved_while_running_is_listed_and_announced(server: Server) -> None:
    store = SuffixStore(server.kb.config_dir)
    seen = server.live.list_changed_count()
    try:
        store.save(SuffixMode.NOTES, "Use notes for anything about the team.", "")
        seen = server.live.wait_for_list_changed(after=seen)
        tools = server.list_tools()
        assert tools[0]["description"].startswith(DEFAULT_DESCRIPTION + "\n\nAvailable databases:\n\n")
        assert tools[0]["description"].endswith("\n\nUse notes for anything about the team.")
        assert tools == [server.cli_tool()]
    finally:
        forget_suffix(store)
    assert server.live.wait_for_list_changed(after=seen) == seen + 1
    assert server.list_tools() == [server.cli_tool()]
    assert "Available databases" in server.list_tools()[0]["description"]


@pytest.mark.process
def test_a_registry_changed_while_running_is_listed_searchable_and_announced(server: Server) -> None:
    registry = server.kb.registry_dir
    seen = server.live.list_changed_count()
    try:
        set_active(registry, "archive", True)
        seen = server.live.wait_for_list_changed(after=seen)
        description = server.list_tools()[0]["description"]
        assert "- Name: archive\n  Description: Old notes\n" in description
        assert server.list_tools() == [server.cli_tool()]
        result = server.call({"db_name": "archive", "query": "photosynthesis", "limit": 1})
        assert only_text(result) == server.harness_json(
            {"db_name": "archive", "query": "photosynthesis", "limit": 1}
        )
        assert json.loads(only_text(result))["results"][0]["id"] == "photosynthesis"

        set_description(registry, "archive", "Older notes, kept for reference")
        seen = server.live.wait_for_list_changed(after=seen)
        assert "Description: Older notes, kept for reference" in server.list_tools()[0]["description"]
    finally:
        set_description(registry, "archive", "Old notes")
        set_active(registry, "archive", False)
    server.live.wait_for_list_changed(after=seen)
    assert "archive" not in server.list_tools()[0]["description"]
    assert server.call({"db_name": "archive", "query": "x"}).is_error is True


# --- the 2026-07-28 protocol ----------------------------------------------------------------------------


@pytest.mark.process
def test_a_2026_client_lists_calls_and_hears_changes_through_listen(
    shared_kb: SharedKnowledgeBase, server: Server
) -> None:
    """The SDK's high-level client negotiates 2026-07-28, where changes come on a listen stream."""
    expected_tool = server.cli_tool()
    expected_search = server.cli_search("--db", "notes", "--limit", "2", "capital of France")
    store = SuffixStore(shared_kb.config_dir)
    seen: dict[str, Any] = {}

    async def session() -> None:
        parameters = server_parameters(shared_kb.registry_dir, shared_kb.env)
        with (shared_kb.root / "server-2026.log").open("w", encoding="utf-8") as log:
            async with Client(stdio_client(parameters, errlog=log), cache=None) as client:
                seen["version"] = client.protocol_version
                seen["listed"] = [wire(tool) for tool in (await client.list_tools()).tools]
                arguments = {"db_name": "notes", "query": "capital of France", "limit": 2}
                seen["called"] = only_text(await client.call_tool("recall_search", arguments))
                async with client.listen(tools_list_changed=True) as subscription:
                    store.save(SuffixMode.OVERRIDE, "", "Saved for 2026.")
                    with anyio.fail_after(15):
                        seen["event"] = await anext(subscription)
                seen["relisted"] = [wire(tool) for tool in (await client.list_tools()).tools]

    try:
        anyio.run(session)
    finally:
        forget_suffix(store)
    assert seen["version"] == "2026-07-28"
    assert seen["listed"] == [expected_tool]
    assert seen["called"] + "\n" == expected_search
    assert isinstance(seen["event"], ToolsListChanged)
    assert seen["relisted"][0]["description"] == DEFAULT_DESCRIPTION + "\n\nSaved for 2026."
