"""A cache folder that cannot be made (its parent is a file): the cache is disposable, so `search`, a golden
check and the MCP server answer as with a cache, and each says once why it is slower (the commands on
stderr, the server in its log)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.mcp.live import (
    BackgroundLoop,
    build_shared_kb,
    harness_json,
    live_session,
    run_cli,
    server_parameters,
)

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

ARGUMENTS = {"db_name": "notes", "query": "How do I change my password?", "limit": 3}


def unusable_cache(root: Path) -> Path:
    blocker = root / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    return blocker / "cache"


def test_search_check_and_the_mcp_server_work_without_a_cache(tmp_path: Path, passage_vectors: Any) -> None:
    kb = build_shared_kb(tmp_path / "kb", passage_vectors)
    expected = harness_json(kb.registry_dir, ARGUMENTS)  # with this run's usable cache
    cache = unusable_cache(tmp_path)
    env = {**kb.env, "RECALL_GUI_CACHE_DIR": str(cache)}

    done = run_cli(
        env, "search", "--registry", str(kb.registry_dir), "--db", "notes", "--limit", "3", ARGUMENTS["query"]
    )
    said = f"the cache folder {cache} cannot be written (Not a directory): searches go on without it, slower"
    assert (done.returncode, done.stdout) == (0, expected + "\n")
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"note: {said}") and line.endswith(
        "set RECALL_GUI_CACHE_DIR to a folder you can write"
    )

    golden = tmp_path / "golden.json"
    check = {"db_name": "notes", "query": ARGUMENTS["query"], "expect": ["pw-reset"], "limit": 3}
    golden.write_text(json.dumps({"checks": [check]}), encoding="utf-8")
    done = run_cli(env, "check", "--registry", str(kb.registry_dir), str(golden))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.splitlines() == [line]
    listed = run_cli(env, "list", "--registry", str(kb.registry_dir))
    assert listed.returncode == 0 and "cache" not in listed.stderr  # no search: nothing to say

    loop = BackgroundLoop()
    try:
        live = loop.hold(live_session(server_parameters(kb.registry_dir, env), tmp_path / "server.log"))
        results = [loop.run(live.session.call_tool("recall_search", ARGUMENTS)) for _ in range(2)]
    finally:
        loop.close()
    for result in results:
        assert not result.is_error
        assert [c.text for c in result.content if isinstance(c, types.TextContent)] == [expected]
    log = live.log()
    assert "Traceback" not in log and "FileNotFoundError" not in log and "NotADirectoryError" not in log
    warnings = [line for line in log.splitlines() if "WARNING" in line]
    assert len(warnings) == 1, log
    assert f"the cache folder {cache} cannot be written" in warnings[0] and "slower" in warnings[0]
    assert not cache.parent.is_dir()  # nothing could be, and nothing was, made there
