"""tests/owners.py: the check after each test names an owner the test kept alive, and finds one freed,
whether the collector had to look at what the test made or also at what was alive before it; after a
module, a full collection runs once the process has grown enough."""

from __future__ import annotations

import gc
import weakref
from typing import Any

from tests.owners import Housekeeping, Made, collector_sees_only_new


class Owner:
    """Stands for a window or a session: what the check counts."""

    def __init__(self) -> None:
        self.other: Any = None


def made_owners() -> Made:
    made = Made()
    made.track(Owner)
    return made


def test_an_owner_the_test_still_refers_to_is_named_with_what_refers_to_it() -> None:
    made = made_owners()
    with collector_sees_only_new():
        since = made.mark()
        kept = {"owner": Owner()}
        assert made.outliving(since, within_s=0.1) == ["a Owner, referred to by: dict"]
    assert kept


def test_an_owner_in_a_cycle_of_its_own_is_freed_and_not_named() -> None:
    made = made_owners()
    with collector_sees_only_new():
        since = made.mark()
        owner = Owner()
        owner.other = owner
        del owner
        assert made.outliving(since) == []


def test_an_owner_in_a_cycle_with_an_object_older_than_the_test_is_freed_and_not_named() -> None:
    made = made_owners()
    older: list[Any] = []
    with collector_sees_only_new():
        since = made.mark()
        owner = Owner()
        owner.other = older
        older.append(owner)
        del owner, older  # the cycle runs through a frozen object: only a full pass frees it
        assert made.outliving(since) == []


class Growing:
    """A process's resident memory as the housekeeping reads it, set by the test."""

    def __init__(self, mb: int) -> None:
        self.mb = mb

    def __call__(self) -> int:
        return self.mb


def cycle() -> weakref.ref[Owner]:
    owner = Owner()
    owner.other = owner
    return weakref.ref(owner)


def test_after_a_module_a_full_collection_runs_only_once_the_process_has_grown_enough() -> None:
    resident = Growing(1000)
    housekeeping = Housekeeping(growth_mb=100, resident=resident)
    gc.disable()  # no collection but the housekeeping's
    try:
        housekeeping.after_module()  # the first: the baseline
        assert housekeeping.full_collections == 1
        garbage = cycle()
        resident.mb = 1100
        housekeeping.after_module()
        assert (housekeeping.full_collections, garbage() is not None) == (1, True)
        resident.mb = 1101
        housekeeping.after_module()
        assert (housekeeping.full_collections, garbage()) == (2, None)
    finally:
        gc.enable()


def test_after_a_test_the_heap_is_trimmed_only_once_the_process_has_grown_by_the_bound() -> None:
    resident, trims = Growing(1000), []
    housekeeping = Housekeeping(trim_mb=50, resident=resident, release=lambda: trims.append(resident.mb))
    housekeeping.after_test()  # the first: the baseline
    resident.mb = 1050
    housekeeping.after_test()
    resident.mb = 1051
    housekeeping.after_test()
    resident.mb = 1080  # below the last trim's 1051 + 50
    housekeeping.after_test()
    housekeeping.after_module()  # a module's end always trims (the first: again after its full collection)
    assert trims == [1000, 1051, 1080, 1080]
