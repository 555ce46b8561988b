"""Concurrency in the window, driven with real key events: rapid typing, repeated Enter, switching databases
and Esc while searches run. Whatever the timing, the table only ever shows one request's complete answer
(the core's rows for that database and query), never an older request after a newer one, never a
cancelled one, and at the end the latest request's answer."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLineEdit
from pytestqt.qtbot import QtBot

from recall_gui.qt.main_window import MainWindow
from tests.kbtools import PASSAGES, KnowledgeBase, cosh_entry, write_lance_table, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for
from tests.qt.trusttools import column, core_ids

#: Ids in the second database carry this prefix, so a row from the wrong database is told apart.
SECOND = "b:"
WORDS = ("capital", "France", "password", "reset", "coffee", "tides", "Moon", "generators", "git", "🚀")
Request = tuple[str, str]  # (database, query)


@pytest.fixture
def two_databases(
    make_kb: Callable[..., KnowledgeBase], passage_vectors: Any, tmp_path: Path
) -> tuple[Path, dict[str, KnowledgeBase]]:
    """ "first" (the 12 passages) and "second" (the same passages under other ids, in another folder)."""
    first = make_kb("first")
    second_dir = tmp_path / "second-db"
    write_lance_table(
        second_dir, "second", [SECOND + i for i in PASSAGES], list(PASSAGES.values()), passage_vectors
    )
    registry_dir = write_registry(
        tmp_path / "registry", [cosh_entry("first", first.db_dir), cosh_entry("second", second_dir)]
    )
    return registry_dir, {"first": first}


@dataclass
class Watch:
    """Every answer the results table showed, with how many requests had been made (and how many running
    ones cancelled with Esc) by then."""

    requests: list[Request] = field(default_factory=list)
    #: For each Esc pressed while something was running: how many requests had been made by then.
    cancels: list[int] = field(default_factory=list)
    shown: list[tuple[int, int, str, str, tuple[str, ...]]] = field(default_factory=list)

    def attach(self, window: MainWindow) -> None:
        model = window.knowledge.results.results_model

        def reset() -> None:
            result = model.result
            if result is None:
                return
            ids = tuple(hit.id for hit in result.hits)
            in_second = [i.startswith(SECOND) for i in ids]
            assert all(in_second) or not any(in_second), f"rows of two databases at once: {ids}"
            database = "second" if in_second and in_second[0] else "first"
            self.shown.append((len(self.requests), len(self.cancels), database, result.query, ids))

        model.modelReset.connect(reset)

    def check(self, loop: asyncio.AbstractEventLoop, registry_dir: Path) -> None:
        answers: dict[Request, list[str]] = {}
        latest = -1
        for made, cancelled, database, query, ids in self.shown:
            key = (database, query)
            if key not in answers:
                answers[key] = core_ids(loop, registry_dir, database, query)
            assert list(ids) == answers[key], f"not the core's answer for {key}"
            # The request this answer belongs to: the latest one for it made before it was shown.
            index = max((n for n in range(made) if self.requests[n] == key), default=None)
            assert index is not None, f"{key} was shown but never asked for"
            assert index >= latest, f"{key} (request {index}) was shown after request {latest}"
            latest = index
            # Esc cancels every request made before it: none of them may show up after it.
            assert all(index >= cancel for cancel in self.cancels[:cancelled]), f"{key} was cancelled"
        assert self.shown and latest == len(self.requests) - 1, "the latest request is not what is shown"


def act(
    window: MainWindow, qtbot: QtBot, loop: asyncio.AbstractEventLoop, watch: Watch, rng: random.Random
) -> None:
    """One thing a hurried user does."""
    query = window.findChild(QLineEdit, "queryEdit")
    combo = window.findChild(QComboBox, "dbCombo")
    bar = window.knowledge.database_bar
    action = rng.choice(("type", "type", "replace", "enter", "enter", "enters", "switch", "escape"))
    if action == "type":
        qtbot.keyClicks(query, " " + rng.choice(WORDS[:-1]))
    elif action == "replace":
        query.selectAll()
        qtbot.keyClicks(query, rng.choice(WORDS[:-1]))
    elif action in ("enter", "enters"):
        for _ in range(1 if action == "enter" else rng.randint(2, 4)):
            watch.requests.append((bar.current_name() or "", query.text()))
            qtbot.keyClick(query, Qt.Key.Key_Return)
    elif action == "switch":
        before = bar.current_name()
        combo.setFocus()
        qtbot.keyClick(combo, Qt.Key.Key_Down if before == "first" else Qt.Key.Key_Up)
        if bar.current_name() != before:
            watch.requests.append((bar.current_name() or "", query.text()))
        query.setFocus()
    else:
        knowledge = window.knowledge
        running = knowledge.query_bar.cancel_button.isEnabled() or any(
            window.operations.running(key) for key in ("search", "choose")
        )
        qtbot.keyClick(query, Qt.Key.Key_Escape)
        if running:
            watch.cancels.append(len(watch.requests))
    pause = rng.choice((0.0, 0.0, 0.0, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1))
    run(loop, asyncio.sleep(pause))  # fixed on purpose: a human's uneven pace between keys (seeded)


@pytest.mark.parametrize("seed", [3, 8, 16])  # 8 and 16 reach a search entered right after a switch
@pytest.mark.slow
def test_hurried_typing_enter_switching_and_escape_always_end_with_the_latest_answer(
    seed: int,
    two_databases: tuple[Path, dict[str, KnowledgeBase]],
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    registry_dir, _ = two_databases
    window = open_window(registry_dir)
    query = window.findChild(QLineEdit, "queryEdit")
    watch = Watch()
    watch.attach(window)
    rng = random.Random(seed)
    qtbot.keyClicks(query, "capital of France")
    query.setFocus()
    for _ in range(80):
        act(window, qtbot, loop, watch, rng)
    watch.requests.append((window.knowledge.database_bar.current_name() or "", query.text()))
    qtbot.keyClick(query, Qt.Key.Key_Return)  # a last request, then let everything finish
    run(loop, window.operations.wait_idle())

    watch.check(loop, registry_dir)
    database, text = watch.requests[-1]
    table = window.knowledge.results.results_table
    assert column(table, 1) == core_ids(loop, registry_dir, database, text)
    assert window.knowledge.results.caption.text() == f"5 results for “{text}” in {database}"
    assert window.knowledge.status_count.text() == "5 results"
    assert window.findChild(QLineEdit, "detailId").text() == column(table, 1)[0]
    assert window.knowledge.current is not None and window.knowledge.current.name == database
    assert not window.knowledge.query_bar.cancel_button.isEnabled()
    assert len(watch.requests) > 20 and len(watch.shown) > 5, (len(watch.requests), len(watch.shown))


class HeldHealthCheck:
    """The real health check, held for one database until released (a slow disk or a remote store)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        import recall_gui.core.search as search_face
        from recall_gui.core.search import health

        self.reached = asyncio.Event()
        self.release = asyncio.Event()
        original = health.check_health

        async def check_health(session: Any, entry: Any) -> Any:
            outcome = await original(session, entry)
            if entry.name == name:
                self.reached.set()
                await self.release.wait()
            return outcome

        monkeypatch.setattr(health, "check_health", check_health)
        # The window reads it through the search face, which keeps the name once it was first asked for.
        monkeypatch.setattr(search_face, "check_health", check_health)


def switch_and_search(window: MainWindow, qtbot: QtBot, text: str) -> None:
    """Down in the dropdown (to "second"), then a new query and Enter, as fast as keys go."""
    combo = window.findChild(QComboBox, "dbCombo")
    query = window.findChild(QLineEdit, "queryEdit")
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down)
    query.setFocus()
    query.selectAll()
    qtbot.keyClicks(query, text)
    qtbot.keyClick(query, Qt.Key.Key_Return)


def test_a_search_entered_right_after_switching_databases_is_the_one_shown(
    two_databases: tuple[Path, dict[str, KnowledgeBase]],
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    """Keys queue up while the window is busy: the switch and the new search are both in the queue before
    the switch has begun. The search typed after the switch must win over the switch's own search."""
    registry_dir, _ = two_databases
    window = open_window(registry_dir)
    qtbot.keyClicks(window.findChild(QLineEdit, "queryEdit"), "capital of France")
    switch_and_search(window, qtbot, "ocean tides")
    run(loop, window.operations.wait_idle())
    assert column(window.knowledge.results.results_table, 1) == core_ids(
        loop, registry_dir, "second", "ocean tides"
    )
    assert window.knowledge.results.caption.text() == "5 results for “ocean tides” in second"


def test_a_search_entered_while_the_switch_checks_the_database_is_the_one_shown(
    two_databases: tuple[Path, dict[str, KnowledgeBase]],
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Choosing a database checks it first (slow on a remote store); a search entered meanwhile is newer
    than the switch, and the switch must not search over it with the query it started with."""
    registry_dir, _ = two_databases
    window = open_window(registry_dir)
    query = window.findChild(QLineEdit, "queryEdit")
    qtbot.keyClicks(query, "capital of France")
    held = HeldHealthCheck(monkeypatch, "second")
    combo = window.findChild(QComboBox, "dbCombo")
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down)
    run(loop, held.reached.wait())
    query.setFocus()
    query.selectAll()
    qtbot.keyClicks(query, "ocean tides")
    with waiting_for(loop, window.knowledge.searchFinished):  # the newer search ends before the switch
        qtbot.keyClick(query, Qt.Key.Key_Return)
    held.release.set()
    run(loop, window.operations.wait_idle())
    assert column(window.knowledge.results.results_table, 1) == core_ids(
        loop, registry_dir, "second", "ocean tides"
    )
    assert window.knowledge.results.caption.text() == "5 results for “ocean tides” in second"


@pytest.mark.process
def test_switching_database_never_keeps_applying_the_previous_filter(
    two_databases: tuple[Path, dict[str, KnowledgeBase]],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
) -> None:
    registry_dir, _ = two_databases
    window = open_window(registry_dir)
    knowledge = window.knowledge
    where = window.findChild(QLineEdit, "whereEdit")
    where.setText("id LIKE 'pw%'")
    run(loop, knowledge.browser.browse(knowledge.read_inputs()))
    assert knowledge.browse_model.total == 2  # pw-reset and pw-rules
    # The user chose the other database with the old filter still typed: the box empties, and so does the
    # filter the rows are read with.
    inputs = knowledge.read_inputs()
    assert inputs.where == "id LIKE 'pw%'"
    run(loop, knowledge.choose_database("second", inputs))
    assert where.text() == ""
    assert knowledge.browse_model.total == len(PASSAGES)  # every row of "second": no filter applied
    assert "where" not in knowledge.results.caption.text()
