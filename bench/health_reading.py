"""``health_reading``: what measuring each row against what the model reads adds to ``recall-gui health``'s
scan. Two synthetic tables, each scanned with the model's reading and without it (the floor: the scan
as it was): 2,000 whole documents of about 9,000 characters each (a table as cosh's TUI writes one, every
id ``content``), and 200,000 short passages (the common chunked table). Vectors are random: health reads
them, it does not embed."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any
from unittest import mock

from bench import data
from bench.context import BenchContext
from bench.results import Metric

WIDTH = 384
DOCUMENTS = 2_000
DOCUMENT_WORDS = 1_500
PASSAGES = 200_000


def run(ctx: BenchContext) -> list[Metric]:
    metrics = []
    for name, full, words in (("documents", DOCUMENTS, DOCUMENT_WORDS), ("passages", PASSAGES, 0)):
        rows = ctx.size.rows(full)
        db = ensure_table(name, rows, words)
        with_reading, without, reading = asyncio.run(_scan_both(db, name))
        print(
            f"  {rows:,} {name}: scan {with_reading:.2f} s with the model's reading, {without:.2f} s "
            f"without; {reading['rows_longer']:,} rows longer than {reading['token_limit']} tokens, "
            f"{reading['unread_share']:.1%} of the text unread",
            flush=True,
        )
        kept = ("rows_longer", "unread_share", "token_limit")
        facts = {"rows": rows, **{key: reading[key] for key in kept}}
        metrics.append(Metric(f"health_reading_{name}", with_reading, "s", without, extra=facts))
    return metrics


async def _scan_both(db: Path, name: str) -> tuple[float, float, dict[str, Any]]:
    from recall_gui.core.search import health_scan
    from recall_gui.core.session import Session
    from recall_gui.core.tables import open_table

    async with Session() as session:
        entry = (await open_table(session, str(db), table=name, model="AllMiniLML6V2")).entry
        await session.models.reading(entry.embedder)  # the model loaded before: not the scan's cost
        await health_scan.health_report(session, entry)  # LanceDB's files read once, for both runs
        started = time.perf_counter()
        report = await health_scan.health_report(session, entry)
        with_reading = time.perf_counter() - started
        with mock.patch.object(health_scan, "_model_reading", _no_reading):
            started = time.perf_counter()
            await health_scan.health_report(session, entry)
            without = time.perf_counter() - started
    assert report.reading is not None
    return with_reading, without, report.reading.to_dict()


async def _no_reading(*_args: Any) -> None:
    return None


def ensure_table(name: str, rows: int, words: int) -> Path:
    """The synthetic table under the bench's data folder, built if missing."""
    import lancedb
    import numpy as np
    import pyarrow as pa

    db = data.DB_DIR / f"health_reading_{name}_{rows}"
    stamp = db / "stamp.json"
    wanted = {"version": 1, "rows": rows, "words": words}
    if stamp.exists() and json.loads(stamp.read_text(encoding="utf-8")) == wanted:
        return db
    print(f"  building the {name} table ({rows:,} rows) ...", flush=True)
    generator = np.random.default_rng(11)
    vocabulary = [f"word{n}" for n in range(5_000)] + ["the", "a", "of", "to", "is", "and", "in"]
    if words:
        contents = [" ".join(generator.choice(vocabulary, words)) for _ in range(rows)]
        ids = ["content"] * rows
    else:
        contents = [f"passage {n}: some text about topic {n % 977}" for n in range(rows)]
        ids = [f"row-{n}" for n in range(rows)]
    matrix = generator.normal(size=(rows, WIDTH)).astype(np.float32)
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), WIDTH)
    table = pa.table({"id": ids, "content": contents, "vector": vectors})
    lancedb.connect(str(db)).create_table(name, table, mode="overwrite")
    stamp.write_text(json.dumps(wanted), encoding="utf-8")
    return db
