"""Bad queries and limits in the window, typed and pasted as a user would: each has one defined behaviour
(README, "What recall-gui guarantees") and none crashes.

- An empty or blank query browses every row (the window's meaning of "no question"); the agent's tool
  embeds a blank query as it is, and ``recall-gui search`` shows that.
- Any other text is searched exactly as the box holds it: the rows are the core's for that very text.
  The box holds up to 102,400 characters and says so when a paste was longer; the caption quotes at most
  80 characters on one line, control characters shown as symbols, direction overrides kept inside quotes.
- The limit spinner holds only 1 to 1000: keys that would leave that range are refused, an empty or 0
  entry falls back to the previous value, and the search always uses the value the spinner shows.
"""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QSpinBox, QTableView
from pytestqt.qtbot import QtBot

from recall_gui.core.base.types import MAX_QUERY_CHARS
from recall_gui.qt.main_window import MainWindow
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import WindowFactory
from tests.qt.trusttools import banner, column, core_ids, paste, type_text


def press_enter(window: MainWindow, loop: asyncio.AbstractEventLoop, qtbot: QtBot, widget: object) -> None:
    """Enter in ``widget``; returns once the search (or the browse it turned into) is shown."""
    knowledge = window.knowledge
    event = asyncio.Event()

    def done() -> None:
        event.set()

    knowledge.searchFinished.connect(done)
    knowledge.browseReady.connect(done)
    try:
        qtbot.keyClick(widget, Qt.Key.Key_Return)  # type: ignore[arg-type]
        loop.run_until_complete(asyncio.wait_for(event.wait(), 60))
    finally:
        knowledge.searchFinished.disconnect(done)
        knowledge.browseReady.disconnect(done)


@pytest.mark.parametrize("blank", ["", "   ", "\t \u3000\u00a0"])
def test_an_empty_or_blank_query_browses_every_row(
    blank: str, kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    query = window.findChild(QLineEdit, "queryEdit")
    paste(qtbot, query, "capital of France")
    press_enter(window, loop, qtbot, query)
    assert window.knowledge.results.mode == "results"

    paste(qtbot, query, blank)
    press_enter(window, loop, qtbot, query)
    assert query.text() == blank
    assert window.knowledge.results.mode == "browse"
    assert column(window.findChild(QTableView, "browseTable"), 1) == list(kb.ids)
    assert window.knowledge.results.caption.text() == f"All 12 rows of {kb.name}"
    assert banner(window) == ("", "")


def test_a_100_kb_paste_is_kept_whole_and_searched_as_the_core_searches_it(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    width = window.width()
    text = ("Which city is the capital of France? " + "It lies on a river. " * 5000)[:100_000]
    query = window.findChild(QLineEdit, "queryEdit")
    paste(qtbot, query, text)
    assert query.text() == text  # Qt's default box would have cut it at 32,767 characters
    press_enter(window, loop, qtbot, query)

    assert column(window.knowledge.results.results_table, 1) == core_ids(loop, kb.registry_dir, kb.name, text)
    assert column(window.knowledge.results.results_table, 1)[0] == "paris"
    caption = window.knowledge.results.caption
    assert caption.text() == f"5 results for “{text[:79]}…” in {kb.name}"
    assert caption.sizeHint().width() < width and window.width() == width
    assert banner(window) == ("", "")
    assert query.text() == text


def test_a_paste_longer_than_the_box_holds_is_cut_and_the_window_says_so(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    text = "Ocean tides and the Moon. " + "x" * MAX_QUERY_CHARS
    query = window.findChild(QLineEdit, "queryEdit")
    paste(qtbot, query, text)
    assert query.text() == text[:MAX_QUERY_CHARS]
    press_enter(window, loop, qtbot, query)
    assert column(window.knowledge.results.results_table, 1)[0] == "tides"
    message, hint = banner(window)
    assert message.startswith("The query box holds at most 102,400 characters: a longer paste is cut")
    assert "the results are the same as for the whole text" in hint
    assert window.banner.message is not None and window.banner.message.level == "info"


@pytest.mark.parametrize(
    "case",
    [
        ("capital\x00 of\x07 France\x1b[31m\r\n\tplease\x7f", "capital␀ of␇ France␛[31m please␡"),
        ("ما هي عاصمة فرنسا؟", "ما هي عاصمة فرنسا؟"),
        ("\u202eOcean tides and the Moon", "\u2068\u202eOcean tides and the Moon\u2069"),
        ("emoji like 🚀 and 👩\u200d💻 in Unicode", "emoji like 🚀 and 👩\u200d💻 in Unicode"),
        ("\u200b\u200f", "\u200b\u200f"),  # invisible, but not whitespace: searched, not browsed
    ],
    ids=["control characters", "right-to-left", "direction override", "emoji", "invisible"],
)
def test_odd_text_is_searched_exactly_as_pasted_and_quoted_safely(
    case: tuple[str, str],
    kb: KnowledgeBase,
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    pasted, caption_quote = case
    window = open_window(kb.registry_dir)
    query = window.findChild(QLineEdit, "queryEdit")
    paste(qtbot, query, pasted)
    assert query.text() == pasted
    press_enter(window, loop, qtbot, query)
    assert window.knowledge.results.mode == "results"
    table = window.knowledge.results.results_table
    assert column(table, 1) == core_ids(loop, kb.registry_dir, kb.name, pasted)
    assert window.knowledge.results.results_model.result.query == pasted  # type: ignore[union-attr]
    assert window.knowledge.results.caption.text() == f"5 results for “{caption_quote}” in {kb.name}"
    assert banner(window) == ("", "")


def test_right_to_left_text_typed_key_by_key_is_searched(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    query = window.findChild(QLineEdit, "queryEdit")
    query.setFocus()
    type_text(query, "عاصمة فرنسا Paris")
    assert query.text() == "عاصمة فرنسا Paris"
    press_enter(window, loop, qtbot, query)
    table = window.knowledge.results.results_table
    assert column(table, 1) == core_ids(loop, kb.registry_dir, kb.name, "عاصمة فرنسا Paris")


def test_a_lone_surrogate_never_reaches_the_search(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    """Text that is not Unicode cannot be in the box (Qt drops a lone surrogate), so the window never
    needs the core's refusal of it."""
    window = open_window(kb.registry_dir)
    query = window.findChild(QLineEdit, "queryEdit")
    query.setText("capital of \ud800France")
    assert query.text() == "capital of France"
    press_enter(window, loop, qtbot, query)
    assert column(window.knowledge.results.results_table, 1)[0] == "paris"


def test_the_limit_spinner_holds_only_1_to_1000_and_the_search_uses_what_it_shows(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    query = window.findChild(QLineEdit, "queryEdit")
    spin = window.findChild(QSpinBox, "limitSpin")
    assert (spin.minimum(), spin.maximum(), spin.value()) == (1, 1000, 5)
    qtbot.keyClicks(query, "capital of France")
    rows = window.knowledge.results.results_model.rowCount

    def enter_in_spin(keys: str | None = None, key: Qt.Key | None = None) -> tuple[str, int]:
        spin.setFocus()
        spin.selectAll()
        if keys is not None:
            if keys:
                qtbot.keyClicks(spin, keys)
            else:
                qtbot.keyClick(spin, Qt.Key.Key_Delete)
        if key is not None:
            qtbot.keyClick(spin, key)
        press_enter(window, loop, qtbot, spin)
        assert rows() == min(spin.value(), len(kb.ids))  # the search used the value shown
        assert window.knowledge.status_count.text().startswith(f"{rows()} result")
        return spin.text(), spin.value()

    def refused_in_spin(keys: str) -> str:
        """Enter with ``keys`` in the box: no search runs (the box does not show a limit it holds); the
        refusal is said in the banner, and leaving the box puts back the value the results were for."""
        window.banner.dismiss()
        shown = window.knowledge.results.caption.text()
        spin.setFocus()
        spin.selectAll()
        qtbot.keyClicks(spin, keys) if keys else qtbot.keyClick(spin, Qt.Key.Key_Delete)
        qtbot.keyClick(spin, Qt.Key.Key_Return)
        loop.run_until_complete(window.operations.wait_idle())
        assert window.knowledge.results.caption.text() == shown
        query.setFocus()
        return banner(window)[0]

    def refused_as_typed(keys: str) -> tuple[str, str, int]:
        """Type ``keys`` (a key the box cannot take is refused and the banner says so at once), then
        Enter: the search uses what the box shows."""
        window.banner.dismiss()
        spin.setFocus()
        spin.selectAll()
        qtbot.keyClicks(spin, keys)
        said = banner(window)[0]
        assert said.startswith("The limit holds 1 to 1,000: ")  # said, not silently dropped
        press_enter(window, loop, qtbot, spin)
        assert rows() == min(spin.value(), len(kb.ids))
        return said, spin.text(), spin.value()

    assert enter_in_spin("3") == ("3", 3)
    assert refused_in_spin("0") == "The limit holds 1 to 1,000: “0” is not one of them; it stays 3."
    assert spin.text() == "3"
    assert refused_in_spin("") == "The limit holds 1 to 1,000: the box is empty; it stays 3."
    # a minus sign is refused as it is typed, so are the point and the letter, and the digit past 1000
    assert refused_as_typed("-2")[1:] == ("2", 2)
    assert refused_as_typed("7.5e3")[1:] == ("753", 753)
    assert refused_as_typed("2000") == (
        "The limit holds 1 to 1,000: 2,000 is more; it stays 200.",
        "200",
        200,
    )
    assert enter_in_spin("1000", Qt.Key.Key_Up) == ("1000", 1000)  # stepping stops at the bounds
    assert enter_in_spin("1", Qt.Key.Key_Down) == ("1", 1)
    assert enter_in_spin("1", Qt.Key.Key_PageDown) == ("1", 1)
    assert column(window.knowledge.results.results_table, 1) == ["paris"]
