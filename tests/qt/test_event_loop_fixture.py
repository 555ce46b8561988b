"""The window tests' event loop (tests/qt/conftest.py): a worker thread that finishes its job after the test
ended hands its callback to a loop that is gone; the callback is dropped, not emitted on a deleted object.
A callback Qt runs between two runs of the loop (pytest-qt processes events after each test) finds its
loop running, as asyncio's tasks need."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

from PySide6.QtWidgets import QApplication

from tests.qt import conftest


def test_a_job_finishing_after_its_loop_is_gone_hands_it_nothing() -> None:
    app = QApplication.instance() or QApplication([])
    loop = conftest.TestEventLoop(app)
    release = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        job = pool.submit(release.wait, 10)
        waiting = asyncio.wrap_future(job, loop=loop)  # its result goes to the loop, from the worker
        loop.close()
        loop.delete_qt_objects()
        release.set()  # the job ends now: its callback comes to the closed loop
    assert job.result() is True
    assert not waiting.done()  # dropped: the loop that would have run it is gone
    assert loop.call_soon_threadsafe(print) is None


def test_a_callback_run_by_qt_between_two_runs_of_the_loop_finds_it_running() -> None:
    app = QApplication.instance() or QApplication([])
    loop = conftest.TestEventLoop(app)
    seen: list[object] = []

    async def step() -> None:
        seen.append(asyncio.get_running_loop())

    task = loop.create_task(step())  # its first step is a callback on the loop, not run yet
    try:
        while not task.done():
            app.processEvents()  # Qt, not the loop, runs it (as pytest-qt does after a test)
        assert task.exception() is None
        assert seen == [loop]
        assert asyncio._get_running_loop() is None  # and the loop is not left running
    finally:
        loop.close()
        loop.delete_qt_objects()
