"""The Agent log page with a real knowledge base and the real model: calls listed and filtered, a call's
results with their contents now, Replay after another program changed the table, entries opened on the
knowledge-base page, coverage, the reload when the log changes, and the switch the servers read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from recall_gui.core.agent_log.call_log import LogSwitch
from recall_gui.core.agent_log.call_record import CallRecord
from recall_gui.core.base import TOOL_NAME
from recall_gui.core.base.app_settings import MB, AppSettings, SettingsStore
from recall_gui.core.tables.browse import BrowseRow
from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.models.call_results_model import CHANGE, CONTENT, NOT_THERE, RANK
from recall_gui.qt.models.calls_model import CLIENT, DATABASE, QUERY, RESULTS
from recall_gui.qt.pages.log.page import LogPage
from tests.kbtools import KnowledgeBase
from tests.logtools import add_row_elsewhere, answered, write_records
from tests.qt.conftest import WindowFactory, run, waiting_for


def record_calls(
    window: MainWindow, loop: asyncio.AbstractEventLoop, calls: list[tuple[str, dict[str, Any]]]
) -> list[CallRecord]:
    """Calls answered by the window's own harness, written to the log as the server writes them."""
    harness = run(loop, window.services.harness())
    records = [run(loop, answered(harness, arguments, client=client)) for client, arguments in calls]
    write_records(window.log.files, records)
    return records


def open_log(window: MainWindow, loop: asyncio.AbstractEventLoop) -> LogPage:
    page = window.log
    with waiting_for(loop, page.logLoaded):
        window.pages.setCurrentWidget(page)
    return page


def shown(page: LogPage, column: int) -> list[str]:
    return [
        str(page.calls.calls_model.index(row, column).data())
        for row in range(page.calls.calls_model.rowCount())
    ]


def select_call(page: LogPage, loop: asyncio.AbstractEventLoop, row: int) -> CallRecord:
    with waiting_for(loop, page.contentsShown):
        record = page.calls.select_row(row)
    return record


@pytest.fixture
def window_with_calls(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> tuple[MainWindow, list[CallRecord]]:
    window = open_window(kb.registry_dir)
    records = record_calls(
        window,
        loop,
        [
            ("claude-code", {"db_name": kb.name, "query": "How do I reset my password?", "limit": 3}),
            ("cursor", {"db_name": "elsewhere", "query": "anything"}),
            ("claude-code", {"db_name": kb.name, "query": "capital of Germany", "limit": 2}),
        ],
    )
    return window, records


def test_calls_are_listed_newest_first_and_filtered(
    window_with_calls: tuple[MainWindow, list[CallRecord]], loop: asyncio.AbstractEventLoop, kb: KnowledgeBase
) -> None:
    window, _records = window_with_calls
    page = open_log(window, loop)
    assert shown(page, QUERY) == ["capital of Germany", "anything", "How do I reset my password?"]
    assert shown(page, CLIENT) == ["claude-code 1.0", "cursor 1.0", "claude-code 1.0"]
    assert shown(page, DATABASE) == [kb.name, "elsewhere", kb.name]
    assert shown(page, RESULTS) == ["2", "error", "3"]
    assert page.calls.caption.text() == "3 calls, newest first"

    page.calls.filter_edit.setText("CURSOR")
    assert shown(page, QUERY) == ["anything"]
    assert page.calls.caption.text() == "1 of 3 calls"
    page.calls.filter_edit.setText("nothing like this")
    assert page.calls.calls_model.rowCount() == 0
    assert page.calls.calls_table.placeholder() == "No call matches the filter."


def test_a_call_shows_its_results_as_the_agent_got_them_with_contents_now(
    window_with_calls: tuple[MainWindow, list[CallRecord]], loop: asyncio.AbstractEventLoop, kb: KnowledgeBase
) -> None:
    window, records = window_with_calls
    page = open_log(window, loop)
    record = select_call(page, loop, 2)
    assert record == records[0]
    model = page.calls.results_model
    assert model.ids == records[0].result_ids and model.ids[0] == "pw-reset"
    for row, entry_id in enumerate(model.ids):
        assert model.index(row, CONTENT).data() == kb.contents[kb.ids.index(entry_id)]
    summary = page.calls.summary.text()
    assert summary.startswith("Sent: " + json.dumps(records[0].arguments, ensure_ascii=False))
    assert f"3 results · table version {records[0].table_version}" in summary

    failed = select_call(page, loop, 1)
    assert failed.error is not None and failed.error in page.calls.summary.text()
    assert model.rowCount() == 0


def test_an_id_no_longer_in_the_table_says_so(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    gone = CallRecord(
        "2025-06-01T10:00:00+00:00",
        "c",
        "1",
        "recall_search",
        {"db_name": kb.name, "query": "q"},
        ("tides", "gone"),
    )
    write_records(window.log.files, [gone])
    page = open_log(window, loop)
    select_call(page, loop, 0)
    model = page.calls.results_model
    assert [model.index(row, CONTENT).data() for row in range(2)] == [
        kb.contents[kb.ids.index("tides")],
        NOT_THERE,
    ]


@pytest.mark.process
def test_replay_marks_ids_gained_lost_and_moved_after_another_program_adds_a_row(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    embedder: Any,
    tmp_path: Path,
) -> None:
    window = open_window(kb.registry_dir)
    (before,) = record_calls(
        window,
        loop,
        [("claude-code", {"db_name": kb.name, "query": "What is the capital of France?", "limit": 3})],
    )
    page = open_log(window, loop)
    select_call(page, loop, 0)
    header = page.calls.results_model.headerData
    assert header(RANK, Qt.Orientation.Horizontal) == "Rank"
    with waiting_for(loop, page.replayFinished):
        page.calls.replay_button.click()
    assert header(RANK, Qt.Orientation.Horizontal) == "Rank now"  # the ranks shown are today's
    assert header(CONTENT, Qt.Orientation.Horizontal) == "Content (now)"
    assert page.calls.replay_note.message == "Replayed now: the same ids in the same order as the agent got."
    assert page.calls.replay_note.tone == "good"

    content = "Paris is the capital city of France."
    add_row_elsewhere(kb.db_dir, kb.name, "paris-capital", content, embedder, tmp_path)
    with waiting_for(loop, page.contentsShown):
        page.calls.replay_button.click()
    model = page.calls.results_model
    changes = {model.entry_id(row): model.index(row, CHANGE).data() for row in range(model.rowCount())}
    assert changes["paris-capital"] == "new"
    assert changes[before.result_ids[-1]] == f"lost (was {len(before.result_ids)})"
    assert [text for text in changes.values() if text.startswith("moved from")]
    gained_row = model.ids.index("paris-capital")
    assert model.index(gained_row, CONTENT).data() == content  # looked up in the table now
    assert page.calls.replay_note.message.startswith("Replayed now: 1 gained, 1 lost")
    assert f"table version {before.table_version} then" in page.calls.replay_note.message


def test_a_result_opens_on_the_knowledge_page(
    window_with_calls: tuple[MainWindow, list[CallRecord]], loop: asyncio.AbstractEventLoop, kb: KnowledgeBase
) -> None:
    window, records = window_with_calls
    page = open_log(window, loop)
    select_call(page, loop, 2)
    assert not page.calls.open_button.isEnabled()
    page.calls.results_table.selectRow(1)
    assert page.calls.open_button.isEnabled()
    entry_id = records[0].result_ids[1]
    page.calls.open_button.click()
    run(loop, window.operations.wait_idle())
    knowledge = window.knowledge
    assert window.pages.currentWidget() is knowledge
    assert knowledge.current is not None and knowledge.current.name == kb.name
    assert knowledge.results.filter_text() == entry_id
    (index,) = knowledge.results.browse_table.selectionModel().selectedRows()
    assert index.data(Qt.ItemDataRole.UserRole + 2).id == entry_id
    assert knowledge.detail.id_edit.text() == entry_id
    assert knowledge.detail.content.toPlainText() == kb.contents[kb.ids.index(entry_id)]


def test_coverage_lists_the_entries_never_returned_and_opens_them(
    window_with_calls: tuple[MainWindow, list[CallRecord]], loop: asyncio.AbstractEventLoop, kb: KnowledgeBase
) -> None:
    window, records = window_with_calls
    page = open_log(window, loop)
    page.tabs.setCurrentIndex(1)
    assert page.coverage_tab.coverage_database.currentText() == kb.name
    with waiting_for(loop, page.coverageFinished):
        page.coverage_tab.coverage_button.click()
    returned = {i for r in records if r.error is None for i in r.result_ids}
    never = [i for i in kb.ids if i not in returned]
    assert page.coverage_tab.coverage is not None
    assert (
        page.coverage_tab.coverage.entries,
        page.coverage_tab.coverage.returned,
        page.coverage_tab.coverage.calls,
    ) == (
        len(kb.ids),
        len(returned),
        2,
    )
    assert page.coverage_tab.coverage_summary.text().startswith(
        f"{len(returned)} of {len(kb.ids)} entries ({len(returned) / len(kb.ids):.0%}) of {kb.name} were "
        "returned to agents at least once by 2 calls since "
    )
    # Hubs among what agents got, counted by hand from the records: above a quarter of the 2 calls.
    calls = [r for r in records if r.error is None and r.db_name == kb.name]
    counted = {i: sum(i in r.result_ids for r in calls) for i in returned}
    hubs = sorted((i for i, n in counted.items() if n / len(calls) > 0.25), key=lambda i: (-counted[i], i))
    shown = ", ".join(f"{i} ({counted[i] / len(calls):.0%})" for i in hubs[:5])
    assert page.coverage_tab.hubs_label.text().startswith(
        f"Hubs, returned for more than 25% of the calls: {shown}"
    )
    model = page.coverage_tab.never_model
    assert [model.index(row, 1).data() for row in range(model.rowCount())] == never
    assert [model.index(row, 2).data() for row in range(model.rowCount())] == [
        kb.contents[kb.ids.index(i)] for i in never
    ]

    page.coverage_tab.never_table.selectRow(2)
    # A call arriving meanwhile is not counted behind the user's back (that would reset the rows shown).
    with waiting_for(loop, page.logLoaded, timeout=10):
        record_calls(window, loop, [("cursor", {"db_name": kb.name, "query": "espresso", "limit": 1})])
    assert page.coverage_tab.coverage_summary.text().endswith(
        "Calls arrived since: press Compute to count them too."
    )
    assert model.rowCount() == len(never)
    item = page.coverage_tab.never_table.selectionModel().selectedRows()[0].data(Qt.ItemDataRole.UserRole + 2)
    assert isinstance(item, BrowseRow) and item.id == never[2]
    page.coverage_tab.never_open_button.click()
    run(loop, window.operations.wait_idle())
    assert window.pages.currentWidget() is window.knowledge
    assert window.knowledge.detail.id_edit.text() == never[2]


def test_the_page_reloads_when_the_log_changes_and_keeps_the_selection(
    window_with_calls: tuple[MainWindow, list[CallRecord]], loop: asyncio.AbstractEventLoop, kb: KnowledgeBase
) -> None:
    window, records = window_with_calls
    page = open_log(window, loop)
    select_call(page, loop, 2)
    with waiting_for(loop, page.logLoaded, timeout=10):  # the page looks at the files once a second
        record_calls(window, loop, [("cursor", {"db_name": kb.name, "query": "espresso", "limit": 1})])
    assert shown(page, QUERY)[0] == "espresso"
    assert (
        page.calls.calls_table.selectionModel().currentIndex().data(Qt.ItemDataRole.UserRole + 2)
        == records[0]
    )
    assert page.calls.results_model.ids == records[0].result_ids


def test_a_cut_line_in_the_log_is_noted_on_the_page(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    record_calls(window, loop, [("c", {"db_name": kb.name, "query": "tides"})])
    with window.log.files.current.open("ab") as handle:
        handle.write(b'{"time": "2025-06-01T10:00:00+00:00", "tool": "recall_sea')
    page = open_log(window, loop)
    assert page.calls.calls_model.rowCount() == 1
    assert page.note.isVisible()
    assert "the last line is incomplete (a write cut short): skipped" in page.note.message


def test_the_switch_and_the_bound_are_saved_where_the_servers_read_them(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    window = open_window(kb.registry_dir)
    page = open_log(window, loop)
    store = SettingsStore(tmp_path / "config")  # the window's config dir
    assert page.record_check.isChecked() and page.max_spin.value() == 10
    page.record_check.click()
    assert store.load() == AppSettings(agent_log=False)
    assert LogSwitch(store).recording() is None  # what a server started now (or running) decides
    page.max_spin.setValue(3)
    page.record_check.click()
    assert store.load() == AppSettings(agent_log=True, agent_log_max_bytes=3 * MB)


def test_a_broken_settings_file_is_shown_and_replaced_by_a_choice(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    store = SettingsStore(tmp_path / "config")
    store.directory.mkdir(parents=True)
    store.path.write_text("{broken", encoding="utf-8")
    window = open_window(kb.registry_dir)
    page = open_log(window, loop)
    assert not page.record_check.isChecked()
    assert page.note.isVisible() and "is not valid JSON" in page.note.message
    assert "the servers record nothing" in page.note.message
    page.record_check.click()
    assert store.load() == AppSettings(agent_log=True)
    assert not page.note.isVisible()


@pytest.mark.process
@pytest.mark.slow
def test_a_call_through_the_agent_view_appears_in_the_log(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    """The real server, started by the window's Agent view, records the call; the page shows it."""
    window = open_window(kb.registry_dir)
    window.knowledge.query_bar.query_edit.setText("how do tides work")
    with waiting_for(loop, window.agent.listingFinished):
        window.pages.setCurrentWidget(window.agent)
    with waiting_for(loop, window.agent.payloadFinished):
        window.agent.run_button.click()
    payload = window.agent.last_payload
    assert payload is not None and not payload.is_error
    page = open_log(window, loop)
    if page.calls.calls_model.rowCount() == 0:  # the server writes after it replied: at most one look later
        with waiting_for(loop, page.logLoaded, timeout=10):
            pass
    (record,) = page.calls.calls_model.records
    assert record.client == "recall-gui agent view"
    assert record.result_ids == tuple(hit["id"] for hit in json.loads(payload.text)["results"])
    assert shown(page, CLIENT) == [f"recall-gui agent view {record.client_version}"]
    # The window's own call is listed, but not counted as an agent's: neither here nor by coverage.
    assert page.calls.caption.text() == (
        "0 calls by agents and 1 by this window's Agent view (not counted as agents'), newest first"
    )
    page.tabs.setCurrentIndex(1)
    with waiting_for(loop, page.coverageFinished):
        page.coverage_tab.coverage_button.click()
    assert page.coverage_tab.coverage is not None and (
        page.coverage_tab.coverage.returned,
        page.coverage_tab.coverage.calls,
    ) == (0, 0)
    assert page.coverage_tab.coverage_summary.text().startswith(
        f"0 of {len(kb.ids)} entries (0%) of {kb.name} were returned to agents at least once by 0 calls; "
    )


def test_a_log_larger_than_the_window_holds_shows_its_newest_calls_and_says_so(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    calls = [("c", {"db_name": kb.name, "query": f"question {n}", "limit": 1}) for n in range(4)]
    record_calls(window, loop, calls)
    window.log.max_shown_calls = 2
    page = open_log(window, loop)
    assert shown(page, QUERY) == ["question 3", "question 2"]
    assert page.note.isVisible()
    assert "Only the newest 2 calls are shown, and counted by coverage: 2 older ones are left out" in (
        page.note.message
    )


@pytest.mark.slow
def test_a_long_log_is_shown_as_it_is_read_with_progress_and_never_more_than_the_bound(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reading happens on a worker and hands the page what it read every so often (here: as soon as
    the page took the batch before); the calls read so far are listed at once, the progress bar says how
    far it got, and the page holds no more than its bound of the newest calls while it reads."""
    from recall_gui.qt.pages.log import reading as log_reading

    window = open_window(kb.registry_dir)
    write_records(
        window.log.files,
        [
            CallRecord(f"2026-01-01T10:00:{n // 100:02d}.{n % 100:02d}0000+00:00", "c", "1", TOOL_NAME,
                       {"db_name": kb.name, "query": f"question {n}"}, ("paris",))
            for n in range(60)
        ],
    )  # fmt: skip
    monkeypatch.setattr(log_reading, "BATCH_S", 0.0)
    monkeypatch.setattr(log_reading, "SLICE_S", 0.0)  # the worker lets the GUI thread run after each call
    page = window.log
    page.max_shown_calls = 25
    seen: list[tuple[int, bool, int]] = []
    model = page.calls.calls_model

    def inserted(*_args: object) -> None:
        seen.append((model.held, page.calls.progress.isVisible(), page.calls.progress.value()))

    model.rowsInserted.connect(inserted)
    with waiting_for(loop, page.logLoaded):
        window.pages.setCurrentWidget(page)
    assert len(seen) > 1 and seen[0][0] < 25  # shown while it was read, not all at the end
    assert max(held for held, _bar, _value in seen) == 25
    assert any(bar for _held, bar, _value in seen[:-1])
    values = [value for _held, bar, value in seen if bar]
    assert values == sorted(values)
    assert not page.calls.progress.isVisible()
    assert shown(page, QUERY) == [f"question {n}" for n in range(59, 34, -1)]
    assert "Only the newest 25 calls are shown, and counted by coverage: 35 older ones are left out" in (
        page.note.message
    )
