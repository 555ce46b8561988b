"""The window says what ``recall-gui list`` says: the dropdown marks a database whose every search fails,
and a registry folder that is not there is named, with what to do."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from tests.kbtools import KnowledgeBase, cosh_entry, view_entry, write_registry
from tests.qt.conftest import WindowFactory
from tests.qt.trusttools import banner


def test_the_dropdown_marks_a_database_no_search_can_use(
    kb: KnowledgeBase, open_window: WindowFactory
) -> None:
    write_registry(
        kb.registry_dir,
        [
            cosh_entry(kb.name, kb.db_dir),
            view_entry(kb, "odd-metric") | {"metric": "hamming"},
        ],
    )
    window = open_window(kb.registry_dir)
    combo = window.findChild(QComboBox, "dbCombo")
    texts = [combo.itemText(i) for i in range(combo.count()) if combo.itemText(i)]
    assert texts == [kb.name, "odd-metric — cannot be searched"]
    tip = combo.itemData(1, Qt.ItemDataRole.ToolTipRole)
    assert 'cannot be searched: unknown distance metric "hamming"' in tip
    assert 'Fix "metric" in the registry entry' in tip


def test_a_registry_folder_that_does_not_exist_is_named_in_the_window(
    tmp_path: Path, open_window: WindowFactory
) -> None:
    missing = tmp_path / "nowhere"
    window = open_window(missing)
    text, hint = banner(window)
    assert text == f"The registry folder {missing} (given with --registry) does not exist"
    assert hint.startswith("Give --registry the folder that holds rag_dbs.json")
    placeholder = window.knowledge.results.results_table.placeholder()
    assert placeholder.startswith(f"The registry folder {missing} (given with --registry) does not exist.")
    assert not missing.exists()
