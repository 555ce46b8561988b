"""Searching from the window gives exactly the core's answer, shown as the user expects."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableView,
)
from pytestqt.qtbot import QtBot

from recall_gui.core.search.harness import Harness
from recall_gui.qt.scope.inputs import Inputs
from tests.kbtools import PASSAGES, KnowledgeBase, cosh_entry, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for

QUERY = "How do I change my password?"


def core_ids(loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, query: str, limit: int) -> list[str]:
    """The core's answer to the same tool call, for comparison."""

    async def go() -> list[str]:
        harness = Harness(kb.registry_dir)
        try:
            report = await harness.run({"db_name": kb.name, "query": query, "limit": limit})
        finally:
            await harness.aclose()
        return [hit.id for hit in report.result.hits]

    result: list[str] = run(loop, go())
    return result


def select_rows(table: QTableView, *rows: int) -> None:
    """Select exactly ``rows`` (``selectRow`` would toggle instead while a modifier key is down)."""
    flags = QItemSelectionModel.SelectionFlag
    table.selectionModel().clearSelection()
    for row in rows:
        table.selectionModel().select(table.model().index(row, 0), flags.Select | flags.Rows)


def column(table: QTableView, number: int) -> list[str]:
    model = table.model()
    return [model.index(row, number).data() for row in range(model.rowCount())]


def test_enter_shows_the_rows_the_core_returns_for_the_same_query(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    assert window.findChild(QComboBox, "dbCombo").currentText() == kb.name
    limit = window.findChild(QSpinBox, "limitSpin")
    assert (limit.value(), limit.minimum(), limit.maximum()) == (5, 1, 1000)
    limit.setValue(3)
    query = window.findChild(QLineEdit, "queryEdit")
    qtbot.keyClicks(query, QUERY)
    with waiting_for(loop, window.knowledge.searchFinished):
        qtbot.keyClick(query, Qt.Key.Key_Return)

    table = window.findChild(QTableView, "resultsTable")
    expected = core_ids(loop, kb, QUERY, 3)
    assert column(table, 1) == expected
    assert expected[0] == "pw-reset"
    assert column(table, 0) == ["1", "2", "3"]
    assert table.model().headerData(3, Qt.Orientation.Horizontal) == "Distance (squared L2)"
    distances = [float(d) for d in column(table, 3)]
    assert distances == sorted(distances)
    assert window.knowledge.status_count.text() == "3 results"
    assert window.knowledge.status_embed.text().startswith(
        "Embedding "
    ) and window.knowledge.status_embed.text().endswith(" ms")
    assert window.knowledge.status_search.text().startswith("Search ")
    assert window.knowledge.status_model.text() == "Model: exact"
    assert query.text() == QUERY


class HeldSearch:
    """The real search for one query, made slow: once it has its rows it sets ``reached`` and waits for
    ``release`` (the timing of a slow search, with the real embedding and the real table)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, query: str) -> None:
        self.reached = asyncio.Event()
        self.release = asyncio.Event()
        original = Harness.search_database

        async def search_database(harness: Harness, entry: Any, text: str, limit: int, **kw: Any) -> Any:
            report = await original(harness, entry, text, limit, **kw)
            if text == query:
                self.reached.set()
                await self.release.wait()
            return report

        monkeypatch.setattr(Harness, "search_database", search_database)


def test_two_quick_searches_end_with_the_second_ones_rows(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    query = window.findChild(QLineEdit, "queryEdit")
    qtbot.keyClicks(query, "the capital of Germany")
    qtbot.keyClick(query, Qt.Key.Key_Return)
    query.setText("brewing coffee")
    with waiting_for(loop, window.knowledge.searchFinished):
        qtbot.keyClick(query, Qt.Key.Key_Return)
    run(loop, window.operations.wait_idle())
    table = window.findChild(QTableView, "resultsTable")
    assert column(table, 1) == core_ids(loop, kb, "brewing coffee", 5)
    assert column(table, 1)[0] == "coffee"
    assert "brewing coffee" in window.knowledge.results.caption.text()


def test_an_older_search_holding_its_rows_never_overwrites_the_newer_one(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window = open_window(kb.registry_dir)
    held = HeldSearch(monkeypatch, "the capital of Germany")
    older = window.knowledge.searching.search(Inputs("the capital of Germany", 5))
    run(loop, held.reached.wait())  # the older search has its rows; the newer one replaces it now
    run(loop, window.knowledge.searching.search(Inputs("ocean tides and the moon", 5)))
    assert column(window.knowledge.results.results_table, 1)[0] == "tides"
    held.release.set()
    run(loop, window.operations.wait_idle())
    assert older is not None and older.cancelled()
    assert column(window.knowledge.results.results_table, 1) == core_ids(
        loop, kb, "ocean tides and the moon", 5
    )
    assert "ocean tides" in window.knowledge.results.caption.text()


def test_escape_cancels_a_running_search_and_its_rows_never_appear(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window = open_window(kb.registry_dir)
    held = HeldSearch(monkeypatch, "photosynthesis in plants")
    query = window.findChild(QLineEdit, "queryEdit")
    query.setText("photosynthesis in plants")
    qtbot.keyClick(query, Qt.Key.Key_Return)

    run(loop, held.reached.wait())
    assert window.knowledge.query_bar.cancel_button.isEnabled()
    qtbot.keyClick(query, Qt.Key.Key_Escape)
    held.release.set()
    run(loop, window.operations.wait_idle())
    assert window.knowledge.results.mode == "browse"  # still what was shown before the search
    assert window.status_activity.text() == "Search cancelled"
    assert not window.knowledge.query_bar.cancel_button.isEnabled()
    assert query.text() == "photosynthesis in plants"


def test_sorting_then_copying_gives_the_selected_rows_in_view_order(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    run(loop, window.knowledge.searching.search(Inputs(QUERY, 5)))
    table = window.findChild(QTableView, "resultsTable")
    ranked = column(table, 1)
    table.sortByColumn(3, Qt.SortOrder.DescendingOrder)
    assert column(table, 1) == list(reversed(ranked))
    table.setFocus()
    select_rows(table, 0, 1)
    qtbot.keyClick(table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    copied = list(csv.reader(io.StringIO(QGuiApplication.clipboard().text()), delimiter="\t"))
    contents = dict(zip(kb.ids, kb.contents, strict=True))
    assert [row[1] for row in copied] == list(reversed(ranked))[:2]
    assert [row[2] for row in copied] == [contents[i] for i in list(reversed(ranked))[:2]]
    assert [row[0] for row in copied] == ["5", "4"]


def test_export_writes_exactly_the_rows_the_table_shows(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    window = open_window(kb.registry_dir)
    run(loop, window.knowledge.searching.search(Inputs("cities in Europe", 4)))
    table = window.knowledge.results.results_table
    table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    shown = column(table, 1)
    assert shown == sorted(shown)

    assert run(loop, window.knowledge.exporter.export_to(tmp_path / "out.csv", "csv")) == 4
    rows = list(csv.reader(io.StringIO((tmp_path / "out.csv").read_text(encoding="utf-8"))))
    assert rows[0] == ["Rank", "ID", "Content", "Distance (squared L2)"]
    assert [r[1] for r in rows[1:]] == shown
    contents = dict(zip(kb.ids, kb.contents, strict=True))
    assert [r[2] for r in rows[1:]] == [contents[i] for i in shown]
    assert [f"{float(r[3]):.4f}" for r in rows[1:]] == column(table, 3)

    assert run(loop, window.knowledge.exporter.export_to(tmp_path / "out.json", "json")) == 4
    records = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [r["ID"] for r in records] == shown
    assert [r["Rank"] for r in records] == [int(x) for x in column(table, 0)]
    assert list(records[0]) == ["Rank", "ID", "Content", "Distance (squared L2)"]


def test_export_of_search_results_writes_their_metadata_columns_too(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    kb = make_kb(extra={"source": [f"doc-{i}.md" for i in range(12)], "page": list(range(12))})
    window = open_window(kb.registry_dir)
    run(loop, window.knowledge.searching.search(Inputs("cities in Europe", 4)))
    shown = column(window.knowledge.results.results_table, 1)
    number = {entry_id: kb.ids.index(entry_id) for entry_id in shown}

    assert run(loop, window.knowledge.exporter.export_to(tmp_path / "out.csv", "csv")) == 4
    rows = list(csv.reader(io.StringIO((tmp_path / "out.csv").read_text(encoding="utf-8"))))
    assert rows[0] == ["Rank", "ID", "Content", "Distance (squared L2)", "source", "page"]
    assert [r[4:] for r in rows[1:]] == [[f"doc-{number[i]}.md", str(number[i])] for i in shown]
    assert run(loop, window.knowledge.exporter.export_to(tmp_path / "out.json", "json")) == 4
    records = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert [(r["source"], r["page"]) for r in records] == [(f"doc-{number[i]}.md", number[i]) for i in shown]


def test_the_detail_shows_the_whole_entry_its_other_columns_and_its_vector(
    make_kb: Callable[..., KnowledgeBase], open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    kb = make_kb(extra={"source": [f"doc-{i}.md" for i in range(12)], "page": list(range(12))})
    window = open_window(kb.registry_dir)
    run(loop, window.knowledge.searching.search(Inputs("Unicode characters and emoji", 5)))
    table = window.knowledge.results.results_table
    select_rows(table, 0)
    hit_id = column(table, 1)[0]
    assert hit_id == "unicode"
    assert window.findChild(QLineEdit, "detailId").text() == "unicode"
    content = window.findChild(QPlainTextEdit, "detailContent").toPlainText()
    assert content == dict(zip(kb.ids, kb.contents, strict=True))["unicode"]
    assert "🚀" in content
    metadata = window.findChild(QTableView, "detailMetadata").model()
    pairs = {metadata.index(r, 0).data(): metadata.index(r, 1).data() for r in range(metadata.rowCount())}
    index = kb.ids.index("unicode")
    assert pairs == {"source": f"doc-{index}.md", "page": str(index)}
    vector_text = window.findChild(QLabel, "detailVector").text()
    assert vector_text.startswith("384-d · norm 1.00")
    window.findChild(QPushButton, "copyVectorButton").click()
    copied = json.loads(QGuiApplication.clipboard().text())
    assert len(copied) == 384
    assert copied[:3] == pytest.approx([float(x) for x in kb.vectors[index][:3]], abs=1e-6)
    window.findChild(QPushButton, "copyContentButton").click()
    assert QGuiApplication.clipboard().text() == content


def test_choosing_another_database_mid_search_ends_with_the_new_databases_rows(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    first, second = make_kb("first"), make_kb("second", extra={"topic": kb_topics()})
    registry_dir = write_registry(
        tmp_path / "reg", [cosh_entry("first", first.db_dir), cosh_entry("second", second.db_dir)]
    )
    window = open_window(registry_dir)
    held = HeldSearch(monkeypatch, "where is the Seine")
    older = window.knowledge.searching.search(Inputs("where is the Seine", 5))
    run(loop, held.reached.wait())
    run(loop, window.knowledge.choose_database("second", Inputs("which city lies on the Seine", 5)))
    held.release.set()
    run(loop, window.operations.wait_idle())
    assert older.cancelled()
    assert window.knowledge.results.caption.text() == "5 results for “which city lies on the Seine” in second"
    hit = window.knowledge.results.results_model.hit(0)
    assert (hit.id, hit.extra) == ("paris", {"topic": "geography"})


def kb_topics() -> list[str]:
    return ["geography" if i in ("paris", "berlin") else "other" for i in PASSAGES]


def test_choosing_a_database_reads_its_vectors_before_the_first_search(
    kb: KnowledgeBase, loop: asyncio.AbstractEventLoop, open_window: WindowFactory
) -> None:
    window = open_window(kb.registry_dir)
    session = run(loop, window.services.session())
    run(loop, window.operations.wait_idle())  # choosing it started the read: no search has run
    assert {key[1] for key in session.vectors.cached_versions()} == {kb.name}
    run(loop, window.knowledge.searching.search(Inputs(QUERY, 3)))
    assert window.knowledge.status_search.text().endswith(" ms, exact")
    assert window.knowledge.status_search.toolTip() == "exact search in memory, squared L2"


def test_a_search_that_took_a_slower_way_says_why(
    kb: KnowledgeBase,
    loop: asyncio.AbstractEventLoop,
    open_window: WindowFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECALL_GUI_EXACT_CACHE_MB", "0")
    window = open_window(kb.registry_dir)
    run(loop, window.knowledge.searching.search(Inputs(QUERY, 3)))
    assert window.knowledge.status_search.text().endswith(" ms, flat scan")
    assert window.knowledge.status_search.toolTip().startswith("LanceDB's flat scan, squared L2\n")
    banner = window.banner.findChild(QLabel, "bannerText")
    assert banner is not None and window.banner.isVisible()
    assert "Searched with LanceDB's flat scan: exact search in memory is off" in banner.text()


def test_an_exact_search_without_int8_codes_says_why(
    kb: KnowledgeBase,
    loop: asyncio.AbstractEventLoop,
    open_window: WindowFactory,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "vectors").write_text("a file where the float32 copies of the vectors would go")
    monkeypatch.setenv("RECALL_GUI_CACHE_DIR", str(cache))
    window = open_window(kb.registry_dir)
    run(loop, window.knowledge.searching.search(Inputs(QUERY, 3)))
    assert window.knowledge.status_search.toolTip().startswith("exact search in memory, squared L2\n")
    banner = window.banner.findChild(QLabel, "bannerText")
    assert banner is not None and window.banner.isVisible()
    assert "Searched with exact search in memory: the float32 copy of the vectors could not be written" in (
        banner.text()
    )
    assert [window.knowledge.results.results_model.hit(i).id for i in range(3)] == core_ids(
        loop, kb, QUERY, 3
    )
