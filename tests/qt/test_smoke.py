"""`recall-gui --smoke`: passes only when the window works, fails with the reason otherwise.

Each case runs the real command in a subprocess, as packagers and CI run it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kbtools import KnowledgeBase, cosh_entry, write_registry

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.process]


def smoke(registry_dir: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recall_gui", "--smoke", "--registry", str(registry_dir)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "QT_QPA_PLATFORM": "offscreen",
            "RECALL_GUI_CONFIG_DIR": str(tmp_path / "config"),
            **env,
        },
    )


def test_smoke_start_shows_the_window_takes_typed_input_searches_and_exits_0(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    done = smoke(kb.registry_dir, tmp_path)
    assert done.returncode == 0, done.stderr
    report = next(line for line in done.stderr.splitlines() if line.startswith("smoke:"))
    assert report.startswith("smoke: ok: window shown on offscreen")
    assert "start-up finished" in report
    assert "keyboard input reaches the query field" in report
    assert f"search in {kb.name}: 5 rows" in report
    assert "Agent view: the MCP server lists the tool" in report


def test_smoke_start_fails_when_the_search_in_the_window_fails(kb: KnowledgeBase, tmp_path: Path) -> None:
    gone = tmp_path / "moved-away"
    registry_dir = write_registry(tmp_path / "registry", [cosh_entry(kb.name, gone)])
    done = smoke(registry_dir, tmp_path)
    assert done.returncode == 1
    assert "smoke: failed: search: the window shows an error" in done.stderr
    assert str(gone) in done.stderr  # the reason, as the banner says it


def test_smoke_start_fails_when_no_window_can_be_created(kb: KnowledgeBase, tmp_path: Path) -> None:
    done = smoke(kb.registry_dir, tmp_path, QT_QPA_PLATFORM="no-such-platform")
    assert done.returncode != 0
    assert "smoke: ok" not in done.stderr
