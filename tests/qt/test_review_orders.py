"""The Review page's orders and review files with real LanceDB tables: exactly the entries whose text changed
since they were reviewed, old and new side by side; near-copies from the Duplicates page's report; a
filter; an order whose report was never made, said with what to do; a review file of the user's own (kept
in git), remembered; a place inside the knowledge base refused; a damaged line reported and kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from recall_gui.core.review.reviewing import open_review
from recall_gui.core.session.session import Session
from recall_gui.qt.pages.review.page import ReviewPage
from tests.kbtools import snapshot_tree
from tests.qt.conftest import WindowFactory, run, until, waiting_for
from tests.qt.test_review_page import page_shown, press, settle, sha, standing, write_database
from tests.reviewtools import record_line, write_table

IDS = [f"e{number}" for number in range(30)]
TEXTS = [
    f"Fact {number}: the store opens at {number % 12 + 1} o'clock.\nAsk at the desk." for number in range(30)
]


def choose_order(page: ReviewPage, loop: asyncio.AbstractEventLoop, label: str) -> None:
    index = page.order_combo.findText(label)
    assert index >= 0, label
    with waiting_for(loop, page.walker.opened):
        page.order_combo.setCurrentIndex(index)
        page.order_combo.activated.emit(index)  # as when the user picks it, again or not
    settle(page, loop)


def walk(page: ReviewPage, loop: asyncio.AbstractEventLoop) -> list[str]:
    """The texts of the order from the entry shown to its end, walked with J."""
    texts: list[str] = []
    queue = page.walker.queue
    assert queue is not None
    while page.walker.shown is not None:
        assert len(texts) < len(queue), "J walks on"
        texts.append(page.entry_view.content.toPlainText())
        press(page, loop, Qt.Key.Key_J)
    return texts


def test_exactly_the_entries_changed_since_reviewed_show_their_old_and_new_text_side_by_side(
    open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    table = write_table(tmp_path / "kb", IDS, TEXTS)
    session = Session(keep_vectors=False)
    review = run(loop, open_review(session, table.entry()))
    for position, verdict in ((1, "correct"), (2, "wrong"), (3, "outdated"), (4, "skip"), (5, "correct")):
        review.mark(position, verdict)
    run(loop, session.aclose())
    changed = {
        1: "Fact 1: the store opens at 9 o'clock.\nAsk at the desk.",
        2: "Fact 2: closed.",
        3: "Fact 3.",
    }
    texts = list(TEXTS)
    for position, text in {**changed, 4: "Fact 4: skipped, then changed."}.items():
        texts[position] = text
    table.rewrite(IDS, texts)  # a new version: three reviewed texts changed, and a skipped one
    before = snapshot_tree(tmp_path / "kb")

    window = open_window(table.registry_dir)
    page = page_shown(window, loop)
    choose_order(page, loop, "changed since reviewed")
    assert page.counter_label.text() == "entry 1 of 3 · changed since reviewed"
    seen = []
    while page.walker.shown is not None:
        position = page.walker.shown.position
        seen.append(position)
        view = page.entry_view
        assert view.showing_changed
        old = "\n".join(line.text for line in view.old_text.lines if line.kind != "folded")
        new = "\n".join(line.text for line in view.new_text.lines if line.kind != "folded")
        assert (old, new) == (TEXTS[position], texts[position])
        assert {line.kind for line in view.old_text.lines} <= {"same", "removed"}
        assert {line.kind for line in view.new_text.lines} <= {"same", "added"}
        assert view.standing.message.startswith(f"Changed since reviewed: e{position} held another text")
        assert f"in version {review.snapshot.version}" in view.standing.message
        press(page, loop, Qt.Key.Key_J)
    assert seen == sorted(changed)
    # Judged again, an entry is no longer changed: the order made afresh holds the other two.
    choose_order(page, loop, "not reviewed yet")
    choose_order(page, loop, "changed since reviewed")
    press(page, loop, Qt.Key.Key_1)
    choose_order(page, loop, "not reviewed yet")
    choose_order(page, loop, "changed since reviewed")
    assert page.counter_label.text() == "entry 1 of 2 · changed since reviewed"
    assert snapshot_tree(tmp_path / "kb") == before


@pytest.mark.process
def test_near_copies_a_filter_and_an_order_without_its_report(
    open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    import numpy as np

    vectors = np.random.default_rng(9).normal(size=(len(IDS), 384)).astype(np.float32)
    for copy, of in ((5, 4), (11, 10), (12, 10)):  # two groups of near-copies
        vectors[copy] = vectors[of] + np.float32(1e-3) * vectors[copy]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    registry = write_database(tmp_path / "kb", IDS, TEXTS, vectors)
    window = open_window(registry)
    page = page_shown(window, loop)
    choose_order(page, loop, "unreachable (reach)")
    assert page.note.tone == "bad"
    assert page.note.message == (
        "no reach report of notes was made in this window\n"
        "Make one on the Reach page (Ctrl+0), then choose this order again."
    )
    assert page.walker.shown is not None  # the walk shown goes on
    # A filter in the browse filter's syntax.
    choose = page.order_combo.findText("a filter")
    page.order_combo.setCurrentIndex(choose)
    page.order_combo.activated.emit(choose)
    assert page.where_edit.isVisible() and page.where_edit.hasFocus()
    page.where_edit.setText("id IN ('e7', 'e3', 'e21')")
    with waiting_for(loop, page.walker.opened):
        QTest.keyClick(page.where_edit, Qt.Key.Key_Return)
    settle(page, loop)
    assert not page.where_edit.hasFocus()
    assert walk(page, loop) == [TEXTS[3], TEXTS[7], TEXTS[21]]
    # Near-copies: the Duplicates page's report, group by group.
    choose_order(page, loop, "near-copies (duplicates)")
    assert page.note.message.startswith("no duplicates report of notes was made in this window")
    duplicates = window.duplicates
    with waiting_for(loop, duplicates.searchFinished):
        duplicates.look_for("notes", 0.1, "l2")
    report = window.services.last_reports.duplicates["notes"]
    groups = [sorted(entry.id for entry in group.entries) for group in report.groups]
    assert sorted(groups) == [["e10", "e11", "e12"], ["e4", "e5"]]
    choose_order(page, loop, "near-copies (duplicates)")
    assert page.note.message == "2 groups of near-copies within l2 distance 0.1"
    # Each entry shows its near-copies beside it: the other members of its group, marked ≈.
    first, *mates = [entry.id for entry in report.groups[0].entries]
    assert page.entry_view.title.text().startswith(f"{first}·")
    run(loop, until(lambda: "within 0.1" in page.facts.near_note.text(), "the near-copies were looked for"))
    close = [
        entry.split("·")[0] for distance, entry, _verdict, _text in page.facts.near_rows() if "≈" in distance
    ]
    assert sorted(close) == sorted(mates)
    walked = walk(page, loop)
    assert walked == [
        TEXTS[int(entry_id[1:])]
        for group in report.groups
        for entry_id in [entry.id for entry in group.entries]
    ]


def test_a_review_file_of_ones_own_is_used_remembered_and_refused_inside_the_knowledge_base(
    open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path, isolated_app_dirs: Path
) -> None:
    registry = write_database(tmp_path / "kb", IDS, TEXTS)
    team = tmp_path / "team-repo" / "reviews" / "notes.jsonl"
    team.parent.mkdir(parents=True)
    team.write_text(record_line(TEXTS[0], "correct", record="a1", entry_id="e0") + "not a record\n", "utf-8")
    window = open_window(registry, config_dir=tmp_path / "config")
    page = page_shown(window, loop)
    with waiting_for(loop, page.walker.opened):
        page.choose_file(team)
    settle(page, loop)
    assert page.file_label.text() == f"notes.jsonl  —  {team.parent}  (chosen)"
    assert page.note.tone == "warning"
    assert page.note.message == f"1 line of {team} is not a review record (kept, not read)"
    assert page.progress_label.text().startswith("reviewed 1 of 30")
    shown = page.walker.shown
    assert shown is not None
    press(page, loop, Qt.Key.Key_2)
    lines = team.read_text("utf-8").splitlines()
    assert lines[1] == "not a record" and len(lines) == 3
    assert not (isolated_app_dirs / "data" / "reviews" / "notes.jsonl").exists()
    # Inside the knowledge base's folder: refused, said, nothing written there.
    before = snapshot_tree(tmp_path / "kb")
    with waiting_for(loop, page.walker.opened):
        page.choose_file(tmp_path / "kb" / "db" / "notes.lance" / "review.jsonl")
    assert page.note.tone == "bad" and "cannot be used" in page.note.message
    assert snapshot_tree(tmp_path / "kb") == before
    with waiting_for(loop, page.walker.opened):
        page.choose_file(team)
    settle(page, loop)
    assert page.progress_label.text().startswith("reviewed 2 of 30")


def test_a_chosen_review_file_is_remembered_at_the_next_start(
    open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    registry = write_database(tmp_path / "kb", IDS, TEXTS)
    team = tmp_path / "team-repo" / "notes-review.jsonl"
    window = open_window(registry, config_dir=tmp_path / "config")
    page = page_shown(window, loop)
    with waiting_for(loop, page.walker.opened):
        page.choose_file(team)
    settle(page, loop)
    press(page, loop, Qt.Key.Key_3)
    window.save_state()
    again = open_window(registry, config_dir=tmp_path / "config")
    settle(again.review, loop)
    assert again.review.file_label.text().startswith("notes-review.jsonl")
    assert again.review.progress_label.text().startswith("reviewed 1 of 30 · 1 wrong")
    assert standing([__import__("json").loads(line) for line in team.read_text("utf-8").splitlines()]) == {
        sha(TEXTS[0]): "wrong"
    }
