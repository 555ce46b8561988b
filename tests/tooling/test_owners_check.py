"""tests/owners.py: the check after each test names an owner the test kept alive, and finds one freed,
whether the collector had to look at what the test made or also at what was alive before it."""

from __future__ import annotations

from typing import Any

from tests.owners import Made, collector_sees_only_new


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
