"""A knowledge base on S3-compatible storage (the moto server on 127.0.0.1) in the window: listed, browsed,
filtered and searched; when the server stops or hangs mid-session, the next search fails within a bounded
time with a clear message while the window keeps reacting to keys; once it is back, searching works again
without a restart."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QTableView
from pytestqt.qtbot import QtBot

from recall_gui.qt.main_window import MainWindow
from tests.core.test_remote_storage import s3_kb
from tests.kbtools import KnowledgeBase, snapshot_tree
from tests.qt.conftest import WindowFactory, until, waiting_for
from tests.qt.trusttools import StallMeter, banner, column, core_ids
from tests.s3server import SECRET_KEY, S3Location

#: The core's bound on one storage operation, lowered so that a stopped or hanging server costs little.
STORAGE_TIMEOUT_S = 3.0
#: How much later than that bound the window may show the failure (embedding, scheduling, a busy machine).
SLACK_S = 3.0
#: The longest the GUI thread may be kept from running while a search waits for the storage: far below
#: the time the search takes to fail, so the window is not merely frozen until then.
STALL_BOUND_S = 1.0
QUERY = "What is the capital of France?"


def search_with_keys(
    window: MainWindow, loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> tuple[float, float, float | None]:
    """Enter in the query box, and a key typed into it 300 ms later. Returns the seconds until the search's
    outcome was shown, the longest GUI stall meanwhile, and when (seconds after Enter) the typed key
    reached the box, or None if it only did after the search ended."""
    query = window.findChild(QLineEdit, "queryEdit")
    typed: list[float] = []
    finished: list[float] = []

    def type_key() -> None:
        qtbot.keyClick(query, Qt.Key.Key_Exclam)
        typed.append(time.monotonic())

    def search_finished() -> None:
        finished.append(time.monotonic())

    window.knowledge.searchFinished.connect(search_finished)
    try:
        with StallMeter() as meter, waiting_for(loop, window.knowledge.searchFinished):
            started = time.monotonic()
            qtbot.keyClick(query, Qt.Key.Key_Return)
            QTimer.singleShot(300, type_key)
        loop.run_until_complete(until(lambda: bool(typed), "the key is typed"))
    finally:
        window.knowledge.searchFinished.disconnect(search_finished)
    assert query.text() == QUERY + "!"
    qtbot.keyClick(query, Qt.Key.Key_Backspace)
    during = typed[0] - started if typed and typed[0] < finished[0] else None
    return finished[0] - started, meter.longest, during


@dataclass(frozen=True)
class Remote:
    """The 12-passage knowledge base uploaded to a bucket and registered as "remote", credentials in the
    registry entry."""

    registry_dir: Path
    s3: S3Location


@pytest.fixture
def remote(
    make_kb: Callable[..., KnowledgeBase], s3: S3Location, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Remote:
    monkeypatch.setenv("RECALL_GUI_STORAGE_TIMEOUT", str(STORAGE_TIMEOUT_S))
    return Remote(s3_kb(make_kb, s3, tmp_path, with_options=True), s3)


def test_a_kb_on_s3_is_listed_browsed_searched_and_survives_the_server_going_away(
    remote: Remote, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    registry_dir, proxy = remote.registry_dir, remote.s3.proxy
    registry_before = snapshot_tree(registry_dir)
    window = open_window(registry_dir)

    # Listed, healthy, browsed and filtered.
    assert window.findChild(QComboBox, "dbCombo").currentText() == "remote"
    info = window.findChild(QLabel, "dbInfo").text()
    assert info.startswith("12 rows · 384-d vectors · All-MiniLM-L6-v2 (384d)")
    assert window.knowledge.results.caption.text() == "All 12 rows of remote"
    assert column(window.findChild(QTableView, "browseTable"), 1)[10:] == ["git-rebase", "unicode"]
    filter_edit = window.findChild(QLineEdit, "filterEdit")
    qtbot.keyClicks(filter_edit, "moon")
    with waiting_for(loop, window.knowledge.browseReady):
        qtbot.keyClick(filter_edit, Qt.Key.Key_Return)
    assert column(window.findChild(QTableView, "browseTable"), 1) == ["tides"]

    # Searched, with the core's answer.
    query = window.findChild(QLineEdit, "queryEdit")
    qtbot.keyClicks(query, QUERY)
    seconds, stall, _ = search_with_keys(window, loop, qtbot)
    expected = core_ids(loop, registry_dir, "remote", QUERY)
    results = window.knowledge.results.results_table
    assert column(results, 1) == expected and expected[0] == "paris"

    outages: dict[str, tuple[float, float, float | None]] = {}
    for outage, cut in (("stopped", proxy.stop), ("hanging", proxy.hang)):
        cut()
        seconds, stall, during = search_with_keys(window, loop, qtbot)
        outages[outage] = (seconds, stall, during)
        text, hint = banner(window)
        assert text.startswith(("Reading table", "Failed to connect to vector db: ")), text
        assert f"after {STORAGE_TIMEOUT_S:g} s" in text or f"within {STORAGE_TIMEOUT_S:g} s" in text, text
        assert "Check that the server or network is up" in hint, hint
        assert SECRET_KEY not in text + hint
        assert seconds < STORAGE_TIMEOUT_S + SLACK_S, (outage, seconds)
        assert stall < STALL_BOUND_S and stall < seconds / 2, (outage, stall, seconds)
        assert during is not None and during < 1.0, (outage, during)  # the key arrived mid-search
        assert results.model().rowCount() == 0
        assert query.text() == QUERY

        proxy.resume()  # back: the next search works, in the same window
        search_with_keys(window, loop, qtbot)
        assert banner(window) == ("", "")
        assert column(results, 1) == expected
    print(
        "\n"
        + "\n".join(
            f"{outage}: failed after {seconds:.2f} s; longest GUI stall {stall * 1000:.0f} ms; "
            f"a key typed at {during or 0:.2f} s was handled at once"
            for outage, (seconds, stall, during) in outages.items()
        )
    )
    assert snapshot_tree(registry_dir) == registry_before  # credentials are never written back
