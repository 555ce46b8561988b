"""A broken, missing or empty registry, and a database that is not there, are named for what they are, with
what to do — through ``list``, ``search``, ``tool``, ``mcp`` and the MCP server's log alike."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from recall_gui.cli import main as cli_main
from recall_gui.core.base.errors import DatabaseNotFoundError
from recall_gui.core.base.paths import app_registry_dir
from recall_gui.core.search.harness import Harness
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry

BROKEN_JSON = '{"dbs": [\n  {"name": "a",}\n]}'
WHERE = "is not valid JSON: Expecting property name enclosed in double quotes at line 2 column 16"


def broken_registry(tmp_path: Path) -> Path:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "rag_dbs.json").write_text(BROKEN_JSON, encoding="utf-8")
    (folder / "rag_active.json").write_text('["a"]', encoding="utf-8")
    return folder


def run_cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    code = cli_main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# --- a broken registry --------------------------------------------------------------------------------


def test_search_names_the_registry_problem_with_file_line_and_column(tmp_path: Path, capsys: Any) -> None:
    folder = broken_registry(tmp_path)
    code, out, err = run_cli(capsys, "search", "--registry", str(folder), "--db", "a", "x")
    assert code == 1 and out == ""
    assert "error: Database 'a' not found. Active databases: (none)\n" in err
    assert f"{folder / 'rag_dbs.json'}: {WHERE}" in err.split("hint: ", 1)[1]
    assert "description panel" not in err


def test_list_calls_a_registry_that_does_not_parse_an_error(tmp_path: Path, capsys: Any) -> None:
    folder = broken_registry(tmp_path)
    code, _out, err = run_cli(capsys, "list", "--registry", str(folder))
    assert code == 1
    assert f"error: {folder / 'rag_dbs.json'}: {WHERE}" in err
    assert "hint: Nothing is registered" not in err  # it is not empty, it is broken


def test_tool_prints_the_tool_and_fails_on_a_broken_registry(tmp_path: Path, capsys: Any) -> None:
    folder = broken_registry(tmp_path)
    code, out, err = run_cli(capsys, "tool", "--registry", str(folder))
    assert code == 1 and json.loads(out)["name"] == "recall_search"
    assert f"warning: {folder / 'rag_dbs.json'}: {WHERE}" in err


# --- a registry folder that is not there ----------------------------------------------------------------


@pytest.mark.parametrize("via", ["option", "environment"])
def test_a_registry_folder_that_does_not_exist_is_named(
    via: str, tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere"
    given: list[str] = ["--registry", str(missing)] if via == "option" else []
    if via == "environment":
        monkeypatch.setenv("RECALL_REGISTRY_DIR", str(missing))
    origin = "(given with --registry)" if via == "option" else "(from $RECALL_REGISTRY_DIR)"
    said = f"the registry folder {missing} {origin} does not exist"

    code, out, err = run_cli(capsys, "list", *given)
    assert code == 1 and out == "" and f"error: {said}\n" in err
    code, out, err = run_cli(capsys, "search", *given, "--db", "a", "x")
    assert code == 1 and out == "" and f"error: {said}\n" in err
    code, out, err = run_cli(capsys, "tool", *given)
    assert code == 1 and json.loads(out)["name"] == "recall_search" and f"warning: {said}\n" in err
    assert not missing.exists()


def test_a_registry_path_that_is_a_file_or_a_device_is_named(tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "file").write_text("x")
    for path, what in ((tmp_path / "file", "is a file"), (Path("/dev/null"), "is a device")):
        code, _out, err = run_cli(capsys, "list", "--registry", str(path))
        assert code == 1
        assert f"error: the registry folder {path} (given with --registry) {what}, not a folder" in err


def test_demo_refuses_a_registry_path_that_is_no_folder_before_embedding(capsys: Any) -> None:
    code, out, err = run_cli(capsys, "demo", "--registry", "/dev/null")
    assert code == 1 and out == ""
    assert "error: the registry folder /dev/null (given with --registry) is a device, not a folder" in err
    assert "embedding passages" not in err


# --- a fresh install, and a name that is not there -----------------------------------------------------


def test_a_fresh_install_says_how_to_get_a_database(capsys: Any) -> None:
    assert not app_registry_dir().exists()
    code, out, err = run_cli(capsys, "list")
    assert code == 0
    assert out == f"(no databases registered in {app_registry_dir()})\n"
    assert "hint: Nothing is registered yet. Build the demo knowledge base with `recall-gui demo`" in err

    code, out, err = run_cli(capsys, "search", "--db", "python-docs", "x")
    assert code == 1
    hint = err.split("hint: ", 1)[1]
    assert hint.startswith(f'No database called "python-docs" is registered in {app_registry_dir()}.')
    assert "`recall-gui demo`" in hint and "activate" not in hint.lower()
    assert not app_registry_dir().exists()


def test_an_inactive_database_is_to_be_activated_a_missing_one_to_be_added(
    kb: KnowledgeBase, capsys: Any
) -> None:
    write_registry(
        kb.registry_dir, [cosh_entry(kb.name, kb.db_dir), cosh_entry("archive", kb.db_dir)], [kb.name]
    )
    code, _out, err = run_cli(capsys, "search", "--registry", str(kb.registry_dir), "--db", "archive", "x")
    assert code == 1
    # The command first: the hint is read in a terminal.
    assert (
        'hint: "archive" is registered but not active. Activate it with `recall-gui activate archive`, '
        "on the window's Agent's tool description page, or with cosh.\n" in err
    )
    code, _out, err = run_cli(capsys, "search", "--registry", str(kb.registry_dir), "--db", "nope", "x")
    assert f'hint: No database called "nope" is registered in {kb.registry_dir}. Check the name' in err
    assert "recall-gui demo" not in err  # not the app's own registry: the demo would not land here


def test_the_agent_gets_cosh_words_and_the_log_gets_the_right_hint(
    kb: KnowledgeBase, caplog: pytest.LogCaptureFixture
) -> None:
    from recall_gui.mcp.server import call_recall_search

    write_registry(
        kb.registry_dir, [cosh_entry(kb.name, kb.db_dir), cosh_entry("archive", kb.db_dir)], [kb.name]
    )

    async def call(name: str) -> Any:
        harness = Harness(kb.registry_dir)
        try:
            return await call_recall_search(harness, {"db_name": name, "query": "x"})
        finally:
            await harness.aclose()

    with caplog.at_level("WARNING", logger="recall_gui.mcp"):
        inactive, missing = asyncio.run(call("archive")), asyncio.run(call("nope"))
    assert (
        inactive.is_error
        and inactive.content[0].text == f"Database 'archive' not found. Active databases: {kb.name}"
    )
    assert missing.content[0].text == f"Database 'nope' not found. Active databases: {kb.name}"
    assert (
        '"archive" is registered but not active. Activate it with `recall-gui activate archive`'
        in caplog.text
    )
    assert 'No database called "nope" is registered' in caplog.text


def test_the_mcp_command_warns_of_a_registry_folder_that_does_not_exist(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "recall_gui", "mcp", "--registry", str(tmp_path / "nowhere")],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(root)},
        check=False,
    )
    assert (
        f"warning: the registry folder {tmp_path / 'nowhere'} (given with --registry) does not exist"
        in done.stderr
    )


def test_the_harness_hint_names_a_registry_folder_that_does_not_exist(tmp_path: Path) -> None:
    async def go() -> DatabaseNotFoundError:
        harness = Harness(tmp_path / "nowhere")
        try:
            with pytest.raises(DatabaseNotFoundError) as caught:
                await harness.run({"db_name": "a", "query": "x"})
            return caught.value
        finally:
            await harness.aclose()

    error = asyncio.run(go())
    assert error.hint is not None and "The registry folder does not exist." in error.hint
