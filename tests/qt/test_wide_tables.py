"""A table of many columns: the entry's other columns and the Columns tab are views that ask for the rows
on screen, not an item per column made up front (a table of 10,000 columns held the window 23-36 s per
entry shown)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from recall_gui.qt.panels import detail_panel
from recall_gui.qt.scope.inputs import Inputs
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import WindowFactory, run

EXTRA_COLUMNS = 997


@pytest.mark.slow
def test_an_entry_of_a_table_of_a_thousand_columns_makes_cells_for_the_rows_on_screen_only(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = 12
    extra = {f"col_{c:04d}": [c * 100 + r for r in range(rows)] for c in range(EXTRA_COLUMNS)}
    kb = make_kb(extra=extra)
    window = open_window(kb.registry_dir)
    page = window.knowledge
    run(loop, page.searching.search(Inputs("capital of France", 5)))
    run(loop, window.operations.wait_idle())

    made: list[Any] = []
    cell = detail_panel._cell

    def counted(name: str, value: Any, column: int) -> str:
        made.append(name)
        return cell(name, value, column)

    monkeypatch.setattr(detail_panel, "_cell", counted)
    results = page.results.results_table
    results.selectRow(1)
    QApplication.processEvents()
    hit = page.results.selected_items()[0]
    row = kb.ids.index(hit.id)
    model = page.detail.metadata_model
    assert model.rowCount() == EXTRA_COLUMNS
    assert len(made) < EXTRA_COLUMNS  # not one cell per column: the rows sized and shown only
    assert (model.text(0, 0), model.text(0, 1)) == ("col_0000", str(row))
    last = EXTRA_COLUMNS - 1
    assert (model.text(last, 0), model.text(last, 1)) == (f"col_{last:04d}", str(last * 100 + row))
    names = page.schema_panel.names()
    assert names[:3] == ["id", "content", "vector"] and len(names) == 3 + EXTRA_COLUMNS
