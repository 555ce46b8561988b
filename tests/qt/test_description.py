"""The description page: what the agent reads, edited live, saved where the CLI and agents find it — with
the generated database list always live and the user's own text kept beside it."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QComboBox, QLabel, QPlainTextEdit, QPushButton, QTableView
from pytestqt.qtbot import QtBot

from recall_gui.cli import main
from recall_gui.core.base.tool import DEFAULT_DESCRIPTION
from recall_gui.core.registry.registry_changes import set_active
from recall_gui.core.registry.suffix_store import SuffixMode, SuffixStore
from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.panels.status_note import StatusNote
from tests.kbtools import KnowledgeBase, cosh_entry, cosh_listing, described, view_entry, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for
from tests.qt.trusttools import banner, check_state, focus_cell, set_checked, table_names


def edit(view: QPlainTextEdit, qtbot: QtBot, text: str) -> None:
    view.setFocus()
    view.moveCursor(view.textCursor().MoveOperation.End)
    qtbot.keyClicks(view, text)


def generated_of(kb: KnowledgeBase) -> str:
    """The list agents get for ``kb``'s registry, spelled out (its one database)."""
    return cosh_listing((kb.name, f"{kb.name} knowledge base", kb.db_dir))


def cli_tool(
    registry_dir: Path, config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, str], str]:
    """What `recall-gui tool` prints for the window's registry and config dir: the tool, and stderr."""
    capsys.readouterr()
    monkeypatch.setenv("RECALL_GUI_CONFIG_DIR", str(config))
    assert main(["tool", "--registry", str(registry_dir)]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def suffix_widgets(window: MainWindow) -> tuple[QPlainTextEdit, QPlainTextEdit, QPlainTextEdit, StatusNote]:
    """The suffix's editor, generated list, preview and state, with their page shown (the long texts are
    laid out only while it is)."""
    window.pages.setCurrentWidget(window.description)
    return (
        window.findChild(QPlainTextEdit, "suffixEdit"),
        window.findChild(QPlainTextEdit, "generatedSuffixView"),
        window.findChild(QPlainTextEdit, "descriptionPreview"),
        window.findChild(StatusNote, "suffixState"),
    )


def choose_mode(window: MainWindow, mode: SuffixMode) -> None:
    combo = window.findChild(QComboBox, "suffixMode")
    index = combo.findData(mode)
    combo.setCurrentIndex(index)
    combo.activated.emit(index)  # as a user's choice does


def test_notes_follow_the_live_list_and_update_the_description_and_tool_json_as_typed(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot
) -> None:
    window = open_window(kb.registry_dir)
    notes, generated_view, preview, state = suffix_widgets(window)
    generated = generated_of(kb)
    assert generated_view.toPlainText() == generated and generated_view.isReadOnly()
    assert notes.toPlainText() == ""
    assert preview.toPlainText() == described(generated)

    edit(notes, qtbot, "Prefer notes for account questions.")
    expected = generated + "Prefer notes for account questions."
    assert preview.toPlainText() == described(expected)
    tool = json.loads(window.findChild(QPlainTextEdit, "toolJsonView").toPlainText())
    assert tool["name"] == "recall_search"
    assert tool["description"] == f"{DEFAULT_DESCRIPTION}\n\n{expected}"
    assert tool["inputSchema"]["required"] == ["db_name", "query"]
    assert state.message.startswith("Edited, not saved") and state.tone == "warning"
    # What is the user's and what is generated are tinted apart in the preview, line by line.
    bands = preview.extraSelections()
    assert [band.cursor.selectedText() for band in bands] == [
        generated.replace("\n", "\u2029"),
        "Prefer notes for account questions.",
    ]


def test_suffix_saved_is_said_on_the_description_page_only(
    kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path
) -> None:
    window = open_window(kb.registry_dir, config_dir=tmp_path / "profile")
    window.pages.setCurrentWidget(window.description)
    notes = suffix_widgets(window)[0]
    notes.setPlainText("Ask it about passwords.\n")
    window.findChild(QPushButton, "saveSuffixButton").click()
    text = window.banner.findChild(QLabel, "bannerText")
    assert window.banner.isVisibleTo(window) and text.text() == (
        "Suffix saved: agents that use recall-gui mcp get it at their next tool listing."
    )
    hint = window.banner.findChild(QLabel, "bannerHint").text()
    assert hint == "cosh's own agent does not read these notes: it gets the generated list alone."
    window.pages.setCurrentWidget(window.checks)
    assert not window.banner.isVisibleTo(window)
    window.pages.setCurrentWidget(window.knowledge)
    assert not window.banner.isVisibleTo(window)


def test_saved_notes_reach_the_cli_and_a_database_activated_later_reaches_them_too(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    loop: asyncio.AbstractEventLoop,
) -> None:
    config = kb.registry_dir.parent / "profile"
    other = view_entry(kb, "archive", "Old notes")
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir), other], active=[kb.name])
    window = open_window(kb.registry_dir, config_dir=config)
    notes, _generated, _preview, state = suffix_widgets(window)
    notes.setPlainText("Ask it about passwords.\n")
    save = window.findChild(QPushButton, "saveSuffixButton")
    assert save.isEnabled()
    save.click()
    assert SuffixStore(config).notes_path.read_text(encoding="utf-8") == "Ask it about passwords.\n"
    assert not save.isEnabled() and state.message.startswith(
        "Saved: agents get the live list, then your notes"
    )
    assert (
        banner(window)[0] == "Suffix saved: agents that use recall-gui mcp get it at their next tool listing."
    )
    tool, warnings = cli_tool(kb.registry_dir, config, capsys, monkeypatch)
    assert tool["description"] == described(generated_of(kb) + "Ask it about passwords.\n")
    assert warnings == ""

    # cosh activates the other database: the notes stay, the list follows, for the window and the CLI.
    with waiting_for(loop, window.registryReloaded):
        set_active(kb.registry_dir, "archive", True)
    run(loop, window.operations.wait_idle())
    generated = generated_of(kb) + cosh_listing(("archive", "Old notes", kb.db_dir)).removeprefix(
        "Available databases:\n\n"
    )
    window.pages.setCurrentWidget(window.description)
    assert window.findChild(QPlainTextEdit, "generatedSuffixView").toPlainText() == generated
    assert notes.toPlainText() == "Ask it about passwords.\n" and not save.isEnabled()
    assert cli_tool(kb.registry_dir, config, capsys, monkeypatch)[0]["description"] == described(
        generated + "Ask it about passwords.\n"
    )


def test_an_override_is_chosen_knowingly_and_a_stale_one_is_named(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = tmp_path / "profile"
    window = open_window(kb.registry_dir, config_dir=config)
    editor, generated_view, preview, state = suffix_widgets(window)
    editor.setPlainText("Mine.")
    choose_mode(window, SuffixMode.OVERRIDE)
    generated = generated_of(kb)
    assert editor.toPlainText() == generated + "Mine."  # begins as what agents get now
    assert not generated_view.isVisibleTo(window)
    assert "instead of the generated list" in window.findChild(QLabel, "suffixEditLabel").text()
    drift = window.findChild(StatusNote, "suffixDrift")
    assert drift.isHidden()

    editor.setPlainText("Only my own words.")
    assert not drift.isHidden() and drift.tone == "bad"
    assert drift.message == (
        f"Once saved, the tool description agents get leaves out a database that is active ({kb.name}). "
        "Edit your text, or choose “Generated list, then my notes”."
    )
    window.findChild(QPushButton, "saveSuffixButton").click()
    assert SuffixStore(config).override_path.read_text(encoding="utf-8") == "Only my own words."
    text, hint = banner(window)
    assert (
        text
        == f"Suffix saved. The tool description agents get leaves out a database that is active ({kb.name})."
    )
    assert "replaces the generated database list" in hint
    assert state.message.startswith("Saved: your text replaces the generated list")
    assert drift.message.startswith("The tool description agents get leaves out")  # served now
    tool, warnings = cli_tool(kb.registry_dir, config, capsys, monkeypatch)
    assert tool["description"] == described("Only my own words.")
    assert (
        f"warning: The tool description agents get leaves out a database that is active ({kb.name})."
        in warnings
    )
    assert preview.toPlainText() == tool["description"]

    choose_mode(window, SuffixMode.NOTES)  # back: the notes were kept all along
    assert editor.toPlainText() == "Mine." and drift.isHidden()
    window.findChild(QPushButton, "saveSuffixButton").click()
    assert not SuffixStore(config).override_path.exists()
    assert cli_tool(kb.registry_dir, config, capsys, monkeypatch) == (
        {**tool, "description": described(generated + "Mine.")},
        "",
    )


def test_revert_drops_unsaved_suffix_edits(kb: KnowledgeBase, open_window: WindowFactory) -> None:
    window = open_window(kb.registry_dir)
    editor, _generated, preview, _state = suffix_widgets(window)
    editor.setPlainText("draft")
    revert = window.findChild(QPushButton, "revertSuffixButton")
    assert revert.isEnabled()
    revert.click()
    assert editor.toPlainText() == "" and not revert.isEnabled()
    assert preview.toPlainText() == described(generated_of(kb))


def test_a_suffix_from_recall_gui_0_1_is_read_as_notes_after_the_live_list_and_kept_when_saved(
    kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path
) -> None:
    config = tmp_path / "profile"
    config.mkdir()
    old = generated_of(kb) + "Prefer notes for passwords.\n"
    (config / "tool_suffix.txt").write_text(old, encoding="utf-8")
    window = open_window(kb.registry_dir, config_dir=config)
    editor, _generated, _preview, state = suffix_widgets(window)
    assert editor.toPlainText() == "Prefer notes for passwords.\n"
    assert state.message.startswith(
        "From tool_suffix.txt (an earlier recall-gui): its database list is generated"
    )
    editor.setPlainText("Prefer notes for passwords and cities.\n")
    window.findChild(QPushButton, "saveSuffixButton").click()
    assert (config / "tool_suffix.txt.bak").read_text(encoding="utf-8") == old
    assert not (config / "tool_suffix.txt").exists()
    assert "The earlier tool_suffix.txt is kept as tool_suffix.txt.bak." in banner(window)[0]


@pytest.mark.parametrize("name", ["tool_suffix.txt", "tool_notes.txt"])
def test_a_suffix_file_that_is_not_utf8_is_reported_and_the_window_opens(
    kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path, name: str
) -> None:
    config = tmp_path / "profile"
    config.mkdir()
    (config / name).write_bytes(b"Caf\xe9 words\n")
    window = open_window(kb.registry_dir, config_dir=config)
    text, hint = banner(window)
    assert text == f"{config / name} cannot be read: it is not UTF-8 text (byte 0xe9 at position 3)"
    assert "Agents get the generated database list without your text" in hint
    editor, _generated, _preview, state = suffix_widgets(window)
    assert editor.toPlainText().endswith("Caf\ufffd words\n")
    assert state.tone == "bad" and state.message.startswith(f"{name} cannot be read")
    save = window.findChild(QPushButton, "saveSuffixButton")
    assert save.isEnabled()  # saving replaces the damaged file, which is kept aside
    save.click()
    assert (config / f"{name}.unreadable").read_bytes() == b"Caf\xe9 words\n"
    assert state.tone == "good"


def test_a_damaged_window_ini_is_set_aside_and_the_window_opens(
    kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path
) -> None:
    config = tmp_path / "profile"
    config.mkdir()
    (config / "window.ini").write_bytes(b"\xff\xfe[window]\npage=\x81\n")
    window = open_window(kb.registry_dir, config_dir=config)
    assert (config / "window.ini.damaged").read_bytes() == b"\xff\xfe[window]\npage=\x81\n"
    window.close()  # writes the settings afresh
    assert "[window]" in (config / "window.ini").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("kind", "named"),
    [("folder", "a folder"), ("fifo", "a FIFO"), ("dev-zero-link", "a character device")],
)
def test_a_window_ini_that_is_no_file_is_named_in_the_banner(
    tmp_path: Path, open_window: WindowFactory, kind: str, named: str
) -> None:
    config = tmp_path / "profile"
    config.mkdir()
    ini = config / "window.ini"
    if kind == "folder":
        ini.mkdir()
    elif kind == "fifo":
        os.mkfifo(ini)
    else:
        ini.symlink_to("/dev/zero")
    registry_dir = write_registry(tmp_path / "reg", [cosh_entry("a", tmp_path / "a")], active=[])
    window = open_window(registry_dir, config_dir=config, start=False)
    text, hint = banner(window)
    assert text == (
        f"The window's settings file {ini} was damaged (it is {named}, not a regular file): "
        "it is kept as window.ini.damaged"
    )
    assert "opens with its default size" in hint
    assert os.path.lexists(config / "window.ini.damaged") and not os.path.lexists(ini)


def test_toggling_a_database_writes_only_its_active_state_and_the_list_follows(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    kb = make_kb()
    other = view_entry(kb, "other", "Another view") | {"x-custom": {"keep": 1}}
    registry_dir = write_registry(tmp_path / "reg", [cosh_entry(kb.name, kb.db_dir), other])
    dbs_before = (registry_dir / "rag_dbs.json").read_bytes()
    window = open_window(registry_dir)
    table = window.findChild(QTableView, "activeTable")
    assert table_names(table) == [kb.name, "other"]
    window.pages.setCurrentWidget(window.description)

    with waiting_for(loop, window.registryReloaded):
        set_checked(table, 1, Qt.CheckState.Unchecked)
    assert json.loads((registry_dir / "rag_active.json").read_text()) == [kb.name]
    assert (registry_dir / "rag_dbs.json").read_bytes() == dbs_before
    generated = window.findChild(QPlainTextEdit, "generatedSuffixView").toPlainText()
    assert "- Name: other" not in generated and f"- Name: {kb.name}" in generated
    assert (
        window.knowledge.database_bar.combo.itemText(window.knowledge.database_bar.combo.count() - 1)
        == "other (inactive)"
    )
    run(loop, window.operations.wait_idle())

    with waiting_for(loop, window.registryReloaded):
        set_checked(table, 0, Qt.CheckState.Unchecked)
    assert "(none active)" in window.findChild(QPlainTextEdit, "generatedSuffixView").toPlainText()
    run(loop, window.operations.wait_idle())


def test_editing_a_description_saves_it_keeps_unknown_fields_and_confirms_it(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    kb = make_kb()
    entry = {**cosh_entry(kb.name, kb.db_dir, "Old words"), "x-custom": [1, 2], "created_at": 123}
    registry_dir = write_registry(tmp_path / "reg", [entry])
    window = open_window(registry_dir)
    editor = window.findChild(QPlainTextEdit, "dbDescriptionEdit")
    assert editor.toPlainText() == "Old words"
    editor.setPlainText("Team notes: passwords, cities, Python — what agents may ask about")
    with waiting_for(loop, window.registryReloaded):
        qtbot.mouseClick(window.findChild(QPushButton, "saveDescriptionButton"), Qt.MouseButton.LeftButton)
    saved = json.loads((registry_dir / "rag_dbs.json").read_text(encoding="utf-8"))["dbs"][0]
    assert saved == {
        **entry,
        "description": "Team notes: passwords, cities, Python — what agents may ask about",
    }
    window.pages.setCurrentWidget(window.description)
    assert (
        "what agents may ask about" in window.findChild(QPlainTextEdit, "generatedSuffixView").toPlainText()
    )
    label = window.findChild(QLabel, "dbDescriptionLabel")
    assert label.text() == f"Description of {kb.name} — saved: agents read it from the registry now."
    assert (
        window.status_activity.text()
        == f"Saved the description of {kb.name} to {registry_dir / 'rag_dbs.json'}"
    )
    editor.setPlainText("Changed again")
    assert label.text() == f"Description of {kb.name}:"
    run(loop, window.operations.wait_idle())


def test_a_name_that_could_not_be_written_back_is_refused_when_read_and_the_file_kept(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    """A lone surrogate (``\\ud800`` in the JSON) in a database's name cannot be written back as UTF-8: the
    entry is skipped when read (so no save can fail on it), the banner says which and what to do."""
    registry_dir = tmp_path / "reg"
    write_registry(registry_dir, [cosh_entry("odd", kb.db_dir, "words")], active=[])
    dbs = registry_dir / "rag_dbs.json"
    text = dbs.read_text(encoding="utf-8").replace('"odd"', '"odd\\ud800"')
    dbs.write_text(text, encoding="utf-8")
    window = open_window(registry_dir, start=False)
    run(loop, window.read_registry())
    assert window.registry.databases == ()
    message, hint = banner(window)
    assert message == (
        f"The registry has a problem: {dbs}: entry 1 skipped: "
        '"name" is not valid Unicode text: "odd\\ud800" holds the unpaired surrogate \\ud800'
    )
    assert hint.startswith("The rest of it is used. Fix the file by hand and press F5")
    assert dbs.read_text(encoding="utf-8") == text


def test_another_program_changing_the_registry_is_noticed_and_unsaved_edits_survive(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    notes = window.findChild(QPlainTextEdit, "suffixEdit")
    notes.setPlainText("my unsaved notes")
    description = window.findChild(QPlainTextEdit, "dbDescriptionEdit")
    description.setPlainText("my unsaved description")

    dbs = kb.registry_dir / "rag_dbs.json"
    data = json.loads(dbs.read_text())
    data["dbs"].append(cosh_entry("added-by-cosh", kb.db_dir))
    dbs.write_text(json.dumps(data, indent=2))
    stat = dbs.stat()
    os.utime(dbs, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # a new stamp on any file system
    with waiting_for(loop, window.registryReloaded):
        pass  # the file watcher notices
    assert "changed by another program" in window.banner.findChild(QLabel, "bannerText").text()
    assert "added-by-cosh" in window.knowledge.database_bar.names()
    assert notes.toPlainText() == "my unsaved notes"
    assert description.toPlainText() == "my unsaved description"
    run(loop, window.operations.wait_idle())


def test_space_toggles_the_selected_database_from_the_keyboard(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    window.pages.setCurrentIndex(1)
    table = window.findChild(QTableView, "activeTable")
    focus_cell(table, 0, 1)  # the name cell has the focus, not the checkbox
    with waiting_for(loop, window.registryReloaded):
        qtbot.keyClick(table, Qt.Key.Key_Space)
    assert json.loads((kb.registry_dir / "rag_active.json").read_text()) == []
    assert check_state(table, 0) == Qt.CheckState.Unchecked
    run(loop, window.operations.wait_idle())


def test_the_page_fits_a_small_window(kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path) -> None:
    """At 800x500 the suffix's state, its two parts and its buttons are all on screen, none squeezed shut."""
    window = open_window(kb.registry_dir)
    window.pages.setCurrentIndex(1)
    window.resize(800, 500)
    window.description.drafts.suffix.edit("- Name: gone\n")  # shows the drift note as well
    QApplication.processEvents()  # lay the page out again
    page = window.description
    for note in (page.suffix_state, page.suffix_drift):  # every line of the wrapped text shows
        assert note.isVisible() and note.height() >= note.heightForWidth(note.width())
    for view in (page.generated_view, page.suffix_edit):
        assert view.isVisible() and view.height() >= 3 * view.fontMetrics().lineSpacing()
    button = page.save_suffix_button
    assert button.isVisible() and button.height() >= button.minimumSizeHint().height()
    table = page.active_table
    assert table.columnWidth(1) >= table.sizeHintForColumn(1)  # database names are not cut
    page.grab().save(str(tmp_path / "description-800x500.png"))
