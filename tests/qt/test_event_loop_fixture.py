"""The window tests' event loop (tests/qt/conftest.py): a worker thread that finishes its job after the test
ended hands its callback to a loop that is gone; the callback is dropped, not emitted on a deleted object."""

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
