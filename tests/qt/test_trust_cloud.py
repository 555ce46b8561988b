"""The window searching a database embedded by a cloud provider (a local stand-in on 127.0.0.1): a key
that cannot be sent is named without showing it, and a provider trickling its answer is cut off at the
bound on the whole request, while the window keeps serving its events."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.scope.inputs import Inputs
from tests.kbtools import KnowledgeBase, write_registry
from tests.providers import SECRET_KEY, FakeProvider
from tests.qt.conftest import WindowFactory, run
from tests.qt.test_trust_registry import banner


@pytest.fixture
def provider(fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    for name, value in fake_provider.environment("openai").items():
        monkeypatch.setenv(name, value)
    return fake_provider


@pytest.fixture
def window(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> MainWindow:
    """A window showing a database whose queries an OpenAI-compatible provider embeds."""
    kb = make_kb()
    entry = {
        "name": "cloud",
        "uri": str(kb.db_dir),
        "table": kb.name,
        "description": "notes through a provider",
        "embedder": {"Cloud": {"provider": "openai", "model": "text-embedding-local"}},
    }
    opened = open_window(write_registry(tmp_path / "registry", [entry]))
    run(loop, opened.knowledge.choose_database("cloud"))
    return opened


def test_a_key_with_a_line_break_is_named_in_the_window_without_showing_it(
    window: MainWindow,
    provider: FakeProvider,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY[:20] + "\n" + SECRET_KEY[20:])
    run(loop, window.knowledge.searching.search(Inputs("capital of France", 3)))
    text, hint = banner(window)
    assert "the API key in OPENAI_API_KEY holds a line break" in text
    for part in (SECRET_KEY[:20], SECRET_KEY[20:]):
        assert part not in text + hint
    assert provider.requests == []
    run(loop, window.operations.wait_idle())


def test_a_provider_trickling_its_answer_is_cut_off_at_the_bound(
    window: MainWindow,
    provider: FakeProvider,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECALL_GUI_HTTP_TIMEOUT", "1")
    provider.fault = "trickle"
    provider.trickle_s = 0.1  # each read is quick; the whole answer would take minutes
    ticks = [0]
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.__setitem__(0, ticks[0] + 1))
    timer.start()
    started = time.monotonic()
    run(loop, window.knowledge.searching.search(Inputs("capital of France", 3)), timeout=15)
    elapsed = time.monotonic() - started
    timer.stop()
    assert "no answer from 127.0.0.1 within 1 s" in banner(window)[0]
    assert elapsed < 10
    assert ticks[0] >= 20  # the window served its events while it waited
    run(loop, window.operations.wait_idle())
