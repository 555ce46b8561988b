"""Browsing every row: pages arrive as the view scrolls, memory stays bounded, the filter narrows rows."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPlainTextEdit, QTableView
from pytestqt.qtbot import QtBot

from recall_gui.core.session.session import Session
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.browse import BrowseRow, Page, fetch_page
from recall_gui.qt.models.browse_model import BrowseModel
from recall_gui.qt.models.roles import ITEM_ROLE, PREVIEW_CHARS, VALUE_ROLE
from recall_gui.qt.operations import Operations
from recall_gui.qt.panels.results_panel import ResultsPanel
from tests.kbtools import PASSAGES, KnowledgeBase
from tests.qt.conftest import WindowFactory, run, waiting_for


def column(table: QTableView, number: int) -> list[str]:
    model = table.model()
    return [model.index(row, number).data() for row in range(model.rowCount())]


def test_an_empty_query_shows_every_row_in_table_order(kb: KnowledgeBase, open_window: WindowFactory) -> None:
    window = open_window(kb.registry_dir)
    table = window.findChild(QTableView, "browseTable")
    assert window.knowledge.results.mode == "browse"
    assert table.isVisible()
    assert column(table, 1) == list(kb.ids)
    assert column(table, 0) == [str(n) for n in range(1, 13)]
    assert window.knowledge.results.caption.text() == f"All 12 rows of {kb.name}"


def test_the_model_grows_page_by_page_and_keeps_only_a_few_pages(
    session: Session, kb: KnowledgeBase, loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    errors: list[BaseException] = []
    keeper = Operations(lambda error, _topic: errors.append(error))
    model = BrowseModel(keeper.lane().start, page_size=4, max_pages=2)

    async def fetch(offset: int, limit: int) -> Page:
        return await fetch_page(session, TableTarget(str(kb.db_dir), kb.name), offset=offset, limit=limit)

    model.reset(fetch)
    run(loop, model.load_first_page())
    assert model.rowCount() == 4 and model.total == 12
    while model.canFetchMore():
        model.fetchMore()
        assert not model.canFetchMore()  # one page at a time
        run(loop, keeper.wait_idle())
        assert model.cache.pages_held <= 2
    assert model.rowCount() == 12
    # Rows 0-3 were dropped from memory; showing them again fetches their page again.
    assert not model.cache.has_page(0)
    assert model.index(0, 1).data() == "…"
    run(loop, keeper.wait_idle())
    assert [model.index(row, 1).data() for row in range(4)] == list(kb.ids[:4])
    assert model.cache.pages_held == 2
    assert errors == []


def test_cells_answer_the_roles_a_view_and_the_detail_panel_ask_for(
    session: Session, kb: KnowledgeBase, loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    keeper = Operations(lambda error, topic: None)
    model = BrowseModel(keeper.lane().start, page_size=4)

    async def fetch(offset: int, limit: int) -> Page:
        return await fetch_page(session, TableTarget(str(kb.db_dir), kb.name), offset=offset, limit=limit)

    model.reset(fetch)
    run(loop, model.load_first_page())
    row, content = model.index(2, 0), model.index(2, 2)
    role, align = Qt.ItemDataRole, Qt.AlignmentFlag
    assert row.data(role.TextAlignmentRole) == int(align.AlignRight | align.AlignVCenter)
    assert content.data(role.TextAlignmentRole) == int(align.AlignLeft | align.AlignVCenter)
    assert row.data() == row.data(role.ToolTipRole) == "3"
    assert model.index(2, 1).data(role.ToolTipRole) == kb.ids[2]
    text, shown = PASSAGES[kb.ids[2]], content.data()
    assert "\n" not in shown and " ".join(text.split()).startswith(shown.removesuffix("…"))
    assert content.data(VALUE_ROLE) == text
    assert content.data(ITEM_ROLE).id == kb.ids[2]
    for unanswered in (role.FontRole, role.BackgroundRole, role.ForegroundRole, role.DecorationRole):
        assert content.data(unanswered) is None
    # Python callers may pass the enum or its value: the same answer.
    assert model.data(content, role.DisplayRole) == model.data(content, 0) == content.data()


def test_a_table_view_fetches_more_rows_as_it_scrolls(
    session: Session, kb: KnowledgeBase, loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    keeper = Operations(lambda error, topic: None)
    model = BrowseModel(keeper.lane().start, page_size=4, max_pages=8)

    async def fetch(offset: int, limit: int) -> Page:
        return await fetch_page(session, TableTarget(str(kb.db_dir), kb.name), offset=offset, limit=limit)

    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(400, 600)  # room for every row: the view asks for more until it is full
    view.show()
    model.reset(fetch)
    run(loop, model.load_first_page())

    async def until_all_rows() -> None:
        while model.rowCount() < 12 or keeper.pending:
            await keeper.wait_idle()
            await asyncio.sleep(0)

    run(loop, until_all_rows(), timeout=20)
    assert [model.index(r, 1).data() for r in range(12)] == list(kb.ids)


def test_the_filter_keeps_rows_whose_id_or_content_contains_the_text(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    filter_edit = window.findChild(QLineEdit, "filterEdit")
    assert filter_edit.isVisible()
    qtbot.keyClicks(filter_edit, "PASSWORD")
    with waiting_for(loop, window.knowledge.browseReady):
        qtbot.keyClick(filter_edit, Qt.Key.Key_Return)
    expected = [i for i, text in PASSAGES.items() if "password" in i or "password" in text.lower()]
    assert len(expected) == 2
    table = window.findChild(QTableView, "browseTable")
    assert column(table, 1) == expected
    assert window.knowledge.results.caption.text() == f"2 rows of {kb.name} contain “PASSWORD”"

    filter_edit.setText("capital")
    with waiting_for(loop, window.knowledge.browseReady):
        qtbot.keyClick(filter_edit, Qt.Key.Key_Return)
    assert column(table, 1) == ["paris", "berlin"]

    filter_edit.setText("no row holds this")
    with waiting_for(loop, window.knowledge.browseReady):
        qtbot.keyClick(filter_edit, Qt.Key.Key_Return)
    assert column(table, 1) == []
    assert "contains this text" in table.placeholder()  # type: ignore[attr-defined]


def test_opening_a_browsed_row_reads_its_vector(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    table = window.findChild(QTableView, "browseTable")
    flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
    table.selectionModel().setCurrentIndex(table.model().index(2, 0), flags)
    assert window.findChild(QLineEdit, "detailId").text() == kb.ids[2]
    assert window.findChild(QPlainTextEdit, "detailContent").toPlainText() == kb.contents[2]
    assert window.findChild(QLabel, "detailPosition").text() == "row 3 of 12"
    run(loop, window.operations.wait_idle())
    assert window.findChild(QLabel, "detailVector").text().startswith("384-d · norm 1.00")


def test_export_while_browsing_writes_the_rows_shown(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    kb = make_kb(extra={"lang": ["en"] * 12})
    window = open_window(kb.registry_dir)
    window.knowledge.results.filter_edit.setText("city")
    run(loop, window.knowledge.browser.browse(window.knowledge.read_inputs()))
    assert run(loop, window.knowledge.exporter.export_to(tmp_path / "rows.json", "json")) == 2
    records = json.loads((tmp_path / "rows.json").read_text(encoding="utf-8"))
    assert records == [
        {"Row": 1, "ID": "paris", "Content": PASSAGES["paris"], "lang": "en"},
        {"Row": 2, "ID": "berlin", "Content": PASSAGES["berlin"], "lang": "en"},
    ]


def test_cells_carry_no_more_text_than_their_column_can_show(
    loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    """Painting a page of rows lays out each cell's text; text past the column's edge is never seen, so
    the model cuts it where even the narrowest characters would have run out of room."""
    texts = [
        " ".join(f"word{n}" for n in range(300)),
        "i" * 900,
        "." * 900,
        "Wide glyphs: " + "W" * 600,
    ]

    async def fetch(offset: int, limit: int) -> Page:
        rows = [BrowseRow(row, f"row-{row}", texts[row]) for row in range(offset, min(offset + limit, 4))]
        return Page.of_rows(offset, rows, len(texts))

    keeper = Operations(lambda error, topic: None)
    model = BrowseModel(keeper.lane().start)
    panel = ResultsPanel(model)
    qtbot.addWidget(panel)
    panel.set_mode("browse")
    panel.resize(520, 300)
    panel.show()
    model.reset(fetch)
    run(loop, model.load_first_page())
    table = panel.browse_table
    header, metrics = table.horizontalHeader(), table.fontMetrics()

    def check(width: int) -> None:
        # Even a preview of the narrowest common glyphs reaches past the column's edge (the view elides).
        assert all(
            metrics.horizontalAdvance(glyph * (model.preview_chars - 1)) > width for glyph in ".,:;'!|il1"
        )
        for row, text in enumerate(texts):
            shown = model.index(row, 2).data()
            assert len(shown) <= model.preview_chars and text.startswith(shown.removesuffix("…"))
            # Whatever was cut off lies past the column's edge: the view shows the same as with it all.
            assert metrics.horizontalAdvance(shown.removesuffix("…")) > width
            assert model.index(row, 2).data(VALUE_ROLE) == text  # copy and export get it all

    narrow = header.sectionSize(2)
    assert 0 < model.preview_chars < PREVIEW_CHARS
    check(narrow)
    at_narrow = model.preview_chars
    panel.resize(900, 300)
    qtbot.waitUntil(lambda: header.sectionSize(2) > narrow)
    check(header.sectionSize(2))
    assert model.preview_chars > at_narrow
