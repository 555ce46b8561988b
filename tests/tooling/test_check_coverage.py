"""tests/check_coverage.py: a module on the full-coverage list that loses a line or a branch, a listed
module that is gone, and a module that reached full coverage unlisted each fail the run, by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.check_coverage import main, problems, read_list, read_report, read_varying

pytestmark = pytest.mark.process  # coverage.py measures in processes of its own

MODULE = """
def clamp(x):
    if x < 0:
        x = 0
    return x


def log(x, out):
    if x:
        out.append(x)
"""


def measured(tmp_path: Path, *calls: int) -> dict[str, object]:
    """coverage.py's own JSON report of ``clamp`` and ``log`` called with ``calls`` (in a process of its
    own: one process has one tracer, which a run under ``--cov`` already uses)."""
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "signs.py").write_text(MODULE, encoding="utf-8")
    calling = f"from pkg.signs import clamp, log\nfor x in {calls!r}:\n    clamp(x)\n    log(x, [])\n"
    (tmp_path / "run.py").write_text(calling, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE", "COVERAGE"))}
    for command in (["run", "--branch", "--source=pkg", "run.py"], ["json", "-q", "-o", "coverage.json"]):
        subprocess.run([sys.executable, "-m", "coverage", *command], cwd=tmp_path, env=env, check=True)
    report: dict[str, object] = json.loads((tmp_path / "coverage.json").read_text(encoding="utf-8"))
    return report


def test_a_listed_module_that_misses_a_branch_is_named_with_it(tmp_path: Path) -> None:
    modules = read_report(measured(tmp_path, -1))  # every line runs; clamp's x >= 0 and log's falsy x never
    assert problems(modules, ["pkg/signs.py"]) == [
        "pkg/signs.py: branches 3->5, 9->exit did not run: it is held at full coverage (full_coverage.txt)"
    ]


def test_a_listed_module_that_misses_a_line_is_named_with_it(tmp_path: Path) -> None:
    modules = read_report(measured(tmp_path, 1))  # x = 0 never runs
    assert problems(modules, ["pkg/signs.py"]) == [
        "pkg/signs.py: lines 4; branches 3->4, 9->exit did not run: it is held at full coverage "
        "(full_coverage.txt)"
    ]


def test_a_fully_covered_module_must_be_listed_and_then_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules = read_report(measured(tmp_path, -1, 1, 0))
    assert problems(modules, []) == [
        "pkg/signs.py is fully covered now: add it to full_coverage.txt so it stays so"
    ]
    assert problems(modules, ["pkg/signs.py"]) == []


def test_a_listed_module_that_is_gone_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    modules = read_report(measured(tmp_path, -1, 1, 0))
    assert problems(modules, ["pkg/signs.py", "pkg/moved.py"]) == [
        "pkg/moved.py is on full_coverage.txt but was not measured (moved or removed? update the list)"
    ]


def test_the_list_is_paths_with_comments_and_blank_lines_left_out() -> None:
    text = "# held at 100%\n\nrecall_gui/core/search/nearest.py  # the search\nrecall_gui/core/a.py\n"
    assert read_list(text) == ["recall_gui/core/search/nearest.py", "recall_gui/core/a.py"]
    assert read_varying(text) == []


def test_a_module_marked_as_varying_is_neither_held_nor_named_when_full(tmp_path: Path) -> None:
    text = "pkg/other.py\n~ pkg/signs.py  # a cancel races the job's end\n"
    assert read_list(text) == ["pkg/other.py"] and read_varying(text) == ["pkg/signs.py"]
    full = read_report(measured(tmp_path, -1, 1, 0))
    assert problems(full, [], read_varying(text)) == []
    partial = read_report(measured(tmp_path, -1))
    assert problems(partial, [], read_varying(text)) == []
    assert problems(partial, [], ["pkg/moved.py"]) == [
        "pkg/moved.py is marked ~ on full_coverage.txt but was not measured (moved or removed?)"
    ]


def test_the_command_fails_on_a_problem_and_passes_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = measured(tmp_path, -1)
    (tmp_path / "partial.json").write_text(json.dumps(report), encoding="utf-8")
    listed = tmp_path / "list.txt"
    listed.write_text("pkg/signs.py\n", encoding="utf-8")
    monkeypatch.setattr("tests.check_coverage.LIST", listed)
    assert main([str(tmp_path / "partial.json")]) == 1
    assert "pkg/signs.py: branches 3->5, 9->exit did not run" in capsys.readouterr().err
    listed.write_text("", encoding="utf-8")
    assert main([str(tmp_path / "partial.json")]) == 0
