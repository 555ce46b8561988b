"""Loads run with the garbage collector paused; what an import made is frozen after it, and nothing else
(a frozen object in a reference cycle is never freed)."""

from __future__ import annotations

import gc
import sys
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.base.collector import collection_paused


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()
    else:
        gc.disable()


def _passes_while(make: Any, passes: list[int] | None = None) -> list[int]:
    """The generations of the collector's passes while ``make()`` runs (into ``passes`` as they start)."""
    passes = [] if passes is None else passes

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    gc.callbacks.append(note)
    try:
        make()
    finally:
        gc.callbacks.remove(note)
    return passes


def _long_lived_objects() -> list[list[int]]:
    return [[n] for n in range(200_000)]  # like a library's import: many containers that all live on


def test_a_load_runs_no_collection_pass() -> None:
    gc.enable()
    assert _passes_while(_long_lived_objects)  # the control: the collector would have run
    kept: list[Any] = []
    during: list[int] = []

    def load() -> None:
        with collection_paused():
            assert not gc.isenabled()
            kept.append(_long_lived_objects())
            during.extend(passes)

    passes: list[int] = []
    _passes_while(load, passes)
    assert during == []
    assert gc.isenabled()


def test_what_an_import_made_is_frozen_after_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "library_state.py").write_text("STATE = [[n] for n in range(200_000)]\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    gc.enable()
    frozen_before = gc.get_freeze_count()
    with collection_paused():
        import library_state  # noqa: F401 (what a library's import makes)
    monkeypatch.delitem(sys.modules, "library_state")
    assert gc.get_freeze_count() >= frozen_before + 200_000


class Table:
    """Something a session opens and drops: in a reference cycle, as open tables' objects are."""

    def __init__(self) -> None:
        self.me = self


def test_a_load_that_imports_nothing_freezes_nothing_and_a_cycle_alive_during_it_is_freed_later() -> None:
    gc.enable()
    table = Table()
    gone = weakref.ref(table)
    frozen_before = gc.get_freeze_count()
    with collection_paused():
        kept = _long_lived_objects()  # a model's or a registry's objects
    # Not equal: another thread may free frozen objects meanwhile. A freeze would add all of ``kept``.
    assert gc.get_freeze_count() <= frozen_before
    del table, kept
    gc.collect()
    assert gone() is None


def test_the_collector_resumes_when_the_last_of_overlapping_loads_ends() -> None:
    gc.enable()
    first_inside, second_inside = threading.Event(), threading.Event()
    second_may_end, second_ended = threading.Event(), threading.Event()
    states: dict[str, bool] = {}

    def second() -> None:
        first_inside.wait(10)
        with collection_paused():
            second_inside.set()
            second_may_end.wait(10)
        states["after second"] = gc.isenabled()
        second_ended.set()

    worker = threading.Thread(target=second)
    worker.start()
    with collection_paused():
        first_inside.set()
        second_inside.wait(10)
    states["after first"] = gc.isenabled()  # the other load still runs
    second_may_end.set()
    second_ended.wait(10)
    worker.join(10)
    assert states == {"after first": False, "after second": True}


def test_a_collector_switched_off_before_stays_off() -> None:
    gc.disable()
    with collection_paused():
        pass
    assert not gc.isenabled()
