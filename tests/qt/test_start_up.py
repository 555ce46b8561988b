"""The window's start-up runs in its order (``qt/window/start_up.py``): the registry read is on a worker
before the libraries begin loading, and the databases are checked and one is opened only once both are
in, whichever finishes last."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

import recall_gui.core.search
from recall_gui.core.registry import DatabaseEntry, Registry
from recall_gui.core.search import DatabaseHealth
from recall_gui.core.session import Session
from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.window import registry_reading
from tests.kbtools import KnowledgeBase
from tests.probes import run_probe
from tests.qt.conftest import WindowFactory, run

#: How long a held step waits for its release at most (a failed test must not hang).
HOLD_S = 30.0


class Steps:
    """What the start-up did, in order, with the registry's read or the libraries' load (``last``) held
    until the other one is in."""

    def __init__(self, window: MainWindow, monkeypatch: pytest.MonkeyPatch, last: str) -> None:
        self.done: list[str] = []
        self._lock = threading.Lock()
        #: Set to let the registry's read (on its worker) finish.
        self.registry_may_end = threading.Event()
        if last != "registry":
            self.registry_may_end.set()
        #: Set once the registry is shown: then the libraries may finish.
        registry_shown = asyncio.Event()
        window.registryReloaded.connect(registry_shown.set)
        #: Whether the registry read was on its worker when the libraries began loading.
        self.reading_when_libraries_began: bool | None = None
        read, begin, load = (
            registry_reading.read_snapshot,
            window.services.heavy.start,
            window.services.heavy.ready,
        )
        check = recall_gui.core.search.check_health

        def read_snapshot(directory: Path, previous: Registry | None = None) -> tuple[Registry, str]:
            self.registry_may_end.wait(HOLD_S)
            snapshot = read(directory, previous)
            self.note("registry read")
            return snapshot

        def start() -> None:
            if self.reading_when_libraries_began is None:
                self.reading_when_libraries_began = window.reading.reads_under_way > 0
            begin()

        self.ready_once = False

        async def ready() -> None:
            first, self.ready_once = not self.ready_once, True
            start()
            await load()
            if not first:
                return
            if last == "libraries":
                await asyncio.wait_for(registry_shown.wait(), HOLD_S)
            self.note("libraries loaded")
            self.registry_may_end.set()

        async def check_health(session: Session, entry: DatabaseEntry) -> DatabaseHealth:
            self.note("health checked")
            return await check(session, entry)

        monkeypatch.setattr(registry_reading, "read_snapshot", read_snapshot)
        monkeypatch.setattr(window.services.heavy, "start", start)
        monkeypatch.setattr(window.services.heavy, "ready", ready)
        monkeypatch.setattr(recall_gui.core.search, "check_health", check_health)

    def note(self, step: str) -> None:
        with self._lock:  # the registry's step is noted on its worker
            self.done.append(step)

    def first(self) -> list[str]:
        """The steps up to the first health check."""
        return self.done[: self.done.index("health checked") + 1]


@pytest.mark.parametrize(
    ("last", "order"),
    [
        ("registry", ["libraries loaded", "registry read", "health checked"]),
        ("libraries", ["registry read", "libraries loaded", "health checked"]),
    ],
)
@pytest.mark.outlives("the stubbed start-up keeps the window alive after it closes; not yet found how")
def test_the_databases_are_checked_and_one_opened_once_the_registry_and_the_libraries_are_both_in(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    last: str,
    order: list[str],
) -> None:
    window = open_window(kb.registry_dir, start=False)
    steps = Steps(window, monkeypatch, last)
    run(loop, window.start())
    assert steps.reading_when_libraries_began is True  # the read was handed to its worker first
    assert steps.first() == order
    assert window.knowledge.current is not None and window.knowledge.current.name == kb.name


#: The pages after the knowledge page, by object name, and the module each is built from.
LATER_PAGES = {
    "descriptionPage": "recall_gui.qt.pages.description.page",
    "agentPage": "recall_gui.qt.pages.agent.page",
    "logPage": "recall_gui.qt.pages.log.page",
    "checksPage": "recall_gui.qt.pages.checks.page",
    "duplicatesPage": "recall_gui.qt.pages.duplicates.page",
    "historyPage": "recall_gui.qt.pages.history.page",
    "mapPage": "recall_gui.qt.pages.map.page",
    "healthPage": "recall_gui.qt.pages.health.page",
    "reachPage": "recall_gui.qt.pages.reach.page",
    "reviewPage": "recall_gui.qt.pages.review.page",
}


@pytest.mark.process
def test_before_the_first_paint_only_the_knowledge_page_is_imported_and_built(kb: KnowledgeBase) -> None:
    """The window as ``recall-gui`` shows it: the knowledge page, the frame and the tabs' titles; no other
    page's module imported, none of them built."""
    code = (
        "import json, os, sys\n"
        "os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "from recall_gui.qt import create_window\n"
        "window = create_window(sys.argv[1], sys.argv[2])\n"
        "window.show()\n"
        "titles = [window.pages.tabText(i) for i in range(window.pages.count())]\n"
        f"imported = sorted(set({list(LATER_PAGES.values())!r}) & set(sys.modules))\n"
        "print(json.dumps([titles, window.pages.pending(), imported, window.knowledge.isVisible()]))"
    )
    titles, pending, imported, knowledge_shown = run_probe(code, str(kb.registry_dir), str(kb.db_dir / "cfg"))
    assert titles[:2] == ["Knowledge base", "Agent's tool description"] and len(titles) == 1 + len(
        LATER_PAGES
    )
    assert pending == list(LATER_PAGES)
    assert imported == []
    assert knowledge_shown


def test_a_page_is_built_when_its_tab_is_first_shown_and_the_start_up_builds_the_rest(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir, start=False)
    assert window.pages.built("checksPage") is None
    window.pages.setCurrentIndex(window.pages.index_named("checksPage"))
    checks = window.pages.built("checksPage")
    assert checks is not None and checks is window.checks and checks.isVisible()
    assert window.pages.built("reachPage") is None
    run(loop, window.start())
    assert window.pages.pending() == []
    # Built late, a page follows the registry as one built at once: the Duplicates page lists the database.
    combo = window.duplicates.database_combo
    assert kb.name in [combo.itemText(i) for i in range(combo.count())]
