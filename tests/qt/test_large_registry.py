"""The window with a registry of thousands of databases: every list shows every name (lists are models
over the snapshot), and the health checks reach the end of the list in the background."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from recall_gui.qt.window.registry_reading import HEALTH_FIRST
from tests.kbtools import cosh_entry, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for
from tests.qt.trusttools import table_names

COUNT = 5_000


@pytest.mark.slow
def test_every_list_shows_all_of_a_large_registry_and_follows_its_changes(
    open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    names = [f"db-{number:04d}" for number in range(COUNT)]
    entries = [cosh_entry(name, tmp_path / "gone" / name) for name in names]
    active = names[1::2]  # every other one, so both groups are long
    registry_dir = write_registry(tmp_path / "reg", entries, active=active)
    inactive = names[0::2]

    window = open_window(registry_dir)
    bar = window.knowledge.database_bar
    assert bar.names() == active + inactive
    combo = bar.combo
    texts = [combo.itemText(row) for row in range(combo.count())]
    assert combo.count() == COUNT + 1  # and the separator between the groups
    assert texts[0].startswith("db-0001") and texts[-1].startswith("db-4998 (inactive)")
    assert table_names(window.description.active_table) == names
    health_picker = window.health.database_combo
    assert [health_picker.itemText(row) for row in (0, COUNT - 1)] == ["db-0001", "db-4998 (inactive)"]
    assert window.log.coverage_tab.coverage_database.count() == COUNT

    # The first databases were checked during start-up; the rest in the background, to the last one.
    assert "Checking…" not in combo.itemData(HEALTH_FIRST - 1, Qt.ItemDataRole.ToolTipRole)
    run(loop, window.operations.wait_idle())
    last = combo.itemData(combo.count() - 1, Qt.ItemDataRole.ToolTipRole)
    assert "Checking…" not in last and str(tmp_path / "gone" / "db-4998") in last

    # Another program registers one more: every list follows.
    with waiting_for(loop, window.registryReloaded):
        write_registry(
            registry_dir, [*entries, cosh_entry("zz-new", tmp_path / "new")], active=[*active, "zz-new"]
        )
    assert bar.names() == [*active, "zz-new", *inactive]
    assert table_names(window.description.active_table)[-1] == "zz-new"
    assert window.health.database_combo.itemText(len(active)) == "zz-new"
    assert json.loads((registry_dir / "rag_active.json").read_text())[-1] == "zz-new"
    run(loop, window.operations.wait_idle())
