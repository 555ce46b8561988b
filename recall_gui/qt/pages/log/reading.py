"""Reading the agent log for the Log page: on a worker, a batch at a time, the newest calls within a bound.

The log holds calls oldest first and may take a gigabyte. The page shows the calls read so far as they
come, says how far through the files the reading is, and holds the newest :data:`SHOWN_CALLS` of them
within ``SHOWN_LOG_BYTES`` of records (estimated from their fields), so its memory does not grow with the
log. The reading is ``LogFiles.records``, the core's own, as a stream; it pauses every few milliseconds
for the GUI thread, and hands over a batch only once the page has shown the one before.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass

from recall_gui.core.agent_log import SHOWN_LOG_BYTES, CallRecord, LogFiles
from recall_gui.core.base import collection_paused

#: The newest calls the page holds at most.
SHOWN_CALLS = 50_000
#: How often the worker hands what it read to the page (seconds).
BATCH_S = 0.1
#: How long the worker reads before it lets the GUI thread have Python's lock (seconds).
SLICE_S = 0.02
#: What a record's line takes besides the text of its fields: its keys, quotes, numbers.
LINE_OVERHEAD = 150


@dataclass(frozen=True)
class LogBatch:
    """What the worker read since its last batch."""

    #: Calls newer than every call handed over before, oldest first.
    added: tuple[CallRecord, ...]
    #: How many of the oldest calls handed over before the page lets go (beyond the bound).
    dropped: int
    #: How far through the files (bytes, estimated) and how large they are.
    read_bytes: int
    total_bytes: int
    #: Every line skipped so far, and every older call left out so far.
    notes: tuple[str, ...]
    left_out: int
    #: The last batch: the whole log was read.
    done: bool = False

    @property
    def share(self) -> float:
        """How far through the files the reading is (0..1; an estimate, never 1 before the end)."""
        return 1.0 if self.done else min(self.read_bytes / max(self.total_bytes, 1), 0.99)


def record_bytes(record: CallRecord) -> int:
    """About what ``record``'s line takes (its fields' text and a fixed overhead): cheaper than writing it."""
    arguments = record.arguments
    if isinstance(arguments, dict):
        argument_bytes = sum(len(str(key)) + len(str(value)) + 6 for key, value in arguments.items())
    else:
        argument_bytes = len(str(arguments))
    texts = (record.time, record.client, record.client_version, record.tool, record.error)
    return (
        LINE_OVERHEAD
        + argument_bytes
        + sum(len(text) for text in texts if text)
        + sum(len(entry_id) + 3 for entry_id in record.result_ids)
    )


def read_newest(
    files: LogFiles,
    send: Callable[[LogBatch], None],
    stop: threading.Event,
    taken: threading.Event,
    breathe: Callable[[], None],
    *,
    max_calls: int = SHOWN_CALLS,
    max_bytes: int = SHOWN_LOG_BYTES,
) -> None:
    """Read ``files`` as a stream (run on a worker) and ``send`` a batch every :data:`BATCH_S` once the
    page has ``taken`` the one before (a page that falls behind gets fewer, larger batches, never a queue
    of them), and at the end; the calls held (handed over or about to be) stay within ``max_calls`` and
    ``max_bytes``. Every :data:`SLICE_S` it lets the GUI thread run (``breathe``). Stops between two calls
    when ``stop`` is set."""
    stamps = files.stamps()
    total = sum(stamp[1] for stamp in stamps if stamp is not None)
    notes: list[str] = []
    sizes: collections.deque[int] = collections.deque()  # of every call held, oldest first
    pending: collections.deque[CallRecord] = collections.deque()  # the newest of them, not handed over
    held_bytes = read = left_out = dropped = 0
    last = sliced = time.monotonic()
    for record in files.records(notes):
        if stop.is_set():
            return
        if time.monotonic() - sliced >= SLICE_S:
            breathe()
            sliced = time.monotonic()
        size = record_bytes(record)
        read += size
        sizes.append(size)
        pending.append(record)
        held_bytes += size
        while len(sizes) > 1 and (len(sizes) > max_calls or held_bytes > max_bytes):
            held_bytes -= sizes.popleft()
            left_out += 1
            if len(sizes) >= len(pending):  # the oldest held was handed over: the page lets it go
                dropped += 1
            else:
                pending.popleft()
        if time.monotonic() - last >= BATCH_S and taken.is_set():
            taken.clear()
            send(LogBatch(tuple(pending), dropped, read, total, tuple(notes), left_out))
            pending.clear()
            dropped, last = 0, time.monotonic()
    while not taken.wait(BATCH_S):
        if stop.is_set():
            return
    send(LogBatch(tuple(pending), dropped, read, total, tuple(notes), left_out, done=True))


async def stream_log(
    files: LogFiles,
    executor: Executor,
    on_batch: Callable[[LogBatch], None],
    *,
    max_calls: int = SHOWN_CALLS,
    max_bytes: int = SHOWN_LOG_BYTES,
) -> None:
    """Read the log on ``executor`` and hand each batch to ``on_batch`` here (the GUI thread), the last
    one included; a cancel stops the worker between two calls."""
    loop = asyncio.get_running_loop()
    batches: asyncio.Queue[LogBatch | None] = asyncio.Queue()
    stop, taken = threading.Event(), threading.Event()
    taken.set()

    def send(batch: LogBatch | None) -> None:
        try:
            loop.call_soon_threadsafe(batches.put_nowait, batch)
        except RuntimeError:  # the loop is closed: the window is gone
            stop.set()

    def breathe() -> None:
        """Wait until the GUI thread has served what queued up meanwhile: reading holds Python's lock,
        which the GUI thread needs for every cell it paints (docs/PERFORMANCE_LOG.md#log_reading)."""
        served = threading.Event()
        try:
            loop.call_soon_threadsafe(served.set)
        except RuntimeError:  # the loop is closed: the window is gone
            stop.set()
            return
        while not served.wait(BATCH_S) and not stop.is_set():
            pass

    def work() -> None:
        try:
            # Without the collector's full passes over the calls held, each of which held the lock (and
            # the window) for as long as it took.
            with collection_paused():
                read_newest(files, send, stop, taken, breathe, max_calls=max_calls, max_bytes=max_bytes)
        finally:
            send(None)

    reading = loop.run_in_executor(executor, work)
    reading.add_done_callback(lambda done: done.cancelled() or done.exception())  # seen, if abandoned
    try:
        while (batch := await batches.get()) is not None:
            on_batch(batch)
            taken.set()
    finally:
        stop.set()  # cancelled: the worker stops at the next call
    await reading
