"""The *Words* tab: after a search, LanceDB's full-text and hybrid answers beside the agent's results (the
oracle: LanceDB's own answers and the results table), or a note that the table has no full-text index."""

from __future__ import annotations

import asyncio
from typing import Any

import lancedb
from lancedb.index import FTS
from lancedb.rerankers import RRFReranker
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QTableWidget
from pytestqt.qtbot import QtBot

from recall_gui.core.search.method_comparison import compare_lists
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import WindowFactory, waiting_for

QUERY = "reset the password of the capital of France"


def search(window: Any, qtbot: QtBot, loop: asyncio.AbstractEventLoop) -> None:
    query = window.findChild(QLineEdit, "queryEdit")
    qtbot.keyClicks(query, QUERY)
    with waiting_for(loop, window.knowledge.searchFinished):
        qtbot.keyClick(query, Qt.Key.Key_Return)
    loop.run_until_complete(window.operations.wait_idle())


def test_the_three_lists_are_lancedbs_answers(
    kb: KnowledgeBase,
    embedder: Any,
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    table.create_index("content", config=FTS())
    window = open_window(kb.registry_dir)
    search(window, qtbot, loop)
    vector = table.search(embedder.embed_sync(QUERY)).distance_type("l2").limit(5).to_list()
    words = table.search(QUERY, query_type="fts").limit(5).to_list()
    hybrid = (
        table.search(query_type="hybrid")
        .vector(embedder.embed_sync(QUERY))
        .text(QUERY)
        .distance_type("l2")
        .rerank(RRFReranker())
        .limit(5)
        .to_list()
    )
    panel = window.knowledge.words
    vector_ids = [r["id"] for r in vector]
    assert panel.column("vector") == vector_ids
    assert panel.column("fts") == [r["id"] for r in words]
    assert panel.column("hybrid") == [r["id"] for r in hybrid]
    table = window.findChild(QTableWidget, "methodTable")
    for row, found in enumerate(words):
        rank = vector_ids.index(found["id"]) + 1 if found["id"] in vector_ids else "–"
        assert table.item(row, 1).text() == f"{found['id']}  (agent: {rank})"


def test_without_a_full_text_index_the_tab_says_how_to_build_one(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    search(window, qtbot, loop)
    note = window.findChild(QLabel, "methodNote").text()
    assert "cannot be searched by its words: it has no full-text index" in note
    assert window.findChild(QTableWidget, "methodTable").rowCount() == 0


def test_each_entry_says_where_it_stands_in_the_other_lists() -> None:
    compared = compare_lists({"vector": ["a", "b", "c"], "fts": ["c", "a"], "hybrid": ["a", "c", "d"]})
    a, b, c = compared["vector"]
    assert (a.movement("fts"), a.movement("hybrid")) == ("↓ 1", "same")
    assert b.movement("fts") == "only here"
    assert (c.movement("fts"), c.movement("hybrid")) == ("↑ 2", "↑ 1")
    assert compared["hybrid"][2].elsewhere == {"vector": None, "fts": None}
