"""``health_1m``: ``recall-gui health``'s streamed scan of a 1M x 384 table (1.5 GB of vectors) in a process
of its own (:mod:`bench.health_child`). The goal is on memory: the scan's resident growth stays within
200 MB whatever the table's size. Its time is set beside LanceDB's bare read of the same columns (the
floor). The table is synthetic (random vectors; health reads, it does not embed), with a few zero and
missing vectors, empty and repeated contents, so every list of the report has something in it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import data
from bench.context import BenchContext
from bench.results import Metric

ROWS = 1_000_000
WIDTH = 384
BATCH = 50_000
GOAL_MB = 200.0
#: Every this many rows: a zero vector, a missing one, an empty content and a repeated one.
ODD_EVERY = 100_003


def run(ctx: BenchContext) -> list[Metric]:
    rows = ctx.size.rows(ROWS)
    db = ensure_table(rows)
    command = [sys.executable, "-m", "bench.health_child", "--db", str(db), "--table", "health"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench.health_child failed:\n{done.stderr[-4000:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    vector_mb = rows * WIDTH * 4 / 2**20
    print(
        f"  {rows:,} rows ({vector_mb:,.0f} MB of vectors): scan {found['scan_s']:.1f} s (LanceDB's read "
        f"{found['floor_s']:.1f} s), resident growth {found['growth_mb']:.0f} MB; listed {found['listed']}",
        flush=True,
    )
    label = f"{rows // 1_000_000}m" if rows >= 1_000_000 else f"{rows // 1000}k"
    facts = {"rows": found["rows"], "vector_mb": round(vector_mb), "listed": found["listed"]}
    return [
        Metric(
            f"health_{label}_memory",
            found["growth_mb"],
            "MB",
            None,
            f"<= {GOAL_MB:.0f} MB",
            found["growth_mb"] <= GOAL_MB,
            {**facts, "scope": "resident growth during the scan, sampled every 5 ms"},
        ),
        Metric(f"health_{label}_scan", found["scan_s"], "s", found["floor_s"], extra=facts),
    ]


def ensure_table(rows: int) -> Path:
    """The synthetic table of ``rows`` rows under the bench's data folder, built if missing."""
    import lancedb

    db = data.DB_DIR / f"health_{rows}"
    stamp = db / "stamp.json"
    wanted = {"version": 1, "rows": rows}
    if stamp.exists() and json.loads(stamp.read_text(encoding="utf-8")) == wanted:
        return db
    print(f"  building the health table ({rows:,} rows) ...", flush=True)
    connection = lancedb.connect(str(db))
    batches = _batches(rows)
    # A missing vector is what the report must find: kept as null, not refused.
    table = connection.create_table("health", next(batches), mode="overwrite", on_bad_vectors="null")
    for batch in batches:
        table.add(batch, on_bad_vectors="null")
    stamp.write_text(json.dumps(wanted), encoding="utf-8")
    return db


def _batches(rows: int) -> Iterator[Any]:
    import numpy as np
    import pyarrow as pa

    generator = np.random.default_rng(7)
    for start in range(0, rows, BATCH):
        size = min(BATCH, rows - start)
        matrix = generator.normal(size=(size, WIDTH)).astype(np.float32)
        numbers = np.arange(start, start + size)
        odd = numbers % ODD_EVERY == 0
        matrix[odd] = 0
        contents = [f"passage {n}: some text about topic {n % 977}" for n in numbers]
        for position in np.flatnonzero(odd):
            contents[position] = ""
            if position + 1 < size:
                contents[position + 1] = "the same boilerplate footer"
        missing = pa.array(numbers % ODD_EVERY == 1)
        vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), WIDTH, mask=missing)
        yield pa.table({"id": [f"row-{n}" for n in numbers], "content": contents, "vector": vectors})
