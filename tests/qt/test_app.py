"""Start-up, memory between runs, keyboard, the first-start demo and the no-display case."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QProgressDialog,
    QPushButton,
    QSpinBox,
    QSplitter,
)
from pytestqt.qtbot import QtBot

from recall_gui.core.base.paths import app_registry_dir, demo_db_dir
from recall_gui.core.demo import DEMO_MARK_FILE, DEMO_NAME
from recall_gui.core.registry.registry import load_registry
from recall_gui.qt.app import display_problem, run_app
from recall_gui.qt.icons import app_icon
from recall_gui.qt.settings import SETTINGS_FILE
from tests.kbtools import KnowledgeBase, cosh_entry, view_entry, write_registry
from tests.probes import run_probe
from tests.qt.conftest import WindowFactory, run, until, waiting_for

HEAVY = ("lancedb", "pyarrow", "numpy", "fastembed", "onnxruntime", "httpx")


def test_without_a_display_the_app_explains_and_exits_instead_of_aborting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert run_app() == 1
    err = capsys.readouterr().err
    assert "no display" in err and "recall-gui search" in err


@pytest.mark.parametrize(
    ("environ", "platform", "problem"),
    [
        ({}, "linux", True),
        ({"DISPLAY": ":0"}, "linux", False),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", False),
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux", False),
        ({"DISPLAY": ""}, "linux", True),
        ({}, "darwin", False),
        ({}, "win32", False),
    ],
)
def test_display_problem_only_where_qt_would_find_no_screen(
    environ: dict[str, str], platform: str, problem: bool
) -> None:
    assert (display_problem(environ, platform) is not None) is problem


@pytest.mark.process
def test_the_window_paints_without_qt_s_helper_threads() -> None:
    """Qt's raster engine waits for a pool of helper threads on large fills; the app turns the pool off
    (its start-up does, not the import of its package), so a repaint never sleeps until the scheduler
    runs a helper."""

    def threads_after_painting(set_up: bool) -> list[str]:
        script = textwrap.dedent(
            f"""
            import json, os
            from PySide6.QtGui import QStandardItemModel
            from PySide6.QtWidgets import QApplication, QTableView
            app = QApplication([])
            import recall_gui.qt
            if {set_up!r}:
                from recall_gui.qt.app import configure_qt_process
                configure_qt_process()
            table = QTableView()
            table.setModel(QStandardItemModel(200, 3, table))
            table.resize(1280, 800)
            table.show()
            table.grab()
            tasks = os.listdir("/proc/self/task")
            print(json.dumps([open(f"/proc/self/task/{{t}}/comm").read().strip() for t in tasks]))
            """
        )
        environment = {k: v for k, v in os.environ.items() if k != "QT_NO_GUI_THREADPOOL"}
        environment["QT_QPA_PLATFORM"] = "offscreen"
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env=environment,
        )
        names: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
        return names

    assert "Thread (pooled)" in threads_after_painting(set_up=False)  # what Qt does on its own
    assert "Thread (pooled)" not in threads_after_painting(set_up=True)


@pytest.mark.process
def test_the_window_shows_before_any_heavy_library_is_imported(kb: KnowledgeBase, tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        from recall_gui.qt import create_window
        window = create_window({str(kb.registry_dir)!r}, {str(tmp_path / "cfg")!r})
        window.show()
        app.processEvents()
        print([name for name in {HEAVY!r} if name in sys.modules])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.process
def test_searching_imports_nothing_the_libraries_load_did_not(kb: KnowledgeBase) -> None:
    """An import on the GUI thread stalls the window (numpy.ma, imported by PyArrow when LanceDB turns a
    query vector into an array, took 12 ms at the first search); the load behind the window does them."""
    script = textwrap.dedent(
        f"""
        import asyncio, importlib, json, os, sys
        from recall_gui.core.base.warmup import HEAVY_MODULES
        for name in HEAVY_MODULES:
            importlib.import_module(name)
        from recall_gui.core.search.nearest import search_hits
        from recall_gui.core.session.session import Session
        from recall_gui.core.base.types import RecallSearchInput
        before = set(sys.modules)
        vector = [1.0 / 384**0.5] * 384
        asking = RecallSearchInput({str(kb.db_dir)!r}, {kb.name!r}, 384, "q", vector, 3)
        async def search():
            async with Session() as session:
                return await search_hits(session, asking)
        result = asyncio.run(search())
        new = sorted(set(sys.modules) - before)
        print(json.dumps({{"method": result.method, "hits": len(result.hits), "new": new}}))
        """
    )
    # LanceDB's flat search (exact search in memory turned off), then the exact path.
    for cache_mb, method in (("0", "flat"), ("64", "exact")):
        env = {**os.environ, "RECALL_GUI_EXACT_CACHE_MB": cache_mb}
        command = [sys.executable, "-c", script]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        found = json.loads(done.stdout.strip().splitlines()[-1])
        assert found == {"method": method, "hits": 3, "new": []}


def test_the_libraries_start_loading_once_the_window_is_on_screen(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    """Importing them holds Python's lock most of the time: started earlier, they slowed the first paint."""
    window = open_window(kb.registry_dir, start=False)
    window.hide()
    run(loop, until(lambda: not window.is_on_screen(), "the window is hidden"))
    heavy = window.services.heavy
    exposed_when_asked: list[bool] = []
    load = heavy.ready

    async def ready() -> None:
        exposed_when_asked.append(window.is_on_screen())
        await load()

    heavy.ready = ready  # type: ignore[method-assign]
    start = window.begin()
    # The registry is read while start-up waits for the window to be on screen: once it is in, start-up
    # has been waiting, and still nothing may load.
    run(loop, until(lambda: window.registry.get(kb.name) is not None, "the registry is read"))
    assert exposed_when_asked == []  # still hidden: nothing loads yet
    window.show()
    run(loop, start)
    assert exposed_when_asked and all(exposed_when_asked)


@pytest.mark.process
def test_the_libraries_and_the_model_are_kept_out_of_full_garbage_collections(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    """A full collection pass over LanceDB, PyArrow and fastembed took ~90 ms of the GUI thread; once they
    are loaded, they are frozen, so later passes skip them."""
    script = textwrap.dedent(
        f"""
        import asyncio, gc, sys
        import qasync
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        from recall_gui.qt import create_window

        async def main():
            window = create_window({str(kb.registry_dir)!r}, {str(tmp_path / "cfg")!r})
            window.show()
            before = gc.get_freeze_count()
            await window.start()
            await window.operations.wait_idle()
            print(before, gc.get_freeze_count(), flush=True)
            window.close()
            await window.aclose()

        loop.run_until_complete(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    before, after = map(int, done.stdout.strip().splitlines()[-1].split())
    assert before == 0
    assert after > 50_000


def test_the_app_icon_is_packaged_and_scalable(qapp: QApplication) -> None:
    icon = app_icon()
    assert not icon.isNull()
    assert icon.pixmap(256, 256).width() == 256
    assert icon.pixmap(16, 16).width() == 16


def test_window_size_splitter_database_and_limit_are_remembered(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    first = make_kb()
    registry_dir = write_registry(
        tmp_path / "reg",
        [cosh_entry(first.name, first.db_dir), view_entry(first, "second")],
    )
    config = tmp_path / "profile"
    window = open_window(registry_dir, config_dir=config)
    assert window.findChild(QComboBox, "dbCombo").currentText() == first.name
    window.resize(720, 520)
    window.findChild(QSplitter, "mainSplitter").setSizes([300, 700])
    window.findChild(QSpinBox, "limitSpin").setValue(42)
    run(loop, window.knowledge.choose_database("second"))
    sizes = window.findChild(QSplitter, "mainSplitter").sizes()
    window.close()
    assert (config / SETTINGS_FILE).is_file()

    again = open_window(registry_dir, config_dir=config)
    assert again.findChild(QComboBox, "dbCombo").currentText() == "second"
    assert again.findChild(QSpinBox, "limitSpin").value() == 42
    assert (again.width(), again.height()) == (720, 520)
    assert again.findChild(QSplitter, "mainSplitter").sizes() == sizes


def test_keyboard_ctrl_l_focuses_the_query_and_f5_reloads(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    window.pages.setCurrentIndex(1)
    window.menus.focus_query_action.trigger()
    query = window.findChild(QLineEdit, "queryEdit")
    assert window.pages.currentIndex() == 0
    assert QApplication.focusWidget() is query or query.hasFocus() or window.focusWidget() is query
    assert window.menus.focus_query_action.shortcut().toString() == "Ctrl+L"
    assert window.menus.reload_action.shortcut().toString() == "F5"
    assert window.menus.cancel_action.shortcut().toString() == "Esc"
    assert window.knowledge.results.copy_action.shortcut().toString() == "Ctrl+C"
    entry = cosh_entry("new-db", kb.db_dir)
    data = json.loads((kb.registry_dir / "rag_dbs.json").read_text())
    (kb.registry_dir / "rag_dbs.json").write_text(json.dumps({"dbs": [*data["dbs"], entry]}))
    with waiting_for(loop, window.registryReloaded):
        window.menus.reload_action.trigger()
    assert "new-db" in window.knowledge.database_bar.names()
    run(loop, window.operations.wait_idle())


def test_first_start_sets_up_the_prebuilt_demo_at_once_and_opens_it(
    open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(None, start=False)
    assert window.location.is_app_registry
    run(loop, window.begin())
    assert window.findChild(QComboBox, "dbCombo").currentText() == DEMO_NAME
    assert "The demo knowledge base is ready" in window.findChild(QLabel, "bannerText").text()
    assert (demo_db_dir() / DEMO_MARK_FILE).is_file()
    (entry,) = load_registry(app_registry_dir()).databases
    assert (entry.name, entry.active, entry.uri) == (DEMO_NAME, True, str(demo_db_dir()))


def test_the_demo_welcome_goes_once_the_user_opens_a_folder_of_their_own(
    open_window: WindowFactory, loop: asyncio.AbstractEventLoop, langchain_folder: Path
) -> None:
    window = open_window(None, start=False)
    run(loop, window.begin())
    text = window.findChild(QLabel, "bannerText")
    assert window.banner.isVisibleTo(window) and text.text().startswith("The demo knowledge base is ready")
    assert run(loop, window.opened.open_place(str(langchain_folder)))
    assert window.knowledge.current is not None and window.knowledge.current.origin == "opened"
    assert not window.banner.isVisibleTo(window)


def test_a_cancelled_demo_set_up_leaves_nothing_and_says_how_to_get_it(
    open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(None, start=False)
    build = window.start_up.building_demo.start(window.build_demo())
    run(loop, asyncio.sleep(0))  # the set-up has begun: its dialog exists
    dialog = window.findChild(QProgressDialog, "demoDialog")
    assert dialog is not None
    dialog.findChild(QPushButton).click()  # its Cancel button
    assert run(loop, build) is False
    assert window.findChild(QLabel, "bannerText").text() == "The demo knowledge base was not built."
    assert not demo_db_dir().exists()
    assert not (app_registry_dir() / "rag_dbs.json").exists()
    assert window.findChild(QComboBox, "dbCombo").currentText() == "(no databases registered)"


def test_first_start_never_replaces_a_demo_folder_the_user_filled(
    open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    (demo_db_dir() / "mine").mkdir(parents=True)
    (demo_db_dir() / "mine" / "notes.txt").write_text("keep me")
    window = open_window(None, start=False)
    run(loop, window.begin())
    banner = window.findChild(QLabel, "bannerText").text()
    assert "holds files that recall-gui did not put there (mine)" in banner
    assert (demo_db_dir() / "mine" / "notes.txt").read_text() == "keep me"
    assert not (app_registry_dir() / "rag_dbs.json").exists()
    assert window.findChild(QComboBox, "dbCombo").currentText() == "(no databases registered)"


@pytest.mark.process
def test_pyside_s_module_check_from_the_file_s_bytes_answers_as_its_own() -> None:
    """PySide6 asks of every module imported after it whether its source names PySide6 (the window's
    start does it a few hundred times): the faster check gives its own answer for a module that does, one
    that does not, and one without a source file."""
    answers = run_probe(
        textwrap.dedent(
            """
            import json, sys
            import PySide6.QtCore
            from recall_gui.core.base import compat
            feature = sys.modules[compat.PYSIDE_FEATURE]
            original = feature._mod_uses_pyside
            import json as plain, math as compiled, recall_gui.qt.widgets as qt_module
            modules = (plain, compiled, qt_module)
            before = [original(m) for m in modules]
            done = compat.faster_pyside_module_check()
            after = [feature._mod_uses_pyside(m) for m in modules]
            print(json.dumps([done, compat.faster_pyside_module_check(), before, after]))
            """
        )
    )
    done, again, before, after = answers
    assert (done, again) == (True, False)
    assert before == [False, False, True]
    assert after == before
