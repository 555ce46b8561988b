"""Outputs never replace the app's own records or the agents' registry: one rule (``output_problem``) for
every file the app writes where the user says (``check --junit``, the window's export, the checks saved
as). Refused, each with what it is, and left as it was: cosh's ``rag_dbs.json`` and ``rag_active.json``
(any registry's), the agent log, a golden file, the settings, the notes and ``window.ini`` (anything in
the settings folder), the review files, the golden checks' last runs. The window's side is in
tests/qt/test_outputs_spare_records_window.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from recall_gui.core.base.output_paths import output_problem
from recall_gui.core.base.paths import cosh_registry_dir
from tests.core.test_check_command import golden
from tests.core.test_cli import cli
from tests.core.test_output_paths import GOOD_CHECK, state
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry

REGISTRY_SAID = "it is a file of the agents' registry ({name}): agents would lose their databases"
LOG_SAID = "it is the agent log, the app's record of what agents asked"
GOLDEN_SAID = "it is a golden file (checks of what agents should find), which only the checks are saved to"


def folder_said(what: str, folder: Path) -> str:
    return f"it lies in {what}, {folder}, which only the app writes"


def records(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """The app's records and the agents' registry, made as the app and cosh make them, and what the
    refusal of each says."""
    cosh = write_registry(cosh_registry_dir(), [cosh_entry("python-docs", tmp_path / "db")])
    other = write_registry(tmp_path / "elsewhere", [cosh_entry("notes", tmp_path / "db")])
    config, data = Path(os.environ["RECALL_GUI_CONFIG_DIR"]), Path(os.environ["RECALL_GUI_DATA_DIR"])
    for folder in (config, data / "reviews", data / "checks" / "last-runs"):
        folder.mkdir(parents=True, exist_ok=True)
    for path in (
        data / "agent-log.jsonl",
        data / "agent-log.1.jsonl",
        config / "settings.json",
        config / "window.ini",
        config / "tool_notes.txt",
        data / "reviews" / "notes.json",
        data / "checks" / "last-runs" / "0123.json",
    ):
        path.write_text('{"kept": true}\n', encoding="utf-8")
    return {
        "cosh's rag_dbs.json": (cosh / "rag_dbs.json", REGISTRY_SAID.format(name="rag_dbs.json")),
        "cosh's rag_active.json": (cosh / "rag_active.json", REGISTRY_SAID.format(name="rag_active.json")),
        "another registry's rag_dbs.json": (
            other / "rag_dbs.json",
            REGISTRY_SAID.format(name="rag_dbs.json"),
        ),
        "a new file in cosh's folder": (cosh / "x.csv", folder_said("the agents' registry folder", cosh)),
        "the agent log": (data / "agent-log.jsonl", LOG_SAID),
        "the agent log's older file": (data / "agent-log.1.jsonl", LOG_SAID),
        "a golden file": (golden(tmp_path, [GOOD_CHECK], "mine.json"), GOLDEN_SAID),
        "settings.json": (config / "settings.json", folder_said("the app's settings folder", config)),
        "window.ini": (config / "window.ini", folder_said("the app's settings folder", config)),
        "the notes": (config / "tool_notes.txt", folder_said("the app's settings folder", config)),
        "the override, not yet saved": (
            config / "tool_override.txt",
            folder_said("the app's settings folder", config),
        ),
        "a review file": (
            data / "reviews" / "notes.json",
            folder_said("the app's review files", data / "reviews"),
        ),
        "a new review file": (
            data / "reviews" / "new.json",
            folder_said("the app's review files", data / "reviews"),
        ),
        "a last run": (
            data / "checks" / "last-runs" / "0123.json",
            folder_said("the app's record of golden checks' last runs", data / "checks" / "last-runs"),
        ),
    }


def test_every_record_is_refused_naming_what_it_is(tmp_path: Path) -> None:
    for name, (path, said) in records(tmp_path).items():
        assert output_problem(path) == said, name


def test_a_link_to_a_record_is_refused_as_the_record(tmp_path: Path) -> None:
    for name, (path, said) in records(tmp_path).items():
        link = tmp_path / "links" / path.name
        link.parent.mkdir(exist_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(path)
        assert output_problem(link) == said, name


def test_the_agent_log_moved_elsewhere_is_refused_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALL_GUI_AGENT_LOG_DIR", str(tmp_path / "log"))
    assert output_problem(tmp_path / "log" / "agent-log.jsonl") == LOG_SAID
    assert output_problem(tmp_path / "log" / "calls.csv") is None  # other files there are the user's


def test_other_files_are_still_written_and_a_golden_file_replaced_by_the_checks(tmp_path: Path) -> None:
    old_export = tmp_path / "results.json"
    old_export.write_text(json.dumps({"results": [], "checks_run": 3}), encoding="utf-8")
    data = Path(os.environ["RECALL_GUI_DATA_DIR"])
    assert output_problem(tmp_path / "new.csv") is None
    assert output_problem(old_export) is None
    assert output_problem(data / "checks" / "new.json") is None  # where golden files are saved
    golden_path = golden(tmp_path, [GOOD_CHECK], "mine.json")
    assert output_problem(golden_path, golden_file=True) is None  # the checks saved over their file
    assert output_problem(golden_path) == GOLDEN_SAID


@pytest.mark.process
def test_check_refuses_a_junit_report_onto_any_record_and_leaves_it(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    golden_path = golden(tmp_path, [GOOD_CHECK])
    for name, (out, said) in records(tmp_path).items():
        if name not in (
            "cosh's rag_dbs.json",
            "the agent log",
            "a golden file",
            "settings.json",
            "a review file",
        ):
            continue  # the rest is the same rule (above); each run starts a process
        before = state(out)
        done = cli("check", "--registry", str(kb.registry_dir), "--junit", str(out), str(golden_path))
        assert done.returncode == 2 and done.stdout == "", (name, done.stderr)
        assert done.stderr.startswith(f"error: the JUnit report was not written to {out}: {said}\n"), name
        assert state(out) == before, name
