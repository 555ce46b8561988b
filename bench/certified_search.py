"""``exact_search_1m_certified``, ``exact_search_2m_certified`` and ``exact_memory_1m``: exact search
through int8 codes (:mod:`recall_gui.core.session.certified`) on synthetic vectors (clustered, normalised, one
in a
hundred an exact copy of another, from a fixed seed).

- the search: one query's top 10 by cosine through ``exact.nearest_rows`` over the codes (the int8 scan and
  the exact ranking of its candidates), beside the float32 floor (NumPy's faster of ``argpartition`` over
  ``X @ q`` and over ``einsum``, the same vectors in memory); ``identical`` when every timed query's answer
  (positions and distances) equals the float32 exact path's, and, at 1M, a sample of queries' ids equal
  LanceDB's flat search on the same vectors written as a table (cached under ``bench/data/``);
- the memory: what the searchable structure holds resident (its arrays, plus the pages of the mapped
  float32 copy that the searches touched, read from ``/proc/self/smaps``) against the float32 matrix.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench import data
from bench.context import BenchContext
from bench.results import Metric
from bench.timing import side_by_side

DIM = 384
TOP_K = 10
METRIC = "cosine"
SEED = 20260
SEARCH_GOAL = 0.4
MEMORY_GOAL = 0.35
#: (rows, timed queries, queries checked against LanceDB's flat search)
SIZES = ((1_000_000, 30, 4), (2_000_000, 20, 0))


def run(ctx: BenchContext) -> list[Metric]:
    # Synthetic vectors: no model, no shared tables; only the sizes come from the context.
    metrics: list[Metric] = []
    for rows, timed, checked in SIZES:
        sized = ctx.size.rows(rows), ctx.size.count(timed), ctx.size.count(checked)
        metrics.extend(asyncio.run(measure(*sized)))
    return metrics


def synthetic(rows: int, count: int, seed: int = SEED) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """``rows`` vectors around 2,000 centres (normalised), one in a hundred a copy of an earlier row, and
    ``count`` queries drawn the same way."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((2_000, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)

    def draw(n: int) -> np.ndarray[Any, Any]:
        out = np.empty((n, DIM), np.float32)
        for start in range(0, n, 100_000):
            stop = min(n, start + 100_000)
            block = centres[rng.integers(0, len(centres), stop - start)]
            block += rng.standard_normal((stop - start, DIM), dtype=np.float32) * np.float32(0.6 / DIM**0.5)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            out[start:stop] = block
        return out

    matrix = draw(rows)
    copies = np.arange(100, rows, 100)
    matrix[copies] = matrix[copies - 1 - rng.integers(0, 99, len(copies))]
    return matrix, draw(count)


def mapped_resident_bytes(array: np.ndarray[Any, Any]) -> int:
    """Resident bytes of the file mapping that holds ``array`` (Linux; 0 where it cannot be read)."""
    address = array.ctypes.data
    try:
        lines = Path("/proc/self/smaps").read_text().splitlines()
    except OSError:
        return 0
    inside = False
    for line in lines:
        head = line.split()[0] if line.split() else ""
        if "-" in head and ":" not in head:
            low, high = (int(part, 16) for part in head.split("-"))
            inside = low <= address < high
        elif inside and head == "Rss:":
            return int(line.split()[1]) * 1024
    return 0


async def measure(rows: int, timed: int, checked: int) -> list[Metric]:
    from recall_gui.core.session.certified import candidates
    from recall_gui.core.session.exact import VectorMatrix, nearest_rows
    from recall_gui.core.session.session import Session

    name = f"{rows // 1_000_000}m"
    started = time.perf_counter()
    matrix, queries = synthetic(rows, timed)
    print(f"  {name}: {rows:,} synthetic vectors in {time.perf_counter() - started:.0f} s", flush=True)
    plain = VectorMatrix.build(matrix, np.arange(rows, dtype=np.uint64))
    data.DATA_DIR.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="certified-", dir=data.DATA_DIR))
    session = Session()  # its scan threads, as the app has them
    try:
        started = time.perf_counter()
        coded = plain.with_codes(folder, session.scan_executor)
        coding_s = time.perf_counter() - started
        print(f"  {name}: coded in {coding_s:.1f} s", flush=True)

        async def subject(query: np.ndarray[Any, Any]) -> Any:
            return nearest_rows(coded, query, METRIC, TOP_K)

        measured = await side_by_side(
            list(queries),
            subject,
            lambda q: np.argpartition(matrix @ q, TOP_K)[:TOP_K],
            rounds=2,
            others={
                "einsum": lambda q: np.argpartition(np.einsum("ij,j->i", matrix, q), TOP_K)[:TOP_K],
                "float32_path": lambda q: nearest_rows(plain, q, METRIC, TOP_K),
            },
        )
        floor_ms = min(measured.floor_ms, measured.others_ms["einsum"])
        pair = dataclasses.replace(measured, floor_ms=floor_ms)
        same = 0
        counts = []
        for query in queries:
            ours, theirs = (
                nearest_rows(coded, query, METRIC, TOP_K),
                nearest_rows(plain, query, METRIC, TOP_K),
            )
            same += ours[0].tolist() == theirs[0].tolist() and ours[1].tolist() == theirs[1].tolist()
            counts.append(len(candidates(coded.codes, query, TOP_K, METRIC)))
        lance_same, lance_checked = (
            await compare_with_lancedb(matrix, queries[:checked], coded) if checked else (0, 0)
        )
        identical = same == len(queries) and lance_same == lance_checked
        # as after a search in the app: the rows ranked and the hits' vectors were read, then unmapped
        _ = coded.matrix[nearest_rows(coded, queries[0], METRIC, TOP_K)[0]]
        mapped_during_search = mapped_resident_bytes(coded.matrix)
        coded.codes.release_rows()
        resident = coded.nbytes + mapped_resident_bytes(coded.matrix)
        print(
            f"  {name}: {same}/{len(queries)} as the float32 path, {lance_same}/{lance_checked} as LanceDB; "
            f"median {np.median(counts):.0f} candidates (max {max(counts)})",
            flush=True,
        )
        extra = {
            "identical": identical,
            "identical_to_float32_path": f"{same}/{len(queries)}",
            "identical_to_lancedb": f"{lance_same}/{lance_checked}",
            "float32_path_ms": round(measured.others_ms["float32_path"], 3),
            "floor_matmul_ms": round(measured.floor_ms, 3),
            "floor_einsum_ms": round(measured.others_ms["einsum"], 3),
            "candidates_median": float(np.median(counts)),
            "candidates_max": int(max(counts)),
            "coding_s": round(coding_s, 1),
            "metric": METRIC,
            "k": TOP_K,
            "runs": pair.runs,
        }
        met = pair.ratio <= SEARCH_GOAL and identical
        metrics = [
            Metric(
                f"exact_search_{name}_certified",
                pair.value_ms,
                "ms",
                floor_ms,
                f"ratio <= {SEARCH_GOAL}, identical",
                met,
                extra,
            )
        ]
        if rows == 1_000_000:
            memory_extra = {
                "codes_and_norms_mb": round(coded.nbytes / 1024**2, 1),
                "mapped_resident_mb": round(mapped_resident_bytes(coded.matrix) / 1024**2, 1),
                "mapped_during_a_search_mb": round(mapped_during_search / 1024**2, 1),
            }
            metrics.append(
                Metric(
                    f"exact_memory_{name}",
                    resident / 1024**2,
                    "MB",
                    matrix.nbytes / 1024**2,
                    f"ratio <= {MEMORY_GOAL}",
                    resident / matrix.nbytes <= MEMORY_GOAL,
                    memory_extra,
                )
            )
        return metrics
    finally:
        await session.aclose()
        shutil.rmtree(folder)  # empty on POSIX: the mapped copy's file was removed when it was mapped


async def compare_with_lancedb(
    matrix: np.ndarray[Any, Any], queries: np.ndarray[Any, Any], coded: Any
) -> tuple[int, int]:
    """How many queries the int8 path answers with LanceDB's flat-search ids in LanceDB's order."""
    import lancedb
    import pyarrow as pa

    from recall_gui.core.session.exact import nearest_rows

    db_dir = data.DATA_DIR / "certified"
    stamp = db_dir / "stamp.json"
    wanted = {"rows": len(matrix), "seed": SEED, "dim": DIM}
    connection = await lancedb.connect_async(str(db_dir))
    if not stamp.exists() or json.loads(stamp.read_text()) != wanted:
        started = time.perf_counter()
        vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), DIM)
        table = pa.table({"id": pa.array(np.arange(len(matrix))), "vector": vectors})
        await connection.create_table("vectors", table, mode="overwrite")
        stamp.write_text(json.dumps(wanted))
        print(f"  wrote the LanceDB table in {time.perf_counter() - started:.0f} s", flush=True)
    lance = await connection.open_table("vectors")
    same = 0
    for query in queries:
        theirs = await (
            lance.query()
            .nearest_to(query)
            .distance_type(METRIC)
            .bypass_vector_index()
            .limit(TOP_K)
            .to_arrow()
        )
        ours, _ = nearest_rows(coded, query, METRIC, TOP_K)  # row ids are positions here
        same += ours.tolist() == theirs.column("id").to_pylist()
    return same, len(queries)
