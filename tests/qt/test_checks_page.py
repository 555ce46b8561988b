"""Golden checks in the window: "Add as golden check" on the knowledge page writes the current query and
the selected rows to the golden file in one action; the Checks page runs them through the agent's search
(progress, cancel) and shows pass/fail and how ranks moved since the last run, kept in the app's data dir."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtWidgets import QLabel, QPushButton, QTableView

from recall_gui.core.golden.check_history import history_path
from recall_gui.core.golden.golden import GoldenCheck, read_golden
from recall_gui.qt.models.checks_model import CHANGE, EXPECTED, RESULT
from tests.kbtools import KnowledgeBase, snapshot_tree
from tests.qt.conftest import WindowFactory, run, waiting_for
from tests.qt.test_search import core_ids, select_rows

QUERY = "How do I change my password?"


def search(window: Any, loop: asyncio.AbstractEventLoop, query: str, limit: int) -> None:
    knowledge = window.knowledge
    knowledge.query_bar.query_edit.setText(query)
    knowledge.query_bar.limit_spin.setValue(limit)
    run(loop, knowledge.searching.search(knowledge.read_inputs()))


def cells(table: QTableView, column: int) -> list[str]:
    model = table.model()
    return [model.index(row, column).data() for row in range(model.rowCount())]


def default_golden() -> Path:
    return Path(os.environ["RECALL_GUI_DATA_DIR"]) / "checks" / "golden.json"


def test_add_as_golden_check_then_run_it_and_see_ranks_move_after_a_reindex(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, embedder: Any
) -> None:
    window = open_window(kb.registry_dir)
    search(window, loop, QUERY, 3)
    results = window.knowledge.results.results_table
    agent = core_ids(loop, kb, QUERY, 3)
    select_rows(results, 0, 2)
    window.knowledge.entry_tools.add_golden_action.trigger()

    expected = GoldenCheck(kb.name, QUERY, (agent[0], agent[2]), 3)
    assert read_golden(default_golden()).checks == (expected,)
    page = window.checks
    table = page.findChild(QTableView, "checksTable")
    assert cells(table, RESULT) == ["not run"]
    before = snapshot_tree(kb.db_dir)

    window.pages.setCurrentWidget(page)
    with waiting_for(loop, page.runFinished):
        page.findChild(QPushButton, "checksRunButton").click()
    assert cells(table, RESULT) == ["✓ passed"]
    assert cells(table, EXPECTED) == [f"{agent[0]} (1), {agent[2]} (3)"]
    assert cells(table, CHANGE) == ["new check"]
    assert page.note.message.startswith("Ran 1 check in ")
    assert history_path(default_golden()).is_file()
    assert str(history_path(default_golden())).startswith(os.environ["RECALL_GUI_DATA_DIR"])
    assert snapshot_tree(kb.db_dir) == before  # nothing written to the knowledge base

    # A re-index adds an entry that answers the question better: the expected ids move down one place.
    import lancedb
    import pyarrow as pa

    text = "To change your password: Settings, Account, Change password."
    vector = np.asarray(embedder.embed_sync(QUERY), np.float32)  # the question itself: surely nearest
    lancedb.connect(str(kb.db_dir)).open_table(kb.name).add(
        pa.table(
            {
                "id": ["pw-howto"],
                "content": [text],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vector), len(vector)),
            }
        )
    )
    run(loop, page.run_checks())
    assert cells(table, RESULT) == ["✗ failed"]  # the third result fell out of the top 3
    assert cells(table, EXPECTED) == [f"{agent[0]} (2), {agent[2]} (missing)"]
    assert cells(table, CHANGE) == [f"now fails: {agent[0]} 1 → 2, {agent[2]} 3 → missing"]
    select_rows(table, 0)
    detail = page.detail.toPlainText()
    assert re.search(rf"\n  {agent[0]} +rank 2   \(last run: 1\)\n", detail)
    assert "  1. pw-howto\n" in detail
    assert page.note.tone == "bad"


def test_the_golden_check_takes_the_query_searched_not_the_one_typed_since(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    knowledge = window.knowledge
    assert not knowledge.entry_tools.add_golden_action.isEnabled()  # nothing searched yet
    assert knowledge.would_see.add_golden_check() is None  # and if asked anyway: refused, saying what to do
    assert window.banner.findChild(QLabel, "bannerText").text() == "Nothing to add as a golden check."
    assert not default_golden().exists()
    search(window, loop, "capital of France", 5)
    knowledge.query_bar.query_edit.setText("something typed afterwards")
    knowledge.query_bar.limit_spin.setValue(9)
    select_rows(knowledge.results.results_table, 0)
    check = knowledge.would_see.add_golden_check()
    assert check == GoldenCheck(kb.name, "capital of France", ("paris",), 5)
    # The same query and limit again replaces the check (now with two ids) instead of adding another.
    select_rows(knowledge.results.results_table, 0, 1)
    knowledge.would_see.add_golden_check()
    assert len(read_golden(default_golden()).checks) == 1
    assert len(read_golden(default_golden()).checks[0].expect) == 2


def test_a_check_that_cannot_be_written_is_kept_until_saved_elsewhere(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    window = open_window(kb.registry_dir)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    window.services.golden.path = blocked / "golden.json"  # its folder cannot be created
    search(window, loop, QUERY, 5)
    select_rows(window.knowledge.results.results_table, 0)
    window.knowledge.would_see.add_golden_check()
    banner = window.banner.findChild(QLabel, "bannerText").text()
    assert banner.startswith("The golden check is kept, but not saved:")
    page = window.checks
    assert page.file_label.text().endswith("(not saved)")
    assert len(cells(page.table, RESULT)) == 1
    assert page.save_as(tmp_path / "saved.json")
    assert [check.query for check in read_golden(tmp_path / "saved.json").checks] == [QUERY]
    assert not page.file_label.text().endswith("(not saved)")


def test_a_run_can_be_cancelled_and_keeps_nothing(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    path = tmp_path / "many.json"
    checks = [{"db_name": kb.name, "query": f"question {n}", "expect": ["paris"]} for n in range(300)]
    path.write_text(json.dumps({"checks": checks}), encoding="utf-8")
    window = open_window(kb.registry_dir)
    page = window.checks
    assert page.open_file(path)
    assert len(cells(page.table, RESULT)) == 300
    first_done = asyncio.Event()
    page.progress.valueChanged.connect(lambda value: value >= 1 and first_done.set())
    task = page.run_checks()
    assert task is not None

    async def cancel_after_first() -> None:
        await first_done.wait()
        assert page.findChild(QPushButton, "checksCancelButton").isEnabled()
        page.findChild(QPushButton, "checksCancelButton").click()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(loop, cancel_after_first())
    assert page.note.message.startswith("Cancelled after ")
    assert set(cells(page.table, RESULT)) == {"not run"}
    assert not history_path(path).exists()
    assert page.findChild(QPushButton, "checksRunButton").isEnabled()


def test_a_golden_file_that_does_not_validate_is_refused_and_the_open_one_stays(
    kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path
) -> None:
    window = open_window(kb.registry_dir)
    page = window.checks
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"checks": [{"db_name": kb.name, "query": "q", "expect": ["x"]}]}), "utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text('{"checks": [{"db_name": "notes", "query": 3, "expect": ["x"]}]}', encoding="utf-8")
    assert page.open_file(good)
    assert not page.open_file(bad)
    banner = window.banner.findChild(QLabel, "bannerText").text()
    assert banner == f"{bad}, line 1, check 1, query: 3 is not of type 'string'"
    assert window.services.golden.path == good
    assert cells(page.table, 1) == [kb.name]


def test_a_golden_file_with_a_long_number_or_deep_nesting_is_refused_naming_the_field(
    kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path
) -> None:
    window = open_window(kb.registry_dir)
    page = window.checks
    for name, field, said in (
        ("long.json", '"limit": ' + "9" * 5000, "limit: a number of 5,000 digits, too long to read"),
        ("deep.json", '"x": ' + "[" * 900 + "]" * 900, "x: nested more than 64 levels deep"),
    ):
        bad = tmp_path / name
        check = '{"db_name": "notes", "query": "q", "expect": ["x"], ' + field + "}"
        bad.write_text('{"checks": [' + check + "]}", encoding="utf-8")
        assert not page.open_file(bad)
        banner = window.banner.findChild(QLabel, "bannerText").text()
        assert banner.startswith(f"{bad}, line 1, check 1, {said}")


def test_a_golden_query_longer_than_the_bound_is_refused_naming_the_check(
    kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path
) -> None:
    window = open_window(kb.registry_dir)
    bad = tmp_path / "long.json"
    bad.write_text(json.dumps({"checks": [{"db_name": kb.name, "query": "x" * 102_401, "expect": ["x"]}]}))
    assert not window.checks.open_file(bad)
    banner = window.banner.findChild(QLabel, "bannerText").text()
    said = "query: the query is 102,401 characters long; at most 102,400 are searched"
    assert banner == f"{bad}, line 1, check 1, {said}"


def test_a_pinned_check_says_its_version_and_runs_there(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    import lancedb

    lancedb.connect(str(kb.db_dir)).open_table(kb.name).delete("id = 'pw-reset'")  # version 2
    path = tmp_path / "pinned.json"
    check = {"db_name": kb.name, "query": QUERY, "expect": ["pw-reset"], "limit": 3}
    path.write_text(json.dumps({"checks": [check | {"version": 1}, check]}), encoding="utf-8")
    window = open_window(kb.registry_dir)
    page = window.checks
    assert page.open_file(path)
    assert cells(page.table, 1) == [f"{kb.name} at version 1", kb.name]
    window.pages.setCurrentWidget(page)
    with waiting_for(loop, page.runFinished):
        page.findChild(QPushButton, "checksRunButton").click()
    assert cells(page.table, RESULT) == ["✓ passed", "✗ failed"]
