"""Registry faults in the window: a broken registry is shown (file and position) with everything that could
be read still usable; another program's rewrite is noticed, reloaded and never clobbered by an edit in the
panel; a save the core refuses keeps the user's text in the editor and says what to do."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QTableView
from pytestqt.qtbot import QtBot

from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.scope.inputs import Inputs
from tests.kbtools import KnowledgeBase, cosh_entry, snapshot_tree, view_entry, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for
from tests.qt.trusttools import focus_cell, set_checked, table_names


def banner(window: MainWindow) -> tuple[str, str]:
    """What the banner says (text, hint), or empty strings when it is hidden."""
    if not window.banner.isVisible():
        return "", ""
    return (
        window.banner.findChild(QLabel, "bannerText").text(),
        window.banner.findChild(QLabel, "bannerHint").text(),
    )


def rewrite(path: Path, text: str, *, atomic: bool = True) -> None:
    """Another program saving ``path``: by rename (as careful editors and cosh do) or in place, with a
    new modification time on any file system."""
    if atomic:
        temporary = path.with_name(path.name + ".other-program")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    else:
        path.write_text(text, encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))


def dbs_json(registry_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((registry_dir / "rag_dbs.json").read_text(encoding="utf-8"))
    return data


def first_result(window: MainWindow, loop: asyncio.AbstractEventLoop, query: str) -> str:
    run(loop, window.knowledge.searching.search(Inputs(query, 3)))
    table = window.findChild(QTableView, "resultsTable")
    return str(table.model().index(0, 1).data())


# --- opening a broken registry ------------------------------------------------------------------------


def broken_registries(kb: KnowledgeBase) -> dict[str, tuple[str, str, list[str], list[str], list[str]]]:
    """name -> (rag_dbs.json text, rag_active.json text, databases listed, problems the banner names,
    files that do not parse as a registry)."""
    good = cosh_entry(kb.name, kb.db_dir)
    dbs = json.dumps({"dbs": [good]}, indent=2)
    return {
        "truncated dbs": (
            dbs[:60],
            json.dumps([kb.name]),
            [],
            ["rag_dbs.json: is not valid JSON: Unterminated string starting at line "],
            ["rag_dbs.json"],
        ),
        "empty dbs": ("", json.dumps([kb.name]), [], ["rag_dbs.json: is empty"], ["rag_dbs.json"]),
        "bad entries among good ones": (
            json.dumps(
                {
                    "dbs": [
                        {"name": 7, "uri": "/x"},
                        good,
                        {**good, "description": "a second entry of the same name"},
                        {**cosh_entry("no-embedder", kb.db_dir), "embedder": "fastembed"},
                    ]
                },
                indent=2,
            ),
            json.dumps([kb.name, "ghost"]),
            [kb.name],
            [
                'rag_dbs.json: entry 1 skipped: "name" must be a non-empty string',
                f'rag_dbs.json: entry 3 skipped: duplicate name "{kb.name}"',
                'rag_dbs.json: entry 4 skipped: database "no-embedder": "embedder" must be',
                'rag_active.json: active database "ghost" is not in rag_dbs.json',
            ],
            [],
        ),
        "invalid active file": (
            dbs,
            '["notes", ',
            [f"{kb.name} (inactive)"],
            ["rag_active.json: is not valid JSON: Expecting value at line 1 column 11"],
            ["rag_active.json"],
        ),
        "wrong types": (
            json.dumps({"dbs": {"name": kb.name}}),
            json.dumps({"active": [kb.name]}),
            [],
            [
                'rag_dbs.json: must be a JSON object with a "dbs" array',
                "rag_active.json: must be a JSON array",
            ],
            ["rag_dbs.json", "rag_active.json"],
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "truncated dbs",
        "empty dbs",
        "bad entries among good ones",
        "invalid active file",
        "wrong types",
    ],
)
def test_a_broken_registry_opens_names_every_problem_and_keeps_what_it_could_read(
    case: str, kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    dbs_text, active_text, listed, problems, broken = broken_registries(kb)[case]
    (kb.registry_dir / "rag_dbs.json").write_text(dbs_text, encoding="utf-8")
    (kb.registry_dir / "rag_active.json").write_text(active_text, encoding="utf-8")
    before = snapshot_tree(kb.registry_dir)

    window = open_window(kb.registry_dir)
    text, hint = banner(window)
    for problem in problems:
        assert problem in text, (problem, text)
    assert "never overwrites" in hint and "F5" in hint
    combo = window.knowledge.database_bar.combo
    shown = [combo.itemText(i) for i in range(combo.count()) if combo.itemText(i)]
    if listed:
        assert shown == listed
        assert first_result(window, loop, "capital of France") == "paris"  # what was read still works
    else:
        assert shown == ["(no databases registered)"]
        assert window.knowledge.results.caption.text() == ""
    run(loop, window.reload_registry())
    assert snapshot_tree(kb.registry_dir) == before  # reading, searching and reloading write nothing

    # Edits in the panel: a file that does not parse is never written (the other one may be).
    table = window.findChild(QTableView, "activeTable")
    if table.model().rowCount():
        set_checked(table, 0, Qt.CheckState.Unchecked)
        window.findChild(QPlainTextEdit, "dbDescriptionEdit").setPlainText("edited")
        window.findChild(QPushButton, "saveDescriptionButton").click()
    run(loop, window.operations.wait_idle())
    for name in broken:
        assert snapshot_tree(kb.registry_dir)[name] == before[name], name


def test_a_registry_without_its_files_opens_empty_and_says_so(
    open_window: WindowFactory, tmp_path: Path
) -> None:
    registry_dir = tmp_path / "empty-registry"
    registry_dir.mkdir()
    window = open_window(registry_dir)
    assert banner(window) == ("", "")
    assert window.knowledge.results.results_table.placeholder() == (  # type: ignore[attr-defined]
        f"The registry in {registry_dir} lists no database. Add a LanceDB folder to it with `recall-gui "
        "register PATH --name NAME`, or a database with cosh, or choose another registry with --registry or "
        "$RECALL_REGISTRY_DIR."
    )
    assert list(registry_dir.iterdir()) == []


# --- another program rewriting the registry -------------------------------------------------------------


def two_database_registry(kb: KnowledgeBase, root: Path) -> Path:
    return write_registry(
        root / "registry",
        [
            cosh_entry(kb.name, kb.db_dir, "Team notes"),
            view_entry(kb, "archive", "Old notes") | {"x-owner": "cosh"},
        ],
    )


def test_edits_made_after_another_programs_rewrite_keep_its_changes(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    registry_dir = two_database_registry(kb, tmp_path)
    window = open_window(registry_dir)
    window.pages.setCurrentIndex(1)

    theirs = dbs_json(registry_dir)
    theirs["dbs"][1]["description"] = "Archive, rewritten by cosh"
    theirs["dbs"].append(view_entry(kb, "added-by-cosh"))
    with waiting_for(loop, window.registryReloaded):
        rewrite(registry_dir / "rag_dbs.json", json.dumps(theirs, indent=2))
        rewrite(registry_dir / "rag_active.json", json.dumps([kb.name, "archive", "added-by-cosh"]))
    assert "changed by another program" in banner(window)[0]
    table = window.findChild(QTableView, "activeTable")
    assert table_names(table) == [kb.name, "archive", "added-by-cosh"]

    # Deactivate the first database and rewrite its description, from the keyboard and the editor.
    focus_cell(table, 0, 1)
    with waiting_for(loop, window.registryReloaded):
        qtbot.keyClick(table, Qt.Key.Key_Space)
    editor = window.findChild(QPlainTextEdit, "dbDescriptionEdit")
    assert editor.toPlainText() == "Team notes"
    editor.setPlainText("Team notes: passwords and cities")
    with waiting_for(loop, window.registryReloaded):
        window.findChild(QPushButton, "saveDescriptionButton").click()
    run(loop, window.operations.wait_idle())

    saved = dbs_json(registry_dir)
    expected = json.loads(json.dumps(theirs))
    expected["dbs"][0]["description"] = "Team notes: passwords and cities"
    assert saved == expected  # their description, their new entry and their unknown keys are all there
    active = json.loads((registry_dir / "rag_active.json").read_text(encoding="utf-8"))
    assert active == ["archive", "added-by-cosh"]


def test_an_edit_saved_before_the_window_noticed_a_rewrite_keeps_it_too(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    registry_dir = two_database_registry(kb, tmp_path)
    window = open_window(registry_dir)
    editor = window.findChild(QPlainTextEdit, "dbDescriptionEdit")
    editor.setPlainText("Edited in the window")
    theirs = dbs_json(registry_dir)
    theirs["dbs"][1]["description"] = "Edited by cosh a moment earlier"
    rewrite(registry_dir / "rag_dbs.json", json.dumps(theirs, indent=2), atomic=False)
    # No event has run since: the window's snapshot still holds the old file.
    assert window.registry.get("archive").description == "Old notes"  # type: ignore[union-attr]
    assert window.description.save_description()
    run(loop, window.operations.wait_idle())
    saved = dbs_json(registry_dir)
    assert [db["description"] for db in saved["dbs"]] == [
        "Edited in the window",
        "Edited by cosh a moment earlier",
    ]
    assert window.registry.get("archive").description == "Edited by cosh a moment earlier"  # type: ignore[union-attr]


def test_a_save_refused_because_the_file_does_not_parse_keeps_the_edit_until_it_can_be_saved(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    registry_dir = two_database_registry(kb, tmp_path)
    dbs = registry_dir / "rag_dbs.json"
    window = open_window(registry_dir)
    editor = window.findChild(QPlainTextEdit, "dbDescriptionEdit")
    save = window.findChild(QPushButton, "saveDescriptionButton")
    editor.setPlainText("My careful description")

    good = dbs.read_text(encoding="utf-8")
    broken = good[: len(good) // 2]
    rewrite(dbs, broken, atomic=False)  # another program is half-way through writing it
    save.click()
    text, hint = banner(window)
    assert text.startswith(f"Not saved: {dbs}: is not valid JSON: ") and " at line " in text
    assert "left untouched" in hint and "Fix it by hand" in hint
    assert "still in the editor" in hint
    assert editor.toPlainText() == "My careful description" and save.isEnabled()
    assert dbs.read_text(encoding="utf-8") == broken

    with waiting_for(loop, window.registryReloaded):
        pass  # the window notices the broken file and reloads: the edit must survive that too
    assert "is not valid JSON" in banner(window)[0]
    assert editor.toPlainText() == "My careful description"
    assert not window.description.save_description()
    assert dbs.read_text(encoding="utf-8") == broken

    theirs = json.loads(good)
    theirs["dbs"].append(view_entry(kb, "added-by-cosh"))
    with waiting_for(loop, window.registryReloaded):
        rewrite(dbs, json.dumps(theirs, indent=2))  # the other program finishes its save
    run(loop, window.operations.wait_idle())
    assert editor.toPlainText() == "My careful description" and save.isEnabled()
    with waiting_for(loop, window.registryReloaded):
        save.click()
    run(loop, window.operations.wait_idle())
    saved = dbs_json(registry_dir)
    assert [db["name"] for db in saved["dbs"]] == [kb.name, "archive", "added-by-cosh"]
    assert saved["dbs"][0]["description"] == "My careful description"
    assert not save.isEnabled()


def test_a_description_another_program_changed_under_an_unsaved_edit_is_pointed_out(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    registry_dir = two_database_registry(kb, tmp_path)
    window = open_window(registry_dir)
    editor = window.findChild(QPlainTextEdit, "dbDescriptionEdit")
    editor.setPlainText("Mine")
    theirs = dbs_json(registry_dir)
    theirs["dbs"][0]["description"] = "Theirs"
    with waiting_for(loop, window.registryReloaded):
        rewrite(registry_dir / "rag_dbs.json", json.dumps(theirs, indent=2))
    run(loop, window.operations.wait_idle())
    label = window.findChild(QLabel, "dbDescriptionLabel")
    assert label.text().startswith(f"Description of {kb.name} — another program changed it while you were")
    assert "Save replaces their text with yours, Revert shows theirs" in label.text()
    assert label.toolTip() == "Their text:\nTheirs"
    assert editor.toPlainText() == "Mine"
    window.findChild(QPushButton, "revertDescriptionButton").click()
    assert editor.toPlainText() == "Theirs"
    assert label.text() == f"Description of {kb.name}:"
    assert dbs_json(registry_dir) == theirs


def test_a_registry_with_many_problems_lists_the_first_ones_and_counts_the_rest(
    kb: KnowledgeBase, open_window: WindowFactory
) -> None:
    entries: list[dict[str, Any]] = [{"name": f"bad-{n}", "uri": ""} for n in range(8)]
    write_registry(kb.registry_dir, [*entries, cosh_entry(kb.name, kb.db_dir)], active=[kb.name])
    window = open_window(kb.registry_dir)
    lines = banner(window)[0].splitlines()
    assert lines[0] == "The registry has 8 problems:"
    assert lines[1:7] == [
        f'• {kb.registry_dir / "rag_dbs.json"}: entry {n + 1} skipped: database "bad-{n}": '
        '"uri" must be a non-empty string'
        for n in range(6)
    ]
    assert lines[7:] == ["… and 2 more"]
    assert window.knowledge.database_bar.names() == [kb.name]
