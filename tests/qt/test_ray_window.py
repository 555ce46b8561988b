"""The Ray engine in the window (its command-line side is in tests/core/test_ray_engine.py and
test_ray_faults.py): the Duplicates and Checks pages run their jobs on Ray with progress, and an address
nothing listens at is said within the bound."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QComboBox, QPushButton

from recall_gui.core.inspect.duplicates import find_duplicates
from recall_gui.core.session.session import Session
from tests.core.test_cli import cli
from tests.core.test_duplicates import planted  # noqa: F401 (a fixture)
from tests.core.test_ray_engine import checks_of_two_databases
from tests.core.test_ray_faults import BOUND_S, closed_port
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import run, waiting_for


@pytest.mark.process
@pytest.mark.ray
def test_the_window_runs_both_jobs_on_ray_with_progress(
    ray_address: str,
    planted: tuple[KnowledgeBase, dict[str, set[str]]],  # noqa: F811 (the fixture imported)
    make_kb: Any,
    tmp_path: Path,
    session: Session,
    open_window: Any,
    loop: asyncio.AbstractEventLoop,
) -> None:
    """Engine: Ray on the Duplicates page and the Checks page: the local engine's groups and outcomes,
    the progress bar filled, the engine's combo locked while the job runs."""
    kb, _expected = planted
    local = run(loop, find_duplicates(session, kb.target))
    window = open_window(kb.registry_dir)
    page = window.duplicates
    engine = page.findChild(QComboBox, "duplicatesEngine")
    engine.setCurrentIndex(engine.findText("Ray"))
    shares: list[int] = []
    page.progress.valueChanged.connect(shares.append)
    locked: list[bool] = []
    # The bar is reset to 0 before the run begins; every share the job reports comes while it runs.
    page.progress.valueChanged.connect(lambda value: value and locked.append(not engine.isEnabled()))
    with waiting_for(loop, page.searchFinished):
        page.findChild(QPushButton, "duplicatesFindButton").click()
    assert page.report is not None, page.note.message
    assert page.report.to_dict() == local.to_dict()
    assert page.note.message.startswith(f"{len(local.groups)} groups in {kb.name}: ")
    assert shares[-1] == 1000 and locked and all(locked)
    assert engine.isEnabled()

    registry, path = checks_of_two_databases(make_kb, tmp_path)
    expected = cli("check", "--registry", str(registry), "--json", str(path))
    window = open_window(registry)
    checks = window.checks
    assert checks.open_file(path)
    combo = checks.findChild(QComboBox, "checksEngine")
    combo.setCurrentIndex(combo.findText("Ray"))
    with waiting_for(loop, checks.runFinished):
        checks.findChild(QPushButton, "checksRunButton").click()
    ran = checks.runner.last_run
    assert ran is not None, checks.note.message
    assert ran.to_dict() == json.loads(expected.stdout)
    assert checks.progress.value() == len(ran.outcomes)


def test_the_window_says_an_address_nothing_listens_at_cannot_be_reached(
    kb: KnowledgeBase,
    open_window: Any,
    loop: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Engine: Ray on the Duplicates page with ``RAY_ADDRESS`` naming a closed port: the page's note
    names the address, within the bound."""
    address = f"127.0.0.1:{closed_port()}"
    monkeypatch.setenv("RAY_ADDRESS", address)
    page = open_window(kb.registry_dir).duplicates
    engine = page.findChild(QComboBox, "duplicatesEngine")
    engine.setCurrentIndex(engine.findText("Ray"))
    started = time.monotonic()
    with waiting_for(loop, page.searchFinished, timeout=BOUND_S):
        page.findChild(QPushButton, "duplicatesFindButton").click()
    assert time.monotonic() - started < BOUND_S
    assert page.report is None
    assert page.note.message.startswith(f"could not reach the Ray cluster at {address}: the connection was")
