"""The headless command line, run as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recall_gui import __version__
from recall_gui.core.base.tool import DEFAULT_DESCRIPTION
from tests.kbtools import KnowledgeBase, cosh_entry, view_entry, write_registry

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "recall_gui", *args],
        check=False,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )


def test_version() -> None:
    done = cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"recall-gui {__version__}"


def test_search_prints_exactly_the_harness_json(kb: KnowledgeBase) -> None:
    done = cli(
        "search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", "2", "capital of France"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["query"] == "capital of France"
    assert data["results"][0]["id"] == "paris"
    assert done.stdout == json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


def test_search_error_goes_to_stderr_with_status_1(kb: KnowledgeBase) -> None:
    done = cli("search", "--registry", str(kb.registry_dir), "--db", "nope", "x")
    assert done.returncode == 1
    assert done.stdout == ""
    assert f"Database 'nope' not found. Active databases: {kb.name}" in done.stderr
    assert "Traceback" not in done.stderr


def test_search_with_a_bad_limit_uses_five_and_says_so(kb: KnowledgeBase) -> None:
    done = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", "-3", "x")
    assert done.returncode == 0
    assert len(json.loads(done.stdout)["results"]) == 5
    assert "using 5" in done.stderr


def config_dir() -> Path:
    directory = Path(os.environ["RECALL_GUI_CONFIG_DIR"])
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def test_tool_prints_the_generated_list_then_the_saved_notes(kb: KnowledgeBase) -> None:
    done = cli("tool", "--registry", str(kb.registry_dir))
    tool = json.loads(done.stdout)
    assert tool["name"] == "recall_search"
    assert tool["description"].startswith(DEFAULT_DESCRIPTION + "\n\nAvailable databases:\n\n- Name: notes\n")
    assert done.stderr == ""
    (config_dir() / "tool_notes.txt").write_text("Saved words.", encoding="utf-8")
    again = json.loads(cli("tool", "--registry", str(kb.registry_dir)).stdout)
    assert again["description"] == tool["description"] + "Saved words."


def test_tool_and_list_warn_when_an_override_leaves_out_an_active_database(kb: KnowledgeBase) -> None:
    (config_dir() / "tool_suffix.txt").write_text("Saved words.", encoding="utf-8")  # recall-gui 0.1's file
    done = cli("tool", "--registry", str(kb.registry_dir))
    assert done.returncode == 0
    assert json.loads(done.stdout)["description"] == DEFAULT_DESCRIPTION + "\n\nSaved words."
    warning = "warning: The tool description agents get leaves out a database that is active (notes).\n"
    assert (
        warning in done.stderr and "hint: Your own text replaces the generated database list" in done.stderr
    )
    listed = cli("list", "--registry", str(kb.registry_dir))
    assert warning in listed.stderr


def test_tool_with_a_suffix_file_that_is_not_utf8_warns_and_prints_the_generated_list(
    kb: KnowledgeBase,
) -> None:
    plain = json.loads(cli("tool", "--registry", str(kb.registry_dir)).stdout)
    suffix = config_dir() / "tool_suffix.txt"
    suffix.write_bytes(b"\xff\xfe broken")
    done = cli("tool", "--registry", str(kb.registry_dir))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout) == plain
    assert f"warning: {suffix} cannot be read: it is not UTF-8 text (byte 0xff at position 0)" in done.stderr
    assert "hint: Agents get the generated database list without your text" in done.stderr


def test_list_shows_health_of_every_database(kb: KnowledgeBase, tmp_path: Path) -> None:
    write_registry(
        kb.registry_dir,
        [
            cosh_entry(kb.name, kb.db_dir),
            cosh_entry("gone", tmp_path / "deleted"),
            {**cosh_entry("wrongtable", kb.db_dir), "table": "missing"},
            view_entry(kb, "wide", model="BGEBaseENV15"),
        ],
        active=[kb.name],
    )
    done = cli("list", "--registry", str(kb.registry_dir), "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows[kb.name]["health"] == dict.fromkeys(
        ("path", "table", "columns", "search", "model", "dimension"), "ok"
    )
    assert rows[kb.name]["rows"] == len(kb.ids) and rows[kb.name]["active"] is True
    assert rows["gone"]["health"]["path"] == "failed"
    assert rows["wrongtable"]["health"]["table"] == "failed"
    assert rows["wide"]["health"]["dimension"] == "failed"
    table = cli("list", "--registry", str(kb.registry_dir)).stdout
    assert "FAILED path" in table and "does not exist" in table


def test_registry_given_before_the_command_is_honoured(kb: KnowledgeBase, tmp_path: Path) -> None:
    """``recall-gui --registry DIR list`` (as an MCP configuration may be written) used to be ignored."""
    before = cli("--registry", str(kb.registry_dir), "list", "--json")
    assert before.returncode == 0, before.stderr
    assert [row["name"] for row in json.loads(before.stdout)] == [kb.name]
    other = write_registry(tmp_path / "other", [cosh_entry("elsewhere", tmp_path / "nowhere")])
    env = {"RECALL_REGISTRY_DIR": str(other)}
    assert json.loads(cli("--registry", str(kb.registry_dir), "list", "--json", env=env).stdout)[0][
        "name"
    ] == (kb.name)
    same = cli("--registry", str(kb.registry_dir), "tool", "--registry", str(kb.registry_dir))
    assert same.returncode == 0 and kb.name in json.loads(same.stdout)["description"]


def test_an_empty_or_doubled_registry_option_is_refused(kb: KnowledgeBase, tmp_path: Path) -> None:
    empty = cli("list", "--registry", "")
    assert empty.returncode == 1 and "--registry was given an empty folder name" in empty.stderr
    doubled = cli("--registry", str(kb.registry_dir), "list", "--registry", str(tmp_path))
    assert doubled.returncode == 1 and "--registry was given twice with different folders" in doubled.stderr
    assert "Traceback" not in empty.stderr + doubled.stderr


def test_search_verbose_says_how_the_search_ran_and_keeps_stdout_the_agents(kb: KnowledgeBase) -> None:
    args = ("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", "1", "Paris")
    quiet, verbose = cli(*args), cli(*args[:1], "--verbose", *args[1:])
    assert verbose.returncode == 0, verbose.stderr
    assert verbose.stdout == quiet.stdout
    # One search per process: a flat scan answers sooner than reading every vector into memory.
    assert f"{kb.name}: 1 results by LanceDB's flat scan" in verbose.stderr
    assert "note: a single search" in verbose.stderr
    assert "ms embedding (" in verbose.stderr
    slow = cli(*args[:1], "--verbose", *args[1:], env={"RECALL_GUI_EXACT_CACHE_MB": "0"})
    assert "by LanceDB's flat scan" in slow.stderr
    assert "note: comparing all rows in memory is off (RECALL_GUI_EXACT_CACHE_MB=0)" in slow.stderr


def test_every_command_has_a_description_in_its_help() -> None:
    for command in ("search", "tool", "list", "demo", "mcp"):
        done = cli(command, "--help")
        assert done.returncode == 0
        assert len(done.stdout.split("\n\n")) >= 3, done.stdout  # usage, description, options


def test_every_command_module_declares_the_name_its_parser_answers_to(capsys: Any) -> None:
    """``recall-gui PATH`` tells a folder from a command by the names the command modules declare: each
    must be the name its parser is registered under."""
    import pytest

    from recall_gui.cli import COMMANDS, build_parser, command_names

    assert len(command_names()) == len(COMMANDS)
    for name in sorted(command_names()):
        with pytest.raises(SystemExit) as done:
            build_parser().parse_args([name, "--help"])
        assert done.value.code == 0, name
        assert f"usage: recall-gui {name}" in capsys.readouterr().out
