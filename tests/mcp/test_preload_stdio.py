"""`recall-gui mcp` loads what a search needs right after it starts, and that changes no answer.

The preloaded server's first call returns the same bytes as a warm call and as `recall-gui search`; a
preload that fails (a model that is not there, a registry that does not parse) leaves the handshake and
the listing working, and the first call reports the failure exactly as a server without the preload does
(``RECALL_GUI_MCP_PRELOAD=0``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.kbtools import cosh_entry, write_registry
from tests.mcp.live import (
    BackgroundLoop,
    LiveSession,
    build_shared_kb,
    harness_json,
    live_session,
    server_env,
    server_parameters,
)
from tests.waiting import wait_until

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

ARGUMENTS = {"db_name": "notes", "query": "How do I change my password?", "limit": 3}


def wait_for_log(live: LiveSession, text: str, timeout: float = 90.0) -> str:
    wait_until(lambda: text in live.log(), f"the server's log says {text!r}", timeout)
    return live.log()


def first_call(
    registry: Path, env: dict[str, str], log: Path, arguments: dict[str, Any], wait_for: str | None
) -> tuple[list[types.CallToolResult], list[str], str]:
    """Start a server, list its tool, (wait for ``wait_for`` in its log,) call twice; results and log."""
    loop = BackgroundLoop()
    try:
        live = loop.hold(live_session(server_parameters(registry, env), log))
        names = [tool.name for tool in loop.run(live.session.list_tools()).tools]
        if wait_for is not None:
            assert wait_for in wait_for_log(live, wait_for), live.log()
        results = [loop.run(live.session.call_tool("recall_search", arguments)) for _ in range(2)]
        return results, names, live.log()
    finally:
        loop.close()


def payload(result: types.CallToolResult) -> tuple[bool, list[str]]:
    return bool(result.is_error), [c.text for c in result.content if isinstance(c, types.TextContent)]


def test_the_preloaded_first_call_is_byte_for_byte_a_warm_one(tmp_path: Path, passage_vectors: Any) -> None:
    kb = build_shared_kb(tmp_path, passage_vectors)
    results, names, _ = first_call(
        kb.registry_dir, kb.env, tmp_path / "server.log", ARGUMENTS, "ready to search notes"
    )
    assert names == ["recall_search"]
    assert payload(results[0]) == payload(results[1]) == (False, [harness_json(kb.registry_dir, ARGUMENTS)])


@pytest.mark.parametrize("fault", ["model missing", "registry broken"])
def test_a_failed_preload_breaks_nothing_and_the_first_call_reports_as_before(
    tmp_path: Path, passage_vectors: Any, fault: str
) -> None:
    kb = build_shared_kb(tmp_path / "kb", passage_vectors)
    registry = tmp_path / "registry"
    if fault == "model missing":  # not in the fastembed cache, and downloads are off
        write_registry(registry, [cosh_entry("notes", kb.db_dir, model="BGESmallENV15")])
        expected_log = "preloading notes failed"
    else:
        registry.mkdir()
        (registry / "rag_dbs.json").write_text('{"dbs": [{"name": "notes",', encoding="utf-8")
        (registry / "rag_active.json").write_text('["notes"]', encoding="utf-8")
        expected_log = "serving recall_search"
    env = server_env(tmp_path)
    preloaded, names, log = first_call(registry, env, tmp_path / "a.log", ARGUMENTS, expected_log)
    assert names == ["recall_search"]
    assert expected_log in log
    plain, _, _ = first_call(
        registry, env | {"RECALL_GUI_MCP_PRELOAD": "0"}, tmp_path / "b.log", ARGUMENTS, None
    )
    assert payload(preloaded[0])[0] is True
    assert payload(preloaded[0]) == payload(plain[0]) == payload(preloaded[1])
