"""Control characters in registry names, agents' queries and clients' names reach no terminal raw: the
CLI prints them escaped (the MCP server's log is tested in tests/mcp/test_server_wire.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_gui.core.agents.agent_log import LogFiles
from recall_gui.core.agents.call_record import CallRecord, now_iso
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, view_entry, write_registry

EVIL = "odd\x1b]0;owned\x07\x1b[2J\rname\u202e"
ESCAPED = "odd\\x1b]0;owned\\x07\\x1b[2J\\rname\\u202e"


def raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F or c == "\u202e"]


def test_list_and_search_print_a_registry_name_escaped(kb: KnowledgeBase, tmp_path: Path) -> None:
    registry_dir = tmp_path / "registry"
    write_registry(registry_dir, [view_entry(kb, EVIL)], active=[EVIL])
    listed = cli("list", "--registry", str(registry_dir))
    assert ESCAPED in listed.stdout
    assert raw_controls(listed.stdout + listed.stderr) == []
    missing = cli("search", "--registry", str(registry_dir), "--db", EVIL + "x", "paris")
    assert missing.returncode == 1
    assert ESCAPED + "x" in missing.stderr
    assert raw_controls(missing.stderr) == []


def test_log_prints_what_an_agent_chose_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from recall_gui.cli import main

    call = CallRecord(
        time=now_iso(),
        client=EVIL,
        client_version="1",
        tool="recall_search",
        arguments={"db_name": EVIL, "query": "q"},
        error=f"Database '{EVIL}' not found",
    )
    LogFiles(tmp_path).append(call.to_line(), 10**6)
    monkeypatch.setenv("RECALL_GUI_AGENT_LOG_DIR", str(tmp_path))
    assert main(["log"]) == 0
    out, err = capsys.readouterr()
    assert out.count(ESCAPED) == 3  # the client, the database and the error
    assert raw_controls(out + err) == []
