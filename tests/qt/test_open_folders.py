"""Opening LanceDB folders in the window: File ▸ Open Folder, a dropped folder, a URI, Open Recent and
``recall-gui PATH``; the "Opened" group, the table picker, the model in one click, and "Add to agents'
databases". The folders are written as other tools write them and are unchanged afterwards; the registry
is untouched until the user adds a table."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QTableView
from pytestqt.qtbot import QtBot

from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_types import EmbedderSpec
from recall_gui.core.search.harness import Harness
from recall_gui.core.tables.folders import open_table
from recall_gui.qt.panels.database_bar import OPENED_HEADER
from tests.foldertools import write_langchain_table, write_wide_table
from tests.kbtools import PASSAGES, KnowledgeBase, snapshot_tree
from tests.qt.conftest import FolderWindow, WindowFactory, run, waiting_for, window_of

QUERY = "How do I change my password?"


def combo_items(window: Any) -> list[str]:
    combo = window.findChild(QComboBox, "dbCombo")
    return [combo.itemText(i) for i in range(combo.count())]


def shown_ids(window: Any) -> list[str]:
    table = window.findChild(QTableView, "resultsTable")
    model = table.model()
    return [model.index(row, 1).data() for row in range(model.rowCount())]


def core_ids(loop: asyncio.AbstractEventLoop, folder: Path, query: str, limit: int) -> list[str]:
    """What the core's search pipeline gives for the same opened table and query."""

    async def go() -> list[str]:
        harness = Harness(folder / "no-registry")
        try:
            opened = await open_table(harness.session, str(folder))
            report = await harness.search_database(opened.entry, query, limit)
        finally:
            await harness.aclose()
        return [hit.id for hit in report.result.hits]

    result: list[str] = run(loop, go())
    return result


def search(window: Any, qtbot: QtBot, loop: asyncio.AbstractEventLoop, query: str) -> None:
    edit = window.findChild(QLineEdit, "queryEdit")
    edit.clear()
    qtbot.keyClicks(edit, query)
    with waiting_for(loop, window.knowledge.searchFinished):
        qtbot.keyClick(edit, Qt.Key.Key_Return)


def test_an_opened_folder_is_listed_under_opened_and_searched_as_the_agent_would(
    kb: KnowledgeBase, folder_window: FolderWindow, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window, db = folder_window.window, folder_window.folder
    items = combo_items(window)
    assert items[0] == kb.name and OPENED_HEADER in items
    assert items[-1] == f"vectorstore — …/{db.parent.name}/langchain"
    assert window.findChild(QComboBox, "dbCombo").currentIndex() == len(items) - 1
    assert window.knowledge.current is not None and window.knowledge.current.origin == "opened"
    assert window.knowledge.results.caption.text() == "All 12 rows of vectorstore"
    bar = window.knowledge.opened_bar
    assert bar.isVisible()
    assert window.findChild(QPushButton, "modelButton").text() == "All-MiniLM-L6-v2 (384d)"
    info = window.findChild(QLabel, "openedInfo")
    assert info.text() == "by width: the only local model of 384 dimensions available"
    assert "opened, not registered: agents cannot search it" in window.findChild(QLabel, "dbInfo").text()

    search(window, qtbot, loop, QUERY)
    assert shown_ids(window) == core_ids(loop, db, QUERY, 5)
    assert shown_ids(window)[0] == "lc-pw-reset"

    # Back to the registered database: the opened bar hides, the opened table stays listed.
    combo = window.findChild(QComboBox, "dbCombo")
    with waiting_for(loop, window.knowledge.searchFinished):
        combo.activated.emit(0)
    assert window.knowledge.current is not None and window.knowledge.current.name == kb.name
    assert not bar.isVisible() and combo_items(window) == items
    assert snapshot_tree(db) == folder_window.folder_before
    assert snapshot_tree(kb.registry_dir) == folder_window.registry_before


def test_a_folder_of_two_tables_asks_which_with_their_rows(
    kb: KnowledgeBase, two_table_folder: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    db = two_table_folder
    before = snapshot_tree(db)
    window = open_window(kb.registry_dir)

    with waiting_for(loop, window.opened.pickerShown):
        window.open_folder(str(db))
    picker = window.opened.picker
    assert picker is not None and picker.isVisible()
    rows = [
        [picker.list.topLevelItem(i).text(c) for c in range(5)]
        for i in range(picker.list.topLevelItemCount())
    ]
    assert rows == [
        ["alpha", "12", "content", "384-d “vector”", "All-MiniLM-L6-v2 (384d)"],
        ["beta", "5", "text", "384-d “vector”", "All-MiniLM-L6-v2 (384d)"],
    ]
    assert picker.chosen() == "alpha"
    picker.choose("beta")
    with waiting_for(loop, window.knowledge.browseReady):
        picker.accept()
    assert window.knowledge.results.caption.text() == "All 5 rows of beta"
    assert snapshot_tree(db) == before


def test_dropping_a_folder_on_the_window_opens_it(
    kb: KnowledgeBase,
    passage_vectors: Any,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    db = tmp_path / "dropped"
    write_langchain_table(db, "notes", passage_vectors)
    window = open_window(kb.registry_dir)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(db))])
    drop = QDropEvent(
        QPointF(QPoint(200, 200)),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    with waiting_for(loop, window.knowledge.browseReady):
        window.dropEvent(drop)
    assert drop.isAccepted()
    assert window.knowledge.current is not None and window.knowledge.current.uri == str(db.resolve())
    assert window.knowledge.results.caption.text() == "All 12 rows of notes"


def test_a_width_no_local_model_has_is_browsed_and_search_says_what_to_do(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    db = tmp_path / "wide"
    write_wide_table(db, "wide", 1000, list(PASSAGES.values()))
    window = open_window(kb.registry_dir)
    assert run(loop, window.opened.open_place(str(db)))
    assert window.knowledge.results.caption.text() == "All 12 rows of wide"
    banner = window.services.banner
    assert banner.isVisible()
    assert banner.message is not None and banner.message.text.startswith(
        "wide: no model to search with: no local model of 1000 dimensions is available here"
    )
    assert window.findChild(QPushButton, "modelButton").text() == "choose a model"
    menu = window.knowledge.opened_bar.menu
    texts = [action.text() for action in menu.actions()]
    assert "none of 1000 dimensions" in texts

    search(window, qtbot, loop, "anything")
    assert banner.message is not None and banner.message.text.startswith(
        "Cannot search wide without a model:"
    )
    assert "No model recall-gui knows gives 1000-dimensional vectors" in (banner.message.hint or "")
    assert window.knowledge.results.caption.text() == (
        "The search in wide failed: cannot search wide without a model: no local model of 1000 dimensions "
        "is available here"
    )


def test_another_model_is_one_click_away_and_the_search_follows_it(
    folder_window: FolderWindow, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = folder_window.window
    menu = window.knowledge.opened_bar.menu
    by_text = {action.text(): action for action in menu.actions()}
    assert by_text["All-MiniLM-L6-v2 (384d)"].isChecked()
    other = by_text["BGE-Small-EN-v1.5 (384d)  (not downloaded: needs the network once)"]
    with waiting_for(loop, window.knowledge.browseReady):
        other.trigger()
    current = window.knowledge.current
    assert current is not None and current.embedder == EmbedderSpec("local", "BGESmallENV15")
    assert current.model_reason == "chosen by you"
    assert window.findChild(QPushButton, "modelButton").text() == "BGE-Small-EN-v1.5 (384d)"
    assert len([i for i in combo_items(window) if i.startswith("vectorstore")]) == 1  # replaced, not added

    by_text = {action.text(): action for action in menu.actions()}
    with waiting_for(loop, window.knowledge.browseReady):
        by_text["All-MiniLM-L6-v2 (384d)"].trigger()
    search(window, qtbot, loop, "capital of Germany")
    assert shown_ids(window)[0] == "lc-berlin"


@pytest.mark.process
def test_add_to_agents_databases_registers_it_and_the_mcp_server_offers_it(
    kb: KnowledgeBase, folder_window: FolderWindow, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    from recall_gui.mcp.probe import probe_call, probe_listing

    window, db, before = folder_window.window, folder_window.folder, folder_window.folder_before
    search(window, qtbot, loop, QUERY)
    opened_ids = shown_ids(window)

    with waiting_for(loop, window.opened.addDialogShown):
        window.menus.add_to_agents_action.trigger()
    dialog = window.opened.add_dialog
    assert dialog is not None and dialog.name_edit.text() == "vectorstore"
    assert dialog.model_spec() == EmbedderSpec("local", "AllMiniLML6V2")
    assert "cosh itself opens the table named like the database" not in dialog.cosh_note.text()
    assert "this table keeps its text in “text”, which only recall-gui's MCP server reads" in (
        dialog.cosh_note.text()
    )
    dialog.name_edit.setText(kb.name)
    assert not dialog.add_button.isEnabled()
    assert dialog.problem.text() == f'Cannot add: a database called "{kb.name}" is already registered.'
    dialog.name_edit.setText("lc-notes")
    assert dialog.add_button.isEnabled()
    assert "only recall-gui's MCP server finds table “vectorstore”" in dialog.cosh_note.text()
    dialog.description_edit.setPlainText("Passwords, capitals and other notes kept by LangChain")
    with waiting_for(loop, window.registryReloaded):
        dialog.add_button.click()
    run(loop, window.operations.wait_idle())

    entry = load_registry(kb.registry_dir).get("lc-notes")
    assert entry is not None and entry.active and entry.table_name == "vectorstore"
    assert window.knowledge.current is not None and window.knowledge.current.name == "lc-notes"
    assert window.knowledge.current.origin == "registry"
    assert OPENED_HEADER not in combo_items(window)  # it is a registered database now
    assert window.services.banner.message is not None
    assert window.services.banner.message.text == "Added lc-notes to the agents' databases (active)."
    search(window, qtbot, loop, QUERY)
    assert shown_ids(window) == opened_ids

    listing = asyncio.run(probe_listing(kb.registry_dir))
    assert "lc-notes" in listing.tools[0]["description"]
    payload = asyncio.run(probe_call(kb.registry_dir, {"db_name": "lc-notes", "query": QUERY, "limit": 5}))
    assert [hit["id"] for hit in json.loads(payload.text)["results"]] == opened_ids
    assert snapshot_tree(db) == before


def test_recall_gui_path_opens_the_window_on_the_folder_and_it_is_kept_in_open_recent(
    kb: KnowledgeBase,
    two_table_folder: Path,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    db, config = two_table_folder, tmp_path / "config"
    with window_of(loop, kb.registry_dir, config, open_path=(str(db / "beta.lance"), {})) as window:
        run(loop, window.start())
        assert window.knowledge.current is not None and window.knowledge.current.table_name == "beta"
        assert window.knowledge.results.caption.text() == "All 5 rows of beta"

    again = open_window(kb.registry_dir, config_dir=config)
    assert again.knowledge.current is not None and again.knowledge.current.name == kb.name
    recent = again.menus.recent_menu
    recent.aboutToShow.emit()  # as when the menu opens
    labels = [action.text() for action in recent.actions()]
    assert labels[0] == f"beta — {db.resolve()}" and "Clear Recent" in labels
    with waiting_for(loop, again.knowledge.browseReady):
        recent.actions()[0].trigger()
    assert again.knowledge.current is not None and again.knowledge.current.table_name == "beta"


def test_a_uri_on_s3_opens_with_the_options_typed_and_secrets_stay_out_of_the_recent_list(
    kb: KnowledgeBase,
    passage_vectors: Any,
    s3: Any,
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    import boto3

    from tests.s3server import SECRET_KEY, upload_tree

    local = tmp_path / "upload"
    write_langchain_table(local, "notes", passage_vectors)
    options = s3.storage_options()
    client = boto3.client(
        "s3",
        endpoint_url=s3.endpoint,
        aws_access_key_id=options["aws_access_key_id"],
        aws_secret_access_key=SECRET_KEY,
        region_name="us-east-1",
    )
    upload_tree(client, s3.bucket, local, "kb")
    window = open_window(kb.registry_dir)
    window.menus.open_uri_action.trigger()
    dialog = window.opened.uri_dialog
    assert dialog is not None and not dialog.buttons.buttons()[0].isEnabled()
    dialog.uri_edit.setText(s3.uri("kb"))
    dialog.options_edit.setPlainText("not an option")
    assert dialog.problem.text() == "Line 1 is not KEY=VALUE: not an option"
    dialog.options_edit.setPlainText("\n".join(f"{k}={v}" for k, v in options.items()))
    assert dialog.problem.isHidden()
    with waiting_for(loop, window.knowledge.browseReady):
        dialog.accept()
    assert window.knowledge.results.caption.text() == "All 12 rows of notes"
    search(window, qtbot, loop, "capital of France")
    assert shown_ids(window)[0] == "lc-paris"
    (recent,) = window.opened.recent.places()
    assert (recent.uri, recent.table) == (s3.uri("kb"), "notes")
    assert "aws_secret_access_key" not in recent.storage_options
    assert recent.storage_options["aws_endpoint"] == s3.endpoint
    window.save_state()
    assert SECRET_KEY not in (tmp_path / "config" / "window.ini").read_text()


def test_a_folder_given_at_start_that_does_not_exist_is_reported_and_the_registry_opens(
    kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path
) -> None:
    missing = tmp_path / "typo"
    window = open_window(kb.registry_dir, open_path=(str(missing), {}))
    message = window.services.banner.message
    assert message is not None and message.text == f"Folder {missing} does not exist"
    assert window.knowledge.current is not None and window.knowledge.current.name == kb.name
    assert not missing.exists()


def test_a_folder_of_several_tables_given_at_start_falls_back_to_the_registry_if_none_is_chosen(
    kb: KnowledgeBase, two_table_folder: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir, start=False, open_path=(str(two_table_folder), {}))
    with waiting_for(loop, window.opened.pickerShown):
        window.begin()
    assert window.knowledge.current is None
    picker = window.opened.picker
    assert picker is not None
    with waiting_for(loop, window.knowledge.browseReady):
        picker.reject()
    assert window.knowledge.current is not None and window.knowledge.current.name == kb.name
