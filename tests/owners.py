"""What a test opens, it closes: every window and core session a test makes must be gone when it ends.

A window or session kept alive from test to test keeps its tables, vectors, models and Qt objects with it;
a run of the whole suite once climbed to 15 GB that way. The check (an autouse fixture in
tests/conftest.py) fails the test whose window or session outlived it, naming what is still alive.

Instances are counted from the moment their class's module is imported (no test pays for importing the
app's window to be checked); a module-scoped fixture's session, made before the test's own fixtures, is
the fixture's to close and is not counted against the test.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import sys
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from recall_gui.core.base.heap import release_free_memory
from tests.waiting import wait_until

#: The classes that own memory, by module: what a front end creates and must close.
OWNERS = {
    "recall_gui.core.session.session": "Session",
    "recall_gui.qt.main_window": "MainWindow",
}


class Made:
    """The owners made since the process began being checked, as weak references."""

    def __init__(self) -> None:
        self.refs: list[weakref.ref[Any]] = []
        self._tracked: set[type] = set()

    def track_imported(self) -> None:
        """Count the instances of each owner class whose module is imported by now."""
        for module_name, class_name in OWNERS.items():
            module = sys.modules.get(module_name)
            cls = getattr(module, class_name, None) if module is not None else None
            if isinstance(cls, type) and cls not in self._tracked:
                self.track(cls)

    def track(self, cls: type) -> None:
        """Count the instances of ``cls`` made from now on."""
        original = cls.__init__
        refs = self.refs

        @functools.wraps(original)
        def init(instance: Any, *args: Any, **kwargs: Any) -> None:
            original(instance, *args, **kwargs)
            refs.append(weakref.ref(instance))

        cls.__init__ = init  # type: ignore[misc]
        self._tracked.add(cls)

    def mark(self) -> int:
        return len(self.refs)

    def outliving(self, since: int, within_s: float = 5.0) -> list[str]:
        """The owners made since ``since`` that are still alive once Qt's deferred deletions and the
        collector have run, waiting up to ``within_s`` for worker threads still finishing a job of theirs
        (their frames hold what the job uses); forgets them all (a failure is reported once)."""
        made = self.refs[since:]
        del self.refs[since:]
        if not _alive(made):
            return []

        def gone() -> bool:
            _delete_later_now()
            gc.collect()
            if not _alive(made):
                return True
            # What was alive before the test (frozen by `collector_sees_only_new`) or what a library's import
            # froze (core/base/collector.py) is out of the collector's reach: a full pass next time.
            gc.unfreeze()
            return False

        with contextlib.suppress(AssertionError):  # still alive after the wait: named below
            wait_until(gone, "the test's windows and sessions are gone", timeout=within_s)
        if not _alive(made):
            return []
        gc.collect()
        return [_describe(instance) for instance in _alive(made)]


@contextlib.contextmanager
def collector_sees_only_new() -> Iterator[None]:
    """Within the block, the collector passes over only what was made in it: what was alive before is
    frozen (``gc.freeze``), and thawed after: a full pass over a run's heap (every module, model and
    fixture) takes over 100 ms, and the check after each test makes one or two. What the block made
    that only a frozen object's cycle still holds is found by the full pass the check falls back on."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def resident_mb() -> int:
    """This process's resident memory, in MB."""
    import psutil

    return int(psutil.Process().memory_info().rss >> 20)


class Housekeeping:
    """Housekeeping after each test and each test module.

    After a test that left the process ``trim_mb`` larger than the last trim did, the C heap's free pages
    go back to the system (glibc kept 100-230 MB after a test's long batches until its module ended), and
    after every module too (250-350 MB after a module of model or table tests). Once the process has grown
    by ``growth_mb`` since the last full collection, a module's end also frees what its fixtures left in
    reference cycles (the check after each test collects only what that test made). A full pass over a
    run's heap takes 0.3-0.5 s: after every module, it was a fifth of `make test-fast`."""

    def __init__(
        self,
        growth_mb: int = 100,
        trim_mb: int = 50,
        resident: Callable[[], int] = resident_mb,
        release: Callable[[], None] = release_free_memory,
    ) -> None:
        self.growth_mb, self.trim_mb = growth_mb, trim_mb
        self.full_collections = 0
        self._resident, self._release = resident, release
        self._after_last_full: int | None = None
        self._after_last_trim: int | None = None

    def after_test(self) -> None:
        if self._after_last_trim is None or self._resident() > self._after_last_trim + self.trim_mb:
            self._trim()

    def after_module(self) -> None:
        now = self._trim()
        if self._after_last_full is None or now > self._after_last_full + self.growth_mb:
            gc.collect()
            self.full_collections += 1
            self._after_last_full = self._trim()

    def _trim(self) -> int:
        self._release()
        self._after_last_trim = self._resident()
        return self._after_last_trim


def _alive(refs: list[weakref.ref[Any]]) -> list[Any]:
    return [instance for instance in (ref() for ref in refs) if instance is not None]


def _delete_later_now() -> None:
    """Deliver the ``deleteLater`` of closed windows, which a loop that has stopped never will."""
    qt = sys.modules.get("PySide6.QtCore")  # only where the test run has Qt loaded (not in tests/core's job)
    if qt is None or qt.QCoreApplication.instance() is None:
        return
    qt.QCoreApplication.sendPostedEvents(None, qt.QEvent.Type.DeferredDelete)


def _describe(instance: Any) -> str:
    holders = sorted({type(holder).__name__ for holder in gc.get_referrers(instance)} - {"list", "frame"})
    held = f", referred to by: {', '.join(holders)}" if holders else ", held by Qt or C code"
    return f"a {type(instance).__name__}{held}"
