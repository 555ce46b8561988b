"""The knowledge page's metadata filter, schema view and version list, the History page and the Map page,
driven as a user drives them, on a real table with a real history. Nothing in the knowledge base's folder
may change, and no version or tag may be added."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QTableView
from pytestqt.qtbot import QtBot

from recall_gui.qt.main_window import MainWindow
from tests.inspecttools import NAME, SOURCES, TIDES_AFTER, History, lancedb_versions, write_history
from tests.kbtools import PASSAGES, cosh_entry, snapshot_tree, write_perturbed_table, write_registry
from tests.qt.conftest import WindowFactory, run, until, waiting_for


@pytest.fixture
def history(tmp_path: Path, embedder: Any) -> History:
    return write_history(tmp_path / "kb", embedder)


def column(table: QTableView, number: int) -> list[str]:
    model = table.model()
    return [model.index(row, number).data() for row in range(model.rowCount())]


def banner_text(window: MainWindow) -> str:
    return window.banner.findChild(QLabel, "bannerText").text() if window.banner.isVisible() else ""


def apply_where(window: MainWindow, loop: asyncio.AbstractEventLoop, qtbot: QtBot, text: str) -> None:
    edit = window.knowledge.filter_bar.where_edit
    edit.setText(text)
    with waiting_for(loop, window.knowledge.browseReady):
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    run(loop, window.operations.wait_idle())


@pytest.mark.process
def test_the_filter_narrows_browsing_and_searching_and_a_bad_one_says_why(
    history: History, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    window = open_window(history.kb.registry_dir)
    page, browse = window.knowledge, window.findChild(QTableView, "browseTable")
    everything = column(browse, 1)
    apply_where(window, loop, qtbot, "source = 'doc2.md' AND page < 9")
    expected = [i for n, i in enumerate(PASSAGES) if SOURCES[n] == "doc2.md" and n < 9 and i != "coffee"]
    assert column(browse, 1) == expected
    assert (
        page.results.caption.text()
        == f"{len(expected)} rows of {NAME} — where “source = 'doc2.md' AND page < 9”"
    )
    # A search with the filter ranks only the rows it keeps.
    page.query_bar.query_edit.setText("capital city")
    with waiting_for(loop, page.searchFinished):
        page.request_search()
    results = window.findChild(QTableView, "resultsTable")
    found = column(results, 1)
    assert set(found) <= set(expected) and len(found) == min(5, len(expected))
    assert "where “source = 'doc2.md' AND page < 9”" in page.results.caption.text()
    # A bad filter: LanceDB's reason in one line, the columns offered, and the rows shown stay.
    page.query_bar.query_edit.clear()
    page.filter_bar.where_edit.setText("pages < 3")
    qtbot.keyClick(page.filter_bar.where_edit, Qt.Key.Key_Return)
    run(loop, window.operations.wait_idle())
    assert "there is no column named pages (did you mean page?)" in banner_text(window)
    hint = window.banner.findChild(QLabel, "bannerHint").text()
    assert "id, content, source, page, meta, meta.lang" in hint
    assert page.filter_bar.where_edit.text() == "pages < 3"  # nothing typed is lost
    # Clearing the filter shows every row again.
    with waiting_for(loop, page.browseReady):
        page.filter_bar.where_edit.clear()
    run(loop, window.operations.wait_idle())
    assert column(browse, 1) == everything


@pytest.mark.process
def test_the_schema_view_lists_every_column_and_puts_a_name_into_the_filter(
    history: History, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    window = open_window(history.kb.registry_dir)
    run(loop, window.operations.wait_idle())
    page = window.knowledge
    qtbot.mouseClick(page.filter_bar.schema_button, Qt.MouseButton.LeftButton)
    assert page.side.currentWidget() is page.schema_panel and page.schema_panel.isVisible()
    assert page.schema_panel.names() == ["id", "content", "vector", "source", "page", "meta", "meta.lang"]
    table = page.schema_panel.table
    row = page.schema_panel.names().index("vector")
    assert [table.model().index(row, c).data() for c in range(4)] == [
        "vector",
        "fixed_size_list<item: float>[384]",
        "yes",
        "vector (384-d, l2)",
    ]
    lang = table.model().index(page.schema_panel.names().index("meta.lang"), 0)
    table.doubleClicked.emit(lang)
    assert page.filter_bar.where_edit.text() == "meta.lang"


def test_an_older_version_opens_read_only_marked_everywhere_and_one_click_goes_back(
    history: History,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    qtbot: QtBot,
    tmp_path: Path,
) -> None:
    before = snapshot_tree(history.kb.db_dir), lancedb_versions(history.kb.db_dir)
    window = open_window(history.kb.registry_dir)
    run(loop, window.operations.wait_idle())
    page, browse = window.knowledge, window.findChild(QTableView, "browseTable")
    combo = page.filter_bar.version_combo
    assert combo.count() == 6 and combo.itemText(0).startswith("6 · latest")
    assert combo.itemText(3).endswith(history.tag)
    assert not page.version_bar.isVisible()
    with waiting_for(loop, page.browseReady):
        combo.activated.emit(combo.findData(2))
    run(loop, window.operations.wait_idle())
    assert page.version == 2
    assert page.version_bar.isVisible()
    assert "Version 2 of notes" in page.version_bar.note.message
    assert "not the latest (the latest is version 6)" in page.version_bar.note.message
    assert page.results.caption.text() == f"All 13 rows of {NAME} — version 2, not the latest"
    ids = column(browse, 1)
    assert "coffee" in ids and "paris-2" in ids and "kyoto" not in ids
    # The entry detail says which version it shows.
    browse.selectRow(ids.index("tides"))
    run(loop, window.operations.wait_idle())
    assert page.detail.content.toPlainText() == PASSAGES["tides"]
    assert page.detail.position.text().endswith("version 2, not the latest")
    # A search in it finds its rows, not the latest's.
    page.query_bar.query_edit.setText("coffee beans espresso")
    with waiting_for(loop, page.searchFinished):
        page.request_search()
    assert column(window.findChild(QTableView, "resultsTable"), 1)[0] == "coffee"
    assert page.results.caption.text().endswith("— version 2, not the latest")
    # Export: the version's rows.
    page.query_bar.query_edit.clear()
    run(loop, page.browser.browse(page.read_inputs()))
    written = run(loop, page.exporter.export_to(tmp_path / "v2.csv", "csv"))
    assert written == 13 and "coffee" in (tmp_path / "v2.csv").read_text(encoding="utf-8")
    # One click back.
    with waiting_for(loop, page.browseReady):
        qtbot.mouseClick(page.version_bar.latest_button, Qt.MouseButton.LeftButton)
    run(loop, window.operations.wait_idle())
    assert page.version is None and not page.version_bar.isVisible()
    assert "kyoto" in column(browse, 1) and "coffee" not in column(browse, 1)
    assert page.results.caption.text() == f"All 12 rows of {NAME}"
    assert (snapshot_tree(history.kb.db_dir), lancedb_versions(history.kb.db_dir)) == before


def test_the_history_page_compares_two_versions_and_shows_a_change_side_by_side(
    history: History, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(history.kb.registry_dir)
    page = window.history
    with waiting_for(loop, page.versionsListed):
        window.pages.setCurrentWidget(page)
    assert page.versions_table.rowCount() == 6
    assert page.versions_table.item(3, 3).text() == history.tag
    page.from_combo.setCurrentIndex(page.from_combo.findData(1))
    with waiting_for(loop, page.diffFinished):
        page.compare_button.click()
    assert page.diff_summary.message == ("From version 1 to 6, matched by id: 2 added, 2 removed, 2 changed.")
    listed = {page.changes_table.item(r, 0).text(): page.changes_table.item(r, 1).text() for r in range(6)}
    assert listed == {
        "kyoto": "+ added",
        "paris-2": "+ added",
        "coffee": "− removed",
        "unicode": "− removed",
        "berlin": "~ content and vector",
        "tides": "~ content",
    }
    with waiting_for(loop, page.changeShown):
        page.changes_table.selectRow([*listed].index("tides"))
    assert page.old_content.toPlainText() == PASSAGES["tides"]
    assert page.new_content.toPlainText() == TIDES_AFTER
    assert page.vector_note.text() == "The vector is the same."
    kinds = [line.kind for line in page.content_diff.lines]
    assert kinds == ["removed", "added"]
    with waiting_for(loop, page.changeShown):
        page.changes_table.selectRow([*listed].index("berlin"))
    assert page.vector_note.text().startswith("The vector changed: cosine similarity 0.")
    # Opening a version from here shows it on the knowledge page.
    page.versions_table.selectRow(3)
    with waiting_for(loop, window.knowledge.browseReady):
        page.open_button.click()
    assert window.pages.currentWidget() is window.knowledge and window.knowledge.version == 3


def test_f5_lists_a_version_another_program_wrote_on_the_history_page(
    history: History, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, embedder: Any
) -> None:
    import lancedb
    import pyarrow as pa

    window = open_window(history.kb.registry_dir)
    page = window.history
    with waiting_for(loop, page.versionsListed):
        window.pages.setCurrentWidget(page)
    assert page.versions_table.rowCount() == 6
    assert page.title.text().startswith(f"{NAME}: 6 versions kept by LanceDB.")
    vector = np.asarray(embedder.embed_sync("Volcanoes erupt molten rock."), np.float32)
    lancedb.connect(str(history.kb.db_dir)).open_table(NAME).add(
        pa.table(
            {
                "id": ["volcano"],
                "content": ["Volcanoes erupt molten rock."],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vector), len(vector)),
            }
        )
    )
    with waiting_for(loop, page.versionsListed):
        QTest.keyClick(window, Qt.Key.Key_F5)
    assert page.versions_table.rowCount() == 7
    assert page.title.text().startswith(f"{NAME}: 7 versions kept by LanceDB.")


def show_map(window: MainWindow, loop: asyncio.AbstractEventLoop) -> Any:
    with waiting_for(loop, window.map.mapShown):
        window.pages.setCurrentWidget(window.map)
    run(loop, window.operations.wait_idle())
    return window.map.view


def test_the_map_hovers_opens_highlights_colours_and_narrows_the_table(
    history: History, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    before = snapshot_tree(history.kb.db_dir), lancedb_versions(history.kb.db_dir)
    window = open_window(history.kb.registry_dir)
    window.resize(1100, 760)
    page = window.knowledge
    page.query_bar.query_edit.setText("the capital of Germany")
    with waiting_for(loop, page.searchFinished):
        page.request_search()
    view = show_map(window, loop)
    table_map = window.map.table_map
    assert len(table_map) == 12 and view.points_drawn == 12 and table_map.method == "pca"
    assert "12 points · PCA · version 6" in window.map.status.message
    # The search's results are ringed, the query starred where it projects.
    assert len(view.hits.data) == 5 and len(view.query_marker.data) == 1
    # Hover: the id and the first line of the row under the pointer.
    labels = {int(r): i for r, i in zip(table_map.row_ids, range(12), strict=True)}
    target = next(i for i in range(12) if view.point_at(view.scene_position(i)) == i)
    spot = view.widget_position(target).toPoint()
    with waiting_for(loop, window.map.labelShown):
        QTest.mouseMove(view.viewport(), spot)
    row_id = int(table_map.row_ids[target])
    identifier, first_line = view.label_text().split("\n")
    assert labels[row_id] == target
    # Click: the knowledge page opens that very row.
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, spot)
    run(loop, window.operations.wait_idle())
    assert window.pages.currentWidget() is page
    assert page.detail.id_edit.text() == identifier
    assert page.detail.content.toPlainText().startswith(first_line)
    assert page.detail.position.text() == f"row id {row_id}, chosen on the map"
    # Colour by a column: three sources, a legend.
    window.pages.setCurrentWidget(window.map)
    colour = window.map.colour_combo
    with waiting_for(loop, window.map.mapShown):
        colour.setCurrentIndex(colour.findData("source"))
        colour.activated.emit(colour.currentIndex())
    assert "doc0.md" in window.map.legend.text() and "doc2.md" in window.map.legend.text()
    # A rectangle around the left half narrows the knowledge page's table to the points inside.
    window.map.modes.button(1).click()
    x0, x1 = float(table_map.positions[:, 0].min()), float(np.median(table_map.positions[:, 0]))
    y0, y1 = float(table_map.positions[:, 1].min()) - 1, float(table_map.positions[:, 1].max()) + 1
    inside = table_map.positions[:, 0] <= x1
    with waiting_for(loop, page.browseReady):
        view.finish_outline([(x0 - 1, y0), (x1, y0), (x1, y1), (x0 - 1, y1)])
    browse = window.findChild(QTableView, "browseTable")
    assert browse.model().rowCount() == int(inside.sum())
    assert page.results.caption.text().startswith(f"{int(inside.sum())} rows chosen on the map in {NAME}")
    assert window.map.show_button.isEnabled()
    with waiting_for(loop, page.searchFinished):  # Clear Choice: the search it replaced, again
        window.map.clear_button.click()
    assert page.results.caption.text().startswith(f"5 results for “the capital of Germany” in {NAME}")
    assert (snapshot_tree(history.kb.db_dir), lancedb_versions(history.kb.db_dir)) == before


def test_the_map_of_an_older_version_maps_that_version(
    history: History, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(history.kb.registry_dir)
    run(loop, window.knowledge.open_version(2, window.knowledge.read_inputs()))
    show_map(window, loop)
    assert len(window.map.table_map) == 13 and window.map.table_map.version == 2
    assert "an older version, not the latest" in window.map.status.message
    assert window.map.status.tone == "warning"


@pytest.fixture
def many(tmp_path: Path, passage_vectors: Any) -> Path:
    ids, texts = list(PASSAGES), list(PASSAGES.values())
    write_perturbed_table(tmp_path / "db", "many", ids, texts, passage_vectors, rows=240, ivf_partitions=None)
    return write_registry(tmp_path / "registry", [cosh_entry("many", tmp_path / "db")])


@pytest.mark.slow
def test_the_neighbour_layout_replaces_the_pca_map_with_progress_and_can_be_cancelled(
    many: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(many)
    page = window.map
    halfway = asyncio.Event()
    page.progress.valueChanged.connect(lambda value: value >= 500 and halfway.set())
    with waiting_for(loop, page.mapShown):  # the PCA map comes first, at once
        window.pages.setCurrentWidget(page)
    assert page.table_map.method == "pca" and len(page.table_map) == 240
    run(loop, halfway.wait())
    assert page.progress.isVisible() and page.cancel_button.isVisible()
    assert "laying out the sample" in page.progress.format()
    assert "laying out every row by its neighbours" in page.status.message
    page.cancel_button.click()
    run(loop, window.operations.wait_idle())
    assert "was cancelled; the map shown is PCA" in page.status.message
    assert page.method() == "pca" and page.table_map.method == "pca" and not page.progress.isVisible()
    combo = page.projection_combo
    combo.setCurrentIndex(combo.findData("tsne"))
    combo.activated.emit(combo.currentIndex())
    run(loop, window.operations.wait_idle(), timeout=300)
    assert page.table_map.method == "tsne" and len(page.table_map) == 240
    assert "Laid out by t-SNE of 240 rows (l2)" in page.status.message
    assert "near in vector space" in page.status.toolTip()


@pytest.mark.process
def test_choosing_another_database_clears_the_filter_without_applying_it(
    history: History, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    window = open_window(history.kb.registry_dir)
    apply_where(window, loop, qtbot, "page < 3")
    applied: list[str] = []
    window.knowledge.filter_bar.whereChanged.connect(applied.append)
    run(loop, window.knowledge.choose_database(NAME))
    run(loop, window.operations.wait_idle())
    assert window.knowledge.filter_bar.where_edit.text() == "" and applied == []
    assert window.knowledge.results.caption.text() == f"All 12 rows of {NAME}"


def test_a_big_map_moves_its_picture_at_once_and_draws_the_view_again_on_a_worker(
    loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from recall_gui.core.inspect.table_map import TableMap
    from recall_gui.core.session.map_cache import Projection
    from recall_gui.qt.panels.map_raster import argb
    from recall_gui.qt.panels.map_view import DRAW_HERE_POINTS, MapView

    rows = 4 * DRAW_HERE_POINTS
    positions = np.random.default_rng(3).normal(size=(rows, 2)).astype(np.float32)
    table_map = TableMap(
        "t", 1, Projection(positions, "pca", 0), np.arange(rows, dtype=np.uint64), rows, False
    )
    workers = ThreadPoolExecutor(1)
    view = MapView(workers=workers)
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    view.begin(table_map)
    with waiting_for(loop, view.pictureShown):
        view.show_points(np.zeros(rows, np.uint8), np.array([argb("#336699")], np.uint32))
    assert view.points_drawn == rows and not view.moving
    view.box.setRange(xRange=(0.0, 1.0), yRange=(0.0, 1.0), padding=0)
    assert view.moving  # the old picture stands in until the new one is drawn
    run(loop, until(lambda: not view.moving, "the view is drawn again"))
    x, y = positions[:, 0].astype(np.float64), positions[:, 1].astype(np.float64)
    (left, right), (bottom, top) = view.box.viewRange()
    in_view = int(((x >= left) & (x < right) & (y >= bottom) & (y < top)).sum())
    assert view.points_drawn == in_view
    # What the user sees: the point's colour where a point is, the background far from every point.
    alone = int(np.argmin(np.hypot(x - 0.5, y - 0.5)))
    image = view.grab().toImage()
    spot = view.widget_position(alone).toPoint()
    assert image.pixelColor(spot).name() != view.backgroundBrush().color().name()
    workers.shutdown()


def test_clear_choice_brings_back_the_search_the_maps_choice_replaced(
    history: History, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    import lancedb

    query = "the capital of Germany"
    table = lancedb.connect(str(history.kb.db_dir)).open_table(NAME)
    oracle = [
        row["id"] for row in table.search(embedder.embed_sync(query)).distance_type("l2").limit(3).to_list()
    ]
    window = open_window(history.kb.registry_dir)
    page = window.knowledge
    page.query_bar.query_edit.setText(query)
    page.query_bar.limit_spin.setValue(3)
    with waiting_for(loop, page.searchFinished):
        page.request_search()
    results = window.findChild(QTableView, "resultsTable")
    assert column(results, 1) == oracle
    show_map(window, loop)
    chosen = np.zeros(len(window.map.table_map), dtype=bool)
    chosen[:4] = True
    with waiting_for(loop, page.browseReady):
        window.pages.setCurrentWidget(window.map)
        run(loop, window.map.pointing.choose(chosen))
    assert page.results.caption.text().startswith(f"4 rows chosen on the map in {NAME}")
    page.query_bar.query_edit.setText("typed since, not searched")
    with waiting_for(loop, page.searchFinished):
        window.map.clear_button.click()
    assert page.results.stack.currentWidget() is results
    assert column(results, 1) == oracle
    assert page.results.caption.text().startswith(f"3 results for “{query}” in {NAME}")
    # Chosen while every row was browsed: Clear Choice browses every row again.
    with waiting_for(loop, page.browseReady):
        page.browse_all()
    with waiting_for(loop, page.browseReady):
        run(loop, window.map.pointing.choose(chosen))
    with waiting_for(loop, page.browseReady):
        window.map.clear_button.click()
    assert page.browse_model.total == len(window.map.table_map)
    assert page.results.caption.text() == f"All {page.browse_model.total} rows of {NAME}"
