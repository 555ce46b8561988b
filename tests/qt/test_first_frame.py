"""The window's first frame: shown before the pages are imported, taking the keys typed meanwhile."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from recall_gui.qt.settings import SETTINGS_FILE
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import run, window_of


def test_what_is_typed_into_the_frame_goes_on_in_the_query_box(
    kb: KnowledgeBase, loop: asyncio.AbstractEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    with window_of(loop, kb.registry_dir, tmp_path / "config", complete=False) as window:
        assert not window.completed and window.findChild(QLineEdit, "queryEdit") is None
        window.focus_query()
        typed = window.findChild(QLineEdit, "startingQueryEdit")
        qtbot.keyClicks(typed, "capital of France")
        typed.setCursorPosition(len("capital"))
        window.complete()
        query = window.findChild(QLineEdit, "queryEdit")
        assert window.completed and query.text() == "capital of France"
        assert query.cursorPosition() == len("capital") and not query.hasSelectedText()
        assert window.focusWidget() is query
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        assert window.findChild(QLineEdit, "startingQueryEdit") is None
        run(loop, window.start())
        assert window.knowledge.query_bar.query_edit.text() == "capital of France"


def test_the_frame_has_the_remembered_size_and_closing_it_changes_no_setting(
    kb: KnowledgeBase, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    with window_of(loop, kb.registry_dir, config) as first:
        first.resize(700, 520)
    remembered = (config / SETTINGS_FILE).read_bytes()
    with window_of(loop, kb.registry_dir, config, complete=False) as frame:
        assert (frame.width(), frame.height()) == (700, 520)
    assert (config / SETTINGS_FILE).read_bytes() == remembered


@pytest.mark.process
def test_the_frame_is_on_screen_before_the_pages_and_libraries_are_imported(kb: KnowledgeBase) -> None:
    """As ``recall-gui`` starts: when the window is completed, its frame is on screen already and
    neither the knowledge page nor a heavy library has been imported."""
    script = textwrap.dedent(
        f"""
        import json, os, sys
        from recall_gui.qt import main_window
        def complete(window):
            names = ("recall_gui.qt.pages.knowledge.page", "lancedb", "numpy", "pyarrow")
            print(json.dumps([window.is_on_screen(), [n for n in names if n in sys.modules]]), flush=True)
            os._exit(0)
        main_window.MainWindow.complete = complete
        from recall_gui.qt.app import run_app
        run_app({str(kb.registry_dir)!r})
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [True, []]
