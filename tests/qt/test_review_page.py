"""The Review page with real LanceDB tables and the real model, driven from the keyboard: a new user reviews a
2,000-row database, closes the app, reopens it and goes on where they stopped; Undo; a note; the orders;
entries changed since reviewed shown old and new side by side; "Review from here" on the knowledge page and
the verdicts beside its results. The knowledge base's files are byte-identical before and after (hashes),
and every verdict is read back from the review file by this test's own JSON and hashlib."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.models.results_model import ID, RANK
from recall_gui.qt.pages.review.page import ReviewPage
from tests.kbtools import PASSAGES, cosh_entry, snapshot_tree, write_lance_table, write_registry
from tests.qt.conftest import run, until, window_of

ROWS = 2_000
WIDTH = 384


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def texts_of(rows: int) -> list[str]:
    """Distinct texts; every seventh one far longer than the model reads."""
    passages = list(PASSAGES.values())
    texts = []
    for number in range(rows):
        text = f"Entry {number}: {passages[number % len(passages)]}"
        if number % 7 == 3:
            text += " " + " ".join(f"word{n}" for n in range(600))
        texts.append(text)
    return texts


def write_database(folder: Path, ids: list[str], texts: list[str], vectors: Any = None) -> Path:
    """A cosh-style table "notes" (random unit vectors of the registered model's width unless given) in
    its own registry."""
    import numpy as np

    if vectors is None:
        vectors = np.random.default_rng(5).normal(size=(len(ids), WIDTH)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sources = {"source": [f"doc{i % 9}.md" for i in range(len(ids))]}
    write_lance_table(folder / "db", "notes", ids, texts, vectors, extra=sources)
    return write_registry(folder / "registry", [cosh_entry("notes", folder / "db")])


def review_lines(data_dir: Path, name: str = "notes") -> list[dict[str, Any]]:
    path = data_dir / "reviews" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def standing(lines: list[dict[str, Any]]) -> dict[str, str]:
    """The standing verdict per content digest, by this test's reading of the format (latest wins, an undo
    takes back the record it names)."""
    undone = {line["undoes"] for line in lines if line["kind"] == "undo"}
    found: dict[str, str] = {}
    for line in lines:
        if line["kind"] == "verdict" and line["record"] not in undone:
            found[line["content_sha256"]] = line["verdict"]
    return found


@pytest.fixture
def data_dir(isolated_app_dirs: Path) -> Path:
    return isolated_app_dirs / "data"  # RECALL_GUI_DATA_DIR (tests/conftest.py)


@pytest.fixture
def reviewed_window(loop: asyncio.AbstractEventLoop, tmp_path: Path) -> Iterator[Any]:
    """Windows over one registry and one config folder, made and closed one after another."""

    def make(registry: Path) -> Any:
        return window_of(loop, registry, tmp_path / "config")

    yield make


def page_shown(window: MainWindow, loop: asyncio.AbstractEventLoop) -> ReviewPage:
    """Ctrl+R, then the first entry on screen."""
    window.activateWindow()
    QTest.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    page = window.review
    assert window.pages.currentWidget() is page
    settle(page, loop)
    return page


def settle(page: ReviewPage, loop: asyncio.AbstractEventLoop) -> None:
    """Until the entry shown can be judged, or the end of the order is shown, and nothing is being written."""
    walker = page.walker

    def ready() -> bool:
        at_end = walker.queue is not None and walker.index == len(walker.queue)
        judged = walker.shown is not None and page.bar.buttons["correct"].isEnabled()
        return (at_end or judged) and walker._writes == 0

    run(loop, until(ready, "an entry was shown"))
    run(loop, page.services.operations.wait_idle())


def press(page: ReviewPage, loop: asyncio.AbstractEventLoop, key: Qt.Key, modifiers: Any = None) -> None:
    target = QApplication.focusWidget() or page
    if modifiers is None:
        QTest.keyClick(target, key)
    else:
        QTest.keyClick(target, key, modifiers)
    settle(page, loop)


def shown_sha(page: ReviewPage) -> str:
    assert page.walker.shown is not None
    return sha(page.entry_view.content.toPlainText())


@pytest.mark.slow
def test_a_new_user_reviews_from_the_keyboard_closes_and_goes_on_where_they_stopped(
    reviewed_window: Any, loop: asyncio.AbstractEventLoop, tmp_path: Path, data_dir: Path
) -> None:
    ids = [f"e{number}" for number in range(ROWS)]
    texts = texts_of(ROWS)
    registry = write_database(tmp_path / "kb", ids, texts)
    before = snapshot_tree(tmp_path / "kb")
    given: dict[str, str] = {}  # content digest -> verdict, as pressed
    with reviewed_window(registry) as window:
        run(loop, window.start())
        page = page_shown(window, loop)
        assert page.order_combo.currentText() == "not reviewed yet"
        assert page.entry_view.content.toPlainText() == texts[0]
        assert page.progress_label.text() == "reviewed 0 of 2,000 · no agent calls this month"
        assert page.counter_label.text() == "entry 1 of 2,000 · not reviewed yet"
        for key, verdict in ((Qt.Key.Key_1, "correct"), (Qt.Key.Key_3, "wrong"), (Qt.Key.Key_2, "outdated")):
            given[shown_sha(page)] = verdict
            press(page, loop, key)
        # Entry 3 (its text longer than the model reads): the cut is tinted, the count says where.
        assert page.entry_view.content.toPlainText() == texts[3]
        run(loop, until(lambda: " reads " in page.facts.tokens.text(), "the tokens were counted"))
        unread = page.entry_view.unread_text()
        assert unread and texts[3].endswith(unread) and len(unread) < len(texts[3])
        assert f"of {len(texts[3]):,} characters" in page.facts.tokens.text()
        assert page.facts.vector.message == "384-d · norm 1.0000"
        # A note, then the letter keys.
        press(page, loop, Qt.Key.Key_N)
        assert page.bar.note.hasFocus()
        QTest.keyClicks(page.bar.note, "figures from 2019")
        press(page, loop, Qt.Key.Key_Return)
        given[shown_sha(page)] = "wrong"
        press(page, loop, Qt.Key.Key_W)
        for key, verdict in ((Qt.Key.Key_S, "skip"), (Qt.Key.Key_D, "duplicate"), (Qt.Key.Key_C, "correct")):
            given[shown_sha(page)] = verdict
            press(page, loop, key)
        # Undo takes the last verdict back and shows its entry again.
        undone = next(reversed(given))
        press(page, loop, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        assert shown_sha(page) == undone == sha(texts[6])
        del given[undone]
        stopped = page.entry_view.content.toPlainText()
        assert (
            page.progress_label.text()
            == "reviewed 5 of 2,000 · 2 wrong · 1 outdated · no agent calls this month"
        )
        assert page.counter_label.text() == "entry 7 of 2,000 · not reviewed yet"
    lines = review_lines(data_dir)
    assert standing(lines) == given
    noted = [line for line in lines if line["note"]]
    assert [(line["id"], line["verdict"], line["note"]) for line in noted] == [
        ("e3", "wrong", "figures from 2019")
    ]
    assert {line["id"] for line in lines} == {f"e{n}" for n in range(7)}
    assert all(line["table_version"] == 1 and line["db"] == "notes" for line in lines)

    # Reopened over the same folders: the same page, the same entry, the same progress.
    with reviewed_window(registry) as window:
        run(loop, window.start())
        page = window.review
        assert window.pages.currentWidget() is page
        settle(page, loop)
        assert page.entry_view.content.toPlainText() == stopped
        assert (
            page.progress_label.text()
            == "reviewed 5 of 2,000 · 2 wrong · 1 outdated · no agent calls this month"
        )
        press(page, loop, Qt.Key.Key_4)
        assert page.entry_view.content.toPlainText() == texts[7]
    assert standing(review_lines(data_dir)) == {**given, sha(stopped): "duplicate"}
    assert snapshot_tree(tmp_path / "kb") == before


def test_the_knowledge_page_reviews_from_the_selected_entry_and_marks_its_results(
    reviewed_window: Any,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    data_dir: Path,
    passage_vectors: Any,
) -> None:
    ids, texts = list(PASSAGES), list(PASSAGES.values())
    write_lance_table(tmp_path / "kb" / "db", "notes", ids, texts, passage_vectors)
    registry = write_registry(tmp_path / "kb" / "registry", [cosh_entry("notes", tmp_path / "kb" / "db")])
    before = snapshot_tree(tmp_path / "kb")
    with reviewed_window(registry) as window:
        run(loop, window.start())
        knowledge = window.knowledge
        run(
            loop,
            knowledge.searching.search(knowledge.read_inputs()._replace(query="ocean tides and the Moon")),
        )
        results = knowledge.results.results_model
        top = results.hit(0)
        assert top.id == "tides"
        table = knowledge.results.results_table
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        table.selectionModel().setCurrentIndex(results.index(0, 0), flags)
        window.activateWindow()
        QTest.keyClick(
            window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
        )
        page = window.review
        assert window.pages.currentWidget() is page
        settle(page, loop)
        assert page.entry_view.content.toPlainText() == PASSAGES["tides"]
        assert page.entry_view.title.text() == f"tides·{sha(PASSAGES['tides'])[:8]}"
        press(page, loop, Qt.Key.Key_3)  # wrong
        assert standing(review_lines(data_dir)) == {sha(PASSAGES["tides"]): "wrong"}
        # Back on the knowledge page, the result is flagged; the others are not.
        window.pages.setCurrentWidget(knowledge)
        run(loop, until(lambda: results.verdict_mark(0) is not None, "the verdict was looked up"))
        assert str(results.index(0, RANK).data()) == "1  ✗"
        assert "Marked wrong by" in str(results.index(0, ID).data(Qt.ItemDataRole.ToolTipRole))
        assert results.index(0, RANK).data(Qt.ItemDataRole.ForegroundRole) is not None
        assert all(results.verdict_mark(row) is None for row in range(1, results.rowCount()))
        # The agent's answer is the same: a verdict shows, it does not filter.
        run(
            loop,
            knowledge.searching.search(knowledge.read_inputs()._replace(query="ocean tides and the Moon")),
        )
        assert results.hit(0).id == "tides"
    assert snapshot_tree(tmp_path / "kb") == before
