"""The window's side of "outputs never replace the app's own records or the agents' registry": the
export and the checks saved as refuse every record, each said in the banner and left as it was (the rule
and the command line's side: tests/core/test_outputs_spare_records.py)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from tests.core.test_output_paths import state
from tests.core.test_outputs_spare_records import records
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import run


@pytest.mark.parametrize("browsing", [False, True])
def test_the_windows_export_refuses_every_record_and_leaves_it(
    kb: KnowledgeBase,
    open_window: Any,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    browsing: bool,
) -> None:
    from PySide6.QtWidgets import QLabel

    places = records(tmp_path)
    window = open_window(kb.registry_dir, config_dir=Path(os.environ["RECALL_GUI_CONFIG_DIR"]))
    if browsing:
        run(loop, window.knowledge.browser.browse(window.knowledge.read_inputs()))
    else:
        window.knowledge.query_bar.query_edit.setText("capital of France")
        run(loop, window.knowledge.searching.search(window.knowledge.read_inputs()))
    for name, (out, said) in places.items():
        before = state(out)
        assert run(loop, window.knowledge.exporter.export_to(out, "csv")) == 0, name
        banner = window.banner.findChild(QLabel, "bannerText").text()
        assert banner == f"The export was not written to {out}: {said}", (name, banner)
        assert state(out) == before, name
    written = run(loop, window.knowledge.exporter.export_to(tmp_path / "fine.csv", "csv"))
    assert written > 0  # elsewhere: written


def test_the_checks_page_refuses_to_save_the_checks_over_the_registry(
    kb: KnowledgeBase,
    open_window: Any,
    tmp_path: Path,
) -> None:
    from PySide6.QtWidgets import QLabel

    places = records(tmp_path)
    window = open_window(kb.registry_dir, config_dir=Path(os.environ["RECALL_GUI_CONFIG_DIR"]))
    for name in ("cosh's rag_dbs.json", "the agent log", "settings.json"):
        out, said = places[name]
        before = state(out)
        assert not window.checks.save_as(out), name
        banner = window.banner.findChild(QLabel, "bannerText").text()
        assert banner == f"{out}: not written: {said}", (name, banner)
        assert state(out) == before, name
