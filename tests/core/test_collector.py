"""Loads run with the garbage collector paused, and leave what they made frozen."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
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


def _passes_while(make: Any) -> list[int]:
    passes: list[int] = []

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


def test_a_load_runs_no_collection_pass_and_its_objects_are_frozen_after() -> None:
    gc.enable()
    assert _passes_while(_long_lived_objects)  # the control: the collector would have run
    kept: list[Any] = []
    frozen_before = gc.get_freeze_count()

    def load() -> None:
        with collection_paused():
            assert not gc.isenabled()
            kept.append(_long_lived_objects())

    assert _passes_while(load) == []
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen_before + 200_000


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
