"""Which of :mod:`lance_distance`'s emulations, if any, computes distances exactly as LanceDB does here.

:mod:`recall_gui.core.session.lance_distance` repeats LanceDB's float32 summation order in the kernels it
runs on two kinds of processor (with AVX-512, and with AVX2 alone). Another processor (ARM) or another
build of LanceDB may sum in another order, and then rows closer than float32 resolution could come out in
another order than LanceDB's. So the emulations are checked where the app runs: a near-tie self-test
compares them, bit for bit, with LanceDB's own flat search over small tables held in memory
(``memory://``: nothing is written anywhere), for every metric and for widths that take each of their
code paths. The verdict (the emulation that holds, or none) is remembered in the app's cache folder per
machine, processor and LanceDB version; when that folder cannot be written, the test simply runs again in
the next process. It runs on a thread of its own, started once a session's first exact search has
answered, so that it never slows that answer down (it keeps LanceDB busy for a while).

Until the verdict is known, and wherever no emulation holds, the distances of the few candidate
rows exact search ranks come from LanceDB itself (:func:`lancedb_distances`: a flat search over those
rows alone), which orders them as LanceDB does on any processor. The candidates' bounds hold for any
summation order (:func:`recall_gui.core.session.exact.rounding_slack`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import platform
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.atomic import write_text_atomic
from recall_gui.core.base.regular_files import read_regular
from recall_gui.core.base.thread_priority import lower_this_thread
from recall_gui.core.session.lance_distance import EMULATIONS, Measure

#: Widths that take each path of the emulations: 8-lane and 16-lane sums, with and without leftovers,
#: and AVX2's chunk of 8 after the 16s, with and without leftovers after it.
CHECKED_WIDTHS = (3, 8, 13, 16, 17, 29, 33, 384, 1000)
METRICS = ("l2", "cosine", "dot")
#: The file of verdicts in the cache folder (one per machine, processor and LanceDB version): the name of
#: the emulation that holds, or :data:`NONE_HOLDS`.
VERDICTS_FILE = "lance-arithmetic.json"
NONE_HOLDS = "none"
#: The most of the verdicts file read: a verdict is a line, one per machine and version.
VERDICTS_MAX_BYTES = 1 << 20
#: How much lower than the app's other threads the self-test runs (nice values).
SELF_TEST_NICE_INCREMENT = 5

#: Distances of a fixed set of rows to a query, by a metric.
Measured = Callable[[npt.NDArray[Any], str], npt.NDArray[np.float32]]

logger = logging.getLogger(__name__)


def lancedb_distances(
    rows: npt.NDArray[Any], query: npt.NDArray[Any], metric: str
) -> npt.NDArray[np.float32]:
    """Each row's distance to ``query`` as LanceDB's flat search computes it here (NaN where it returns
    none): the rows in a table held in memory, searched with ``query`` and ``metric``."""
    with _in_memory(rows) as searched:
        return searched(query, metric)


@contextlib.contextmanager
def _in_memory(rows: npt.NDArray[Any]) -> Iterator[Measured]:
    """``rows`` in a LanceDB table held in memory, and a function giving their distances to a query by
    LanceDB's flat search over that table (dropped on leaving)."""
    import lancedb
    import pyarrow as pa

    matrix = np.ascontiguousarray(rows, np.float32)
    if not len(matrix):
        yield lambda query, metric: np.full(0, np.nan, np.float32)
        return
    data = pa.table(
        {
            "position": pa.array(np.arange(len(matrix), dtype=np.int64)),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1]),
        }
    )
    db = lancedb.connect("memory://")
    name = f"candidates_{uuid.uuid4().hex}"
    table: Any = db.create_table(name, data)

    def searched(query: npt.NDArray[Any], metric: str) -> npt.NDArray[np.float32]:
        found = np.full(len(matrix), np.nan, np.float32)
        search = table.search(np.ascontiguousarray(query, np.float32)).distance_type(metric)
        result = search.bypass_vector_index().select(["position", "_distance"]).limit(len(matrix)).to_arrow()
        found[result.column("position").to_numpy()] = result.column("_distance").to_numpy()
        return found

    try:
        yield searched
    finally:
        db.drop_table(name)


def near_ties(width: int, rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """Rows that test the summation order: random ones at several scales, copies a float32 step apart,
    duplicates, and rows whose products fall below float32's normal range."""
    base = rng.standard_normal((6, width)).astype(np.float32)
    nudged = np.repeat(base, 4, axis=0)
    flip = rng.random(nudged.shape) < 0.25
    nudged[flip] = np.nextafter(nudged[flip], np.float32(np.inf))
    scaled = base * np.float32(1e3)
    tiny = np.array([[1e-20], [1e-22], [1e-39], [1e-42]])
    faint = (rng.standard_normal((4, width)) * tiny).astype(np.float32)
    spread = rng.uniform(-1, 1, (16, width)).astype(np.float32)
    return np.vstack([base, nudged, base[:2], scaled, faint, spread])


def holding_emulation(emulations: Mapping[str, Measure] = EMULATIONS, seed: int = 35) -> str | None:
    """The first of ``emulations`` (by name) that gives LanceDB's distances bit for bit on the near-tie
    tables, or ``None``."""
    rng = np.random.default_rng(seed)
    holding = list(emulations)
    for width in CHECKED_WIDTHS:
        rows = near_ties(width, rng)
        queries = (rows[0] + np.float32(1e-4) * rng.standard_normal(width), rng.standard_normal(width))
        with _in_memory(rows) as lancedb_measured:  # one table per width: most of the test's time
            for query in (np.asarray(q, np.float32) for q in queries):
                for metric in METRICS:
                    expected = lancedb_measured(query, metric)
                    measured = {name: emulations[name](rows, query, metric) for name in holding}
                    holding = [name for name, got in measured.items() if _same(got, expected)]
                    if not holding:
                        return None
    return holding[0]


def _same(got: npt.NDArray[np.float32], expected: npt.NDArray[np.float32]) -> bool:
    return bool(((got == expected) | (np.isnan(got) & np.isnan(expected))).all())


def machine_key() -> str:
    """What the verdict depends on: the processor (its model and features), LanceDB's and Lance's
    versions."""
    processor = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            lines = cpuinfo.read(65536).splitlines()
        wanted = ("model name", "flags", "Features", "CPU implementer", "CPU part")
        processor += "|".join(sorted({line for line in lines if line.startswith(wanted)}))
    except OSError:
        pass  # not Linux: the platform's own name
    versions = []
    for package in ("lancedb", "pylance"):
        try:
            versions.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package} ?")
    digest = hashlib.sha256(processor.encode("utf-8")).hexdigest()[:16]
    return f"{platform.system()} {platform.machine()} {digest} {' '.join(versions)}"


class LanceArithmetic:
    """The session's knowledge of LanceDB's arithmetic here: the verdict of the self-test (remembered in
    ``folder``), and the distances exact search ranks candidates by (:meth:`measure`)."""

    def __init__(self, folder: Path, *, emulations: Mapping[str, Measure] = EMULATIONS) -> None:
        self.folder = folder
        self.emulations = emulations
        self._lock = threading.Lock()
        #: The name of the emulation that holds (``None``: none does).
        self._verdict: Future[str | None] | None = None
        #: Whether this object ran the self-test (rather than reading a remembered verdict).
        self.tested = False

    @property
    def verdict(self) -> bool | None:
        """Whether an emulation holds here; ``None`` while it is not known yet."""
        verdict = self._verdict
        if verdict is None or not verdict.done():
            return None
        return verdict.result() is not None

    def start(self) -> None:
        """Know the verdict: read it from the cache folder, or run the self-test, on a thread of its own
        (reading the processor's features and the libraries' versions takes a few milliseconds too)."""
        with self._lock:
            if self._verdict is not None:
                return
            self._verdict = Future()
        # Not a daemon: a process ending while LanceDB runs on a thread of its own aborts.
        threading.Thread(target=self._check, name="recall-lance-arithmetic", daemon=False).start()

    def wait(self, timeout: float | None = None) -> bool:
        """Whether an emulation holds, waiting for the self-test if it runs (started if need be)."""
        self.start()
        assert self._verdict is not None
        return self._verdict.result(timeout) is not None

    def measure(self) -> Measure:
        """How exact search measures its candidates: the emulation that holds, LanceDB itself where none
        does or while that is not known yet."""
        verdict = self._verdict
        name = verdict.result() if verdict is not None and verdict.done() else None
        return self.emulations[name] if name is not None else lancedb_distances

    def _check(self) -> None:
        assert self._verdict is not None
        lower_this_thread(SELF_TEST_NICE_INCREMENT)  # the first searches, measured by LanceDB, go first
        try:
            holding = self._find()
        except Exception as error:  # e.g. LanceDB cannot search in memory here: trust LanceDB's distances
            logger.warning("LanceDB's arithmetic could not be checked: %s", error)
            holding = None
        self._verdict.set_result(holding)  # set here alone, once: start() runs one check

    def _find(self) -> str | None:
        remembered = self._remembered()
        if remembered is not None:
            return None if remembered == NONE_HOLDS else remembered
        self.tested = True
        holding = holding_emulation(self.emulations)
        if holding is None:
            logger.info("LanceDB sums distances in another order here: candidates are measured by LanceDB")
        self._remember(holding or NONE_HOLDS)
        return holding

    def _remembered(self) -> str | None:
        """The remembered verdict: an emulation's name or :data:`NONE_HOLDS` (anything else, such as an
        earlier version's ``true`` or ``false``, is tested again)."""
        if self.emulations is not EMULATIONS:
            return None  # only the verdict of the app's own emulations is remembered
        try:
            data = json.loads(read_regular(self.folder / VERDICTS_FILE, VERDICTS_MAX_BYTES))
        except (OSError, ValueError):
            return None
        found = data.get(machine_key()) if isinstance(data, dict) else None
        return found if found == NONE_HOLDS or found in EMULATIONS else None

    def _remember(self, verdict: str) -> None:
        if self.emulations is not EMULATIONS:
            return
        path = self.folder / VERDICTS_FILE
        try:
            data = json.loads(read_regular(path, VERDICTS_MAX_BYTES))
        except (OSError, ValueError):
            data = {}
        data = data if isinstance(data, dict) else {}
        data[machine_key()] = verdict
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, json.dumps(data, indent=1) + "\n")
        except OSError as error:  # a cache folder that cannot be written: checked again next time
            logger.info("the verdict on LanceDB's arithmetic could not be remembered: %s", error)
