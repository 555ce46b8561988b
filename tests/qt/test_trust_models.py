"""Model faults in the window: a model that cannot be loaded, a damaged model file, a model of another width
than the table's. Each gives a clear message within seconds, while the window keeps reacting, and every
other database still searches."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLineEdit
from pytestqt.qtbot import QtBot

from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.panels.database_bar import NAME_ROLE
from tests.core.test_local_models import damage, fastembed_cache_with, packaged_model
from tests.kbtools import KnowledgeBase, cosh_entry, view_entry, write_registry
from tests.qt.conftest import WindowFactory, waiting_for
from tests.qt.trusttools import StallMeter, banner, column, core_ids

#: Far below fastembed's ~40 s of download retries, far above a model load (~0.3 s) on a busy machine.
FAIL_FAST_S = 10.0
#: The longest the GUI thread may be kept from running meanwhile (typing stays possible).
STALL_BOUND_S = 1.0

QUERY = "What is the capital of France?"


@dataclass(frozen=True)
class Faults:
    """The knowledge base, registered once as it is and once per model fault (same table each time)."""

    kb: KnowledgeBase
    #: A fastembed cache holding only a damaged BGE-Small-EN-v1.5, in ``repo``.
    cache: Path
    repo: Path


@pytest.fixture
def faults(kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Faults]:
    cache = tmp_path / "fastembed"
    repo = fastembed_cache_with(cache, packaged_model())
    damage(next(repo.glob("snapshots/*/model_optimized.onnx")))
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(cache))

    def on_notes(name: str, model: str) -> dict[str, object]:
        return view_entry(kb, name, model=model)

    write_registry(
        kb.registry_dir,
        [
            cosh_entry(kb.name, kb.db_dir),
            on_notes("absent", "ParaphraseMLMiniLML12V2"),  # 384-d, known to fastembed, not cached here
            on_notes("damaged", "BGESmallENV15"),  # 384-d, its cached model file is damaged
            on_notes("wider", "BGEBaseENV15"),  # 768-d on a 384-d table
            on_notes("unported", "AllMiniLML12V2"),  # 384-d, no Python fastembed build
        ],
    )
    yield Faults(kb, cache, repo)


def choose_with_keyboard(
    window: MainWindow, loop: asyncio.AbstractEventLoop, qtbot: QtBot, name: str
) -> None:
    """Step through the dropdown with the arrow keys until ``name`` is chosen (each step chooses the
    database passed on the way, as it does for a user), then let the window finish."""
    combo = window.findChild(QComboBox, "dbCombo")
    bar = window.knowledge.database_bar
    names = bar.names()
    steps = names.index(name) - names.index(bar.current_name() or names[0])
    combo.setFocus()
    for _ in range(abs(steps)):
        qtbot.keyClick(combo, Qt.Key.Key_Down if steps > 0 else Qt.Key.Key_Up)
    assert bar.current_name() == name
    loop.run_until_complete(window.operations.wait_idle())
    assert window.knowledge.current is not None and window.knowledge.current.name == name


def search_and_time(window: MainWindow, loop: asyncio.AbstractEventLoop, qtbot: QtBot) -> tuple[float, float]:
    """Enter in the query box; (seconds until the outcome is shown, longest GUI stall meanwhile)."""
    query = window.findChild(QLineEdit, "queryEdit")
    with StallMeter() as meter, waiting_for(loop, window.knowledge.searchFinished):
        started = time.monotonic()
        qtbot.keyClick(query, Qt.Key.Key_Return)
    return time.monotonic() - started, meter.longest


@pytest.mark.parametrize(
    "case",
    [
        (
            "absent",
            "Model ParaphraseMLMiniLML12V2 (paraphrase-MiniLM-L12-v2 (384d)) is not on this machine (cosh's "
            "file Xenova/paraphrase-multilingual-MiniLM-L12-v2 onnx/model.onnx was not found in any model "
            "cache)",
            "recall-gui models get ParaphraseMLMiniLML12V2",
        ),
        (
            "damaged",
            "Model BGESmallENV15 (BGE-Small-EN-v1.5 (384d)): no copy on this machine could be used "
            "({repo}/snapshots/",
            "The copy in {repo}/snapshots/",
        ),
        (
            "wider",
            "Vector dimension mismatch: input has 768, but table schema has 384",
            "uses BGE-Base-EN-v1.5 (768d), but its table holds 384-dimensional vectors",
        ),
        (
            "unported",
            "Model AllMiniLML12V2 (All-MiniLM-L12-v2 (384d)) is not on this machine (cosh's file "
            "Xenova/all-MiniLM-L12-v2 onnx/model.onnx was not found in any model cache)",
            "recall-gui models get AllMiniLML12V2",
        ),
    ],
    ids=["absent", "damaged", "wider", "unported"],
)
def test_a_model_fault_is_reported_within_seconds_and_other_databases_still_search(
    case: tuple[str, str, str],
    faults: Faults,
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    name, text, hint = case
    kb, cache, registry_dir = faults.kb, faults.cache, faults.kb.registry_dir
    window = open_window(registry_dir)
    query = window.findChild(QLineEdit, "queryEdit")
    qtbot.keyClicks(query, QUERY)

    choose_with_keyboard(window, loop, qtbot, name)
    seconds, stall = search_and_time(window, loop, qtbot)
    message, what_to_do = banner(window)
    assert message.startswith(text.format(cache=cache, repo=faults.repo)), message
    assert hint.format(cache=cache, repo=faults.repo) in what_to_do, what_to_do
    assert window.banner.message is not None and window.banner.message.level == "error"
    assert seconds < FAIL_FAST_S and stall < STALL_BOUND_S, (seconds, stall)
    assert window.knowledge.results.results_model.rowCount() == 0
    caption = window.knowledge.results.caption.text()  # the failure in its own words: the banner may go
    assert caption == f"The search in {name} failed: {message[:1].lower()}{message[1:]}"
    assert query.text() == QUERY  # nothing typed is lost

    choose_with_keyboard(window, loop, qtbot, kb.name)  # the window carries on: the good database works
    assert banner(window) == ("", "")
    assert column(window.knowledge.results.results_table, 1) == core_ids(loop, registry_dir, kb.name, QUERY)
    search_and_time(window, loop, qtbot)
    assert column(window.knowledge.results.results_table, 1)[0] == "paris"
    assert window.knowledge.status_model.text() == "Model: exact"


def test_the_dropdown_names_what_it_knows_is_wrong_before_any_search(
    faults: Faults, open_window: WindowFactory
) -> None:
    window = open_window(faults.kb.registry_dir)
    combo = window.findChild(QComboBox, "dbCombo")
    texts = [combo.itemText(i) for i in range(combo.count()) if combo.itemText(i)]
    assert texts == [
        faults.kb.name,
        "absent — model unavailable",  # neither cached nor downloadable: known without loading it
        "damaged",  # only loading it can tell
        "wider — dimension mismatch",
        "unported — model unavailable",
    ]


def test_choosing_a_database_whose_model_fails_to_load_says_so_at_once_and_still_browses(
    faults: Faults, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    """The window loads a database's model as soon as it is chosen; a model that fails is reported then,
    without waiting for a search, and marked in the dropdown. Browsing needs no model and works."""
    window = open_window(faults.kb.registry_dir)
    with StallMeter() as meter:
        started = time.monotonic()
        choose_with_keyboard(window, loop, qtbot, "damaged")
    assert time.monotonic() - started < FAIL_FAST_S and meter.longest < STALL_BOUND_S
    message, what_to_do = banner(window)
    expected = (
        "damaged: model BGESmallENV15 (BGE-Small-EN-v1.5 (384d)): no copy on this machine could be used"
    )
    assert message.startswith(f"{expected} ({faults.repo}/snapshots/")
    assert f"The copy in {faults.repo}/snapshots/" in what_to_do and "delete" not in what_to_do
    assert window.banner.message is not None and window.banner.message.level == "warning"
    combo = window.findChild(QComboBox, "dbCombo")
    assert combo.currentText() == "damaged — model unavailable"
    assert window.knowledge.results.caption.text() == "All 12 rows of damaged"

    choose_with_keyboard(window, loop, qtbot, faults.kb.name)
    assert banner(window) == ("", "")
    assert combo.itemText(combo.findData("damaged", NAME_ROLE)) == "damaged — model unavailable"
