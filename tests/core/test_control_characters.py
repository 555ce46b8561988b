"""Control characters in registry names, agents' queries and clients' names reach no terminal raw: the
CLI prints them escaped (the MCP server's log is tested in tests/mcp/test_server_wire.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_gui.core.agent_log.agent_log import LogFiles
from recall_gui.core.agent_log.call_record import CallRecord, now_iso
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, cosh_entry, view_entry, write_registry

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

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


@pytest.mark.parametrize("name", ["esc\x1b[31mred", "two\nlines", "bell\x07", "back\u202ewards"])
def test_register_refuses_a_name_with_a_control_character_and_echoes_it_escaped(
    kb: KnowledgeBase, tmp_path: Path, name: str
) -> None:
    registry = write_registry(tmp_path / "registry", [])
    before = (registry / "rag_dbs.json").read_bytes()
    done = cli("register", str(kb.db_dir), "--name", name, "--registry", str(registry))
    assert done.returncode != 0 and done.stdout == ""
    assert "holds a control character" in done.stderr and "could not show it" in done.stderr
    assert raw_controls(done.stderr) == []
    assert (registry / "rag_dbs.json").read_bytes() == before  # nothing written


def test_register_unregister_and_activation_print_names_from_the_registry_escaped(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    """A name cosh (or an editor) wrote with control characters: every command that names it prints it
    escaped."""
    registry = write_registry(tmp_path / "registry", [{**cosh_entry(EVIL, kb.db_dir), "table": kb.name}])
    for args in (("deactivate", EVIL), ("activate", EVIL), ("activate", EVIL), ("unregister", EVIL)):
        done = cli(*args, "--registry", str(registry))
        assert done.returncode == 0, done.stderr
        assert ESCAPED in done.stdout
        assert raw_controls(done.stdout + done.stderr) == []
    taken = write_registry(tmp_path / "taken", [{**cosh_entry(EVIL, kb.db_dir), "table": kb.name}])
    done = cli("register", str(kb.db_dir), "--name", "fine", "--registry", str(taken))
    assert done.returncode == 0, done.stderr
    assert raw_controls(done.stdout + done.stderr) == []


def test_check_prints_a_hostile_tag_database_and_id_escaped(kb: KnowledgeBase, tmp_path: Path) -> None:
    """A golden file's tag, database name and expected id with control characters: the text output and
    its error line show them escaped."""
    from tests.core.test_check_command import golden

    path = golden(
        tmp_path,
        [
            {"db_name": kb.name, "query": "capital of France\u202e", "expect": [EVIL], "tag": EVIL},
            {"db_name": kb.name, "query": "capital of France", "expect": [EVIL]},
            {"db_name": EVIL, "query": "x", "expect": ["paris"]},
        ],
    )
    done = cli("check", "--registry", str(kb.registry_dir), str(path))
    assert done.returncode == 2
    assert raw_controls(done.stdout + done.stderr) == []
    assert f"       {ESCAPED}: missing" in done.stdout.splitlines()
    assert done.stdout.count(ESCAPED) >= 4  # the tag, the ids, the unknown database
    assert ESCAPED in done.stderr


def test_search_says_why_its_answer_is_empty_with_the_filter_escaped(kb: KnowledgeBase) -> None:
    # quoted() shows ESC as a symbol but keeps a direction override, inside isolates, for the window.
    where = "id = 'esc\x1b[31m back\u202ewards'"
    done = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--where", where, "paris")
    assert done.returncode == 0, done.stderr
    shown = "\\u2068id = 'esc\u241b[31m back\\u202ewards'\\u2069"
    assert done.stderr == f"note: No row matches the filter “{shown}” ({kb.name} has {len(kb.ids)} rows).\n"
    assert raw_controls(done.stderr) == []


def test_search_verbose_prints_a_registry_name_escaped(kb: KnowledgeBase, tmp_path: Path) -> None:
    registry_dir = tmp_path / "registry"
    write_registry(registry_dir, [view_entry(kb, EVIL)], active=[EVIL])
    done = cli("search", "--registry", str(registry_dir), "--db", EVIL, "--verbose", "paris")
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"{ESCAPED}: 5 results by ")
    assert raw_controls(done.stderr) == []
