"""``review``: the review of a 1,000,000-row table with 100,000 verdicts (docs/REVIEW.md#scale).

- ``review_changed_1m``: "changed since reviewed" from nothing kept: the table's ids and contents read and
  hashed, the review file read, the verdicts joined, the changed rows counted; beside LanceDB's read of
  the id and content columns alone.
- ``review_load_1m``: opening the review again (the version's snapshot kept in the cache folder): beside
  reading the review file and decoding its lines with ``json.loads`` alone.
- ``review_next_ms``: a verdict written, the next row without a verdict found and its row read (median of
  a run of verdicts); beside reading one row alone.

The table (built once, cached in bench/data) holds distinct texts, "Item i of the notes: " and a real
passage, and narrow random vectors: the review reads only ids and contents. 97,000 verdicts are on rows'
contents and 3,000 on ids whose text has changed since: exactly those 3,000 rows are changed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench import data
from bench.context import BenchContext
from bench.results import Metric

ROWS, VERDICTS, CHANGED = 1_000_000, 100_000, 3_000
GOAL_LOAD_MS, GOAL_NEXT_MS, GOAL_CHANGED_MS = 1000.0, 50.0, 5000.0
#: Verdicts marked one after another for ``review_next_ms``.
MARKS = 30
LOAD_RUNS = 3
NAME = "review"
WIDTH = 16
CHUNK = 100_000


def run(ctx: BenchContext) -> list[Metric]:
    return asyncio.run(measure(ctx.size.rows(ROWS)))


def build(rows: int) -> Path:
    """The table and its registry (built when missing or stale); returns the registry folder."""
    import lancedb
    import pyarrow as pa

    folder = data.DATA_DIR / f"review_{rows}"
    stamp = {"version": data.DATA_VERSION, "rows": rows}
    stamp_path = folder / "stamp.json"
    if stamp_path.exists() and json.loads(stamp_path.read_text(encoding="utf-8")) == stamp:
        return folder / "registry"
    print(f"  building the review table ({rows:,} rows) ...", flush=True)
    texts = data.real_passages()
    rng = np.random.default_rng(data.SEED + 11)

    def batches() -> Any:
        for start in range(0, rows, CHUNK):
            size = min(CHUNK, rows - start)
            vectors = rng.random((size, WIDTH), dtype=np.float32)
            yield pa.record_batch(
                {
                    "id": pa.array([f"item-{start + i:07d}" for i in range(size)], pa.utf8()),
                    "content": pa.array(
                        [
                            f"Item {n} of the notes: {texts[n % len(texts)]}"
                            for n in range(start, start + size)
                        ]
                    ),
                    "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), WIDTH),
                }
            )

    schema = pa.schema([("id", pa.utf8()), ("content", pa.utf8()), ("vector", pa.list_(pa.float32(), WIDTH))])
    reader = pa.RecordBatchReader.from_batches(schema, batches())
    lancedb.connect(str(folder / "lancedb")).create_table(NAME, reader, mode="overwrite")
    registry = folder / "registry"
    registry.mkdir(parents=True, exist_ok=True)
    entry = {
        "name": NAME,
        "uri": str(folder / "lancedb"),
        "description": "benchmark entries for the review",
        "embedder": {"Local": {"model": "AllMiniLML6V2"}},
        "created_at": 1_760_000_000_000,
    }
    (registry / "rag_dbs.json").write_text(json.dumps({"dbs": [entry]}), encoding="utf-8")
    (registry / "rag_active.json").write_text(json.dumps([NAME]), encoding="utf-8")
    stamp_path.write_text(json.dumps(stamp), encoding="utf-8")
    return registry


def write_review_file(registry: Path, path: Path, rows: int) -> tuple[int, int]:
    """100,000 verdicts (at toy size, a tenth of the rows): on rows' contents, and on ids whose text the
    verdict's digest no longer matches; returns (verdicts, changed). Digests by hashlib, not the app."""
    import lancedb

    from recall_gui.core.review.records import VERDICTS as KINDS
    from recall_gui.core.review.records import ReviewRecord

    table = lancedb.connect(str(registry.parent / "lancedb")).open_table(NAME).to_arrow()
    ids, contents = table.column("id").to_pylist(), table.column("content").to_pylist()
    verdicts = min(VERDICTS, rows // 10)
    changed = verdicts * CHANGED // VERDICTS
    chosen = np.random.default_rng(data.SEED + 12).choice(rows, verdicts, replace=False)
    lines = []
    for number, position in enumerate(chosen.tolist()):
        text = contents[position] if number >= changed else f"an older text of {ids[position]}"
        record = ReviewRecord(
            record=f"r{number}",
            kind="verdict",
            content_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
            entry_id=ids[position],
            verdict=KINDS[number % 4],
            note="" if number % 7 else "checked against the source",
            who="bench",
            when=f"2025-06-01T10:{number // 60_000 % 60:02d}:{number // 1000 % 60:02d}.{number % 1000:06d}Z",
            db=NAME,
            uri=str(registry.parent / "lancedb"),
            table=NAME,
            table_version=1,
        )
        lines.append(record.to_line())
    path.write_bytes(b"".join(lines))
    return verdicts, changed


def _timed_read(table: Any) -> float:
    """LanceDB's read of the id and content columns of every row, in milliseconds."""
    started = time.perf_counter()
    table.search().select(["id", "content"]).with_row_id(True).to_arrow()
    return (time.perf_counter() - started) * 1000


async def measure(rows: int) -> list[Metric]:
    import lancedb

    from recall_gui.core.registry.registry import load_registry
    from recall_gui.core.review.queue import table_order
    from recall_gui.core.review.reviewing import open_review
    from recall_gui.core.session.session import Session

    registry = build(rows)
    entry = load_registry(registry).get(NAME)
    assert entry is not None
    work = Path(tempfile.mkdtemp(prefix="recall-gui-bench-review-"))
    path = work / "review.jsonl"
    verdicts, changed = write_review_file(registry, path, rows)
    previous_cache = os.environ.get("RECALL_GUI_CACHE_DIR")
    os.environ["RECALL_GUI_CACHE_DIR"] = str(work / "cache")  # nothing kept: the first open hashes
    try:
        table = lancedb.connect(str(registry.parent / "lancedb")).open_table(NAME)
        read_ms = min(_timed_read(table) for _ in range(2))  # the second without the first's start-up

        async with Session(keep_vectors=False) as session:
            started = time.perf_counter()
            review = await open_review(session, entry, path=path)
            found_changed = review.state.changed
            changed_ms = (time.perf_counter() - started) * 1000
        assert found_changed == changed, (found_changed, changed)

        started = time.perf_counter()
        for line in path.read_bytes().splitlines():
            json.loads(line)
        parse_ms = (time.perf_counter() - started) * 1000
        loads = []
        for _ in range(LOAD_RUNS):
            async with Session(keep_vectors=False) as session:
                started = time.perf_counter()
                review = await open_review(session, entry, path=path)
                loads.append((time.perf_counter() - started) * 1000)
        load_ms = statistics.median(loads)
        reviewed = review.progress().reviewed

        async with Session(keep_vectors=False) as session:
            review = await open_review(session, entry, path=path)
            queue = table_order(review.state)
            index = queue.next_index(-1, review.state, not_reviewed_only=True)
            steps, reads = [], []
            for _ in range(MARKS):
                assert index is not None
                started = time.perf_counter()
                review.mark(queue.position(index), "correct")
                index = queue.next_index(index, review.state, not_reviewed_only=True)
                assert index is not None
                await review.text_at(session, queue.position(index))
                steps.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                await review.text_at(session, queue.position(index))
                reads.append((time.perf_counter() - started) * 1000)
    finally:
        if previous_cache is None:
            os.environ.pop("RECALL_GUI_CACHE_DIR", None)
        else:
            os.environ["RECALL_GUI_CACHE_DIR"] = previous_cache
    next_ms, read_one_ms = statistics.median(steps), statistics.median(reads)
    print(
        f"  {rows:,} rows, {verdicts:,} verdicts ({reviewed:,} rows reviewed): changed {changed_ms:.0f} ms "
        f"(read {read_ms:.0f} ms), load {load_ms:.0f} ms (parse {parse_ms:.0f} ms), next {next_ms:.1f} ms "
        f"(a row {read_one_ms:.1f} ms, slowest step {max(steps):.1f} ms)",
        flush=True,
    )
    scope = {"rows": rows, "verdicts": verdicts, "changed": changed}
    return [
        Metric(
            "review_changed_1m",
            changed_ms,
            "ms",
            read_ms,
            f"<= {GOAL_CHANGED_MS:g} ms",
            changed_ms <= GOAL_CHANGED_MS,
            {
                **scope,
                "scope": "open a review with nothing kept (ids and contents read and hashed), count changed",
            },
        ),
        Metric(
            "review_load_1m",
            load_ms,
            "ms",
            parse_ms,
            f"<= {GOAL_LOAD_MS:g} ms",
            load_ms <= GOAL_LOAD_MS,
            {**scope, "runs": LOAD_RUNS, "scope": "open a review again (the version's snapshot kept)"},
        ),
        Metric(
            "review_next_ms",
            next_ms,
            "ms",
            read_one_ms,
            f"<= {GOAL_NEXT_MS:g} ms",
            next_ms <= GOAL_NEXT_MS,
            {
                "marks": MARKS,
                "slowest_ms": round(max(steps), 3),
                "scope": "write a verdict, find the next row without one, read that row",
            },
        ),
    ]
