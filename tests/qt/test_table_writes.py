"""Another program writes the table while the window shows it. After the next search or browse, the
header states the version (and its rows) that the results on screen come from, as LanceDB reports it, and
the version list marks LanceDB's latest version; an older version the user opened stays shown, with its
own facts; a re-check of the databases (F5) updates the list without the header claiming rows it does not
show."""

from __future__ import annotations

import asyncio
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from PySide6.QtWidgets import QComboBox

from recall_gui.qt.main_window import MainWindow
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import WindowFactory, run, until, waiting_for

QUERY = "How do I change my password?"
TEXTS = ("Tide tables list high and low water.", "Passwords expire yearly.")


def add_row(kb: KnowledgeBase, embedder: Any, entry_id: str, text: str) -> None:
    """Another program adds a row: a new version of the table."""
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    vector = np.asarray(embedder.embed_sync(text), np.float32)
    table.add(
        pa.table(
            {
                "id": [entry_id],
                "content": [text],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vector), len(vector)),
            }
        )
    )


def lancedb_facts(kb: KnowledgeBase, version: int | None = None) -> tuple[int, int]:
    """The oracle: LanceDB's own (version, rows) of the table, at ``version`` or the latest."""
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    if version is not None:
        table.checkout(version)
    return table.version, table.count_rows()


def versions_listed(window: MainWindow) -> list[str]:
    combo = window.findChild(QComboBox, "versionCombo")
    return [combo.itemText(row) for row in range(combo.count())]


def marked_latest(window: MainWindow) -> list[str]:
    return [item for item in versions_listed(window) if "latest" in item.split(" · ")]


def header(window: MainWindow) -> str:
    text: str = window.knowledge.database_bar.info.text()
    return text


def says(window: MainWindow, version: int, rows: int) -> bool:
    """The header gives ``rows`` and ``version`` as the facts of the rows shown (a newer version, when
    it names one, is in brackets after it)."""
    parts = header(window).split(" · ")
    named = f"version {version}"
    return f"{rows:,} rows" in parts and any(p == named or p.startswith(f"{named} (") for p in parts)


def search(window: MainWindow, loop: asyncio.AbstractEventLoop) -> None:
    page = window.knowledge
    page.query_bar.query_edit.setText(QUERY)
    with waiting_for(loop, page.searchFinished):
        page.request_search()


def browse(window: MainWindow, loop: asyncio.AbstractEventLoop) -> None:
    page = window.knowledge
    with waiting_for(loop, page.browseReady):
        page.browse_all()


def caught_up(window: MainWindow, loop: asyncio.AbstractEventLoop, version: int, rows: int) -> None:
    """Wait until the header and the list show LanceDB's latest ``version`` (with ``rows``); from the
    moment the results are shown, the header names no earlier version."""
    assert not says(window, version - 1, rows - 1), header(window)
    assert f"version {version}" in header(window), header(window)
    run(loop, until(lambda: says(window, version, rows), f"the header saying version {version}"))
    run(loop, until(lambda: marked_latest(window) == [f"{version} · latest · {rows} rows"], "the list"))
    run(loop, window.operations.wait_idle())
    assert says(window, version, rows), header(window)  # nothing later took it back
    assert "newer" not in header(window)


def opened(window: MainWindow, kb: KnowledgeBase, loop: asyncio.AbstractEventLoop) -> MainWindow:
    run(loop, until(lambda: bool(marked_latest(window)), "the versions listed"))
    run(loop, window.operations.wait_idle())
    version, rows = lancedb_facts(kb)
    assert says(window, version, rows), header(window)
    return window


def test_after_another_program_writes_a_search_brings_the_header_and_the_list_to_its_version(
    kb: KnowledgeBase, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = opened(open_window(kb.registry_dir), kb, loop)
    assert "version 1" in header(window).split(" · ")

    for number, text in enumerate(TEXTS, 1):
        add_row(kb, embedder, f"new-{number}", text)
        search(window, loop)
        latest, rows = lancedb_facts(kb)
        assert window.knowledge.last_report is not None
        assert window.knowledge.last_report.result.table_version == latest
        caught_up(window, loop, latest, rows)


def test_after_another_program_writes_browsing_brings_the_header_and_the_list_to_its_version(
    kb: KnowledgeBase, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = opened(open_window(kb.registry_dir), kb, loop)

    for number, text in enumerate(TEXTS, 1):
        add_row(kb, embedder, f"new-{number}", text)
        browse(window, loop)
        latest, rows = lancedb_facts(kb)
        assert window.knowledge.results.caption.text().startswith(f"All {rows} rows")
        caught_up(window, loop, latest, rows)


def test_an_older_version_opened_stays_shown_with_its_facts_while_the_list_marks_the_new_latest(
    kb: KnowledgeBase, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    add_row(kb, embedder, "new-1", TEXTS[0])  # version 2
    window = opened(open_window(kb.registry_dir), kb, loop)
    page = window.knowledge
    run(loop, page.open_version(1, page.read_inputs()))
    run(loop, window.operations.wait_idle())
    first, first_rows = lancedb_facts(kb, 1)
    assert says(window, first, first_rows), header(window)  # the rows shown are version 1's

    add_row(kb, embedder, "new-2", TEXTS[1])  # version 3, while version 1 is shown
    search(window, loop)
    latest, rows = lancedb_facts(kb)
    run(loop, until(lambda: marked_latest(window) == [f"{latest} · latest · {rows} rows"], "the new latest"))
    run(loop, window.operations.wait_idle())
    assert page.last_report is not None and page.last_report.result.table_version == first
    assert says(window, first, first_rows), header(window)
    assert f"version {latest}" not in header(window)
    assert window.findChild(QComboBox, "versionCombo").currentText().startswith(f"{first} · ")
    assert f"the latest is version {latest}" in page.version_bar.note.message


def test_a_recheck_lists_the_new_latest_and_the_header_keeps_the_version_shown(
    kb: KnowledgeBase, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = opened(open_window(kb.registry_dir), kb, loop)
    shown, shown_rows = lancedb_facts(kb)
    add_row(kb, embedder, "new-1", TEXTS[0])
    latest, rows = lancedb_facts(kb)

    run(loop, window.reread_registry())  # F5: the databases are checked again
    run(loop, until(lambda: marked_latest(window) == [f"{latest} · latest · {rows} rows"], "the new latest"))
    run(loop, window.operations.wait_idle())
    assert window.knowledge.results.caption.text().startswith(f"All {shown_rows} rows")
    assert says(window, shown, shown_rows), header(window)  # the rows on screen are still those
    assert f"version {latest} is newer" in header(window)

    browse(window, loop)
    caught_up(window, loop, latest, rows)
