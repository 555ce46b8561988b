"""``window_rss_after_50_databases_mb``: whether the window keeps memory across what a user does again and
again. The real window (:mod:`bench.window_memory_child`, a process of its own) opens 50 databases one
after another, searches each, and opens and closes its pages in turn; its resident size after all that,
beside the floor: its size after the same actions once (the first database searched, every page opened
and closed).

The exact-search cache keeps every table searched, by design, up to its bound (``RECALL_GUI_EXACT_CACHE_MB``,
2 GB by default): a table of 1,000 rows takes about 1 MB of it (its int8 codes, norms, ids and texts). So
the figure is measured with the bound at :data:`SMALL_CACHE_MB`, where the cache keeps a table or two and
a ratio above 1 is memory kept by nothing that should keep it; the run with the default bound is reported
beside it.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import data
from bench.context import BenchContext
from bench.results import Metric
from bench.window import _child, display
from recall_gui.core.session.vector_cache import CACHE_ENV

DATABASES = 50
ROWS = 1_000
GOAL_RATIO = 1.1
SMALL_CACHE_MB = 2


def run(ctx: BenchContext) -> list[Metric]:
    count = ctx.size.count(DATABASES)
    registry = write_databases(ctx, count, ctx.size.rows(ROWS))
    runs = {}
    with display() as (environment, kind):
        for cache, bound in (("small", {CACHE_ENV: str(SMALL_CACHE_MB)}), ("default", {})):
            with tempfile.TemporaryDirectory(prefix="recall-gui-bench-") as config:
                command = [sys.executable, "-m", "bench.window_memory_child", "--registry", str(registry)]
                command += ["--config", config, "--databases", str(count)]
                child_env = {**environment, **bound, "RECALL_GUI_CONFIG_DIR": config}
                runs[cache] = _child(command, child_env, 3600)
    found, default = runs["small"], runs["default"]
    value, floor = found["rss_after_mb"], found["rss_once_mb"]
    return [
        Metric(
            f"window_rss_after_{DATABASES}_databases_mb",
            value,
            "MB",
            floor,
            f"ratio <= {GOAL_RATIO}",
            value / floor <= GOAL_RATIO,
            {
                "scope": f"RSS after opening {count} databases of {ctx.size.rows(ROWS):,} rows one after "
                "another, a search in each and a page opened and closed after each, vs after doing it once; "
                f"exact-search cache bound {SMALL_CACHE_MB} MB",
                "rss_by_round_mb": found["rss_by_round_mb"],
                "peak_growth_mb": found["peak_growth_mb"],
                "seconds": found["seconds"],
                "default_cache_rss_once_mb": round(default["rss_once_mb"], 1),
                "default_cache_rss_by_round_mb": default["rss_by_round_mb"],
                "display": kind,
            },
        )
    ]


def write_databases(ctx: BenchContext, count: int, rows: int) -> Path:
    """``count`` knowledge bases of ``rows`` rows each (the real passages, each base's vectors moved a
    little its own way), in folders of their own, all active in one registry; built once (cached)."""
    import lancedb
    import pyarrow as pa

    texts, base = ctx.base
    root = data.DATA_DIR / "many"
    stamp_path, stamp = root / "stamp.json", {"version": data.DATA_VERSION, "count": count, "rows": rows}
    names = [f"notes-{number:02d}" for number in range(count)]
    if not (stamp_path.exists() and json.loads(stamp_path.read_text(encoding="utf-8")) == stamp):
        print(f"  building {count} databases of {rows:,} rows ...", flush=True)
        started = time.perf_counter()
        for number, name in enumerate(names):
            rng = np.random.default_rng(data.SEED + number)
            picked = rng.choice(len(texts), rows, replace=rows > len(texts))
            vectors = base[picked] + rng.normal(0, 0.01, (rows, data.DIM)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.astype(np.float32).ravel()), data.DIM)
            table = pa.table(
                {
                    "id": pa.array([f"doc-{row:05d}" for row in range(rows)], pa.utf8()),
                    "content": pa.array([texts[i] for i in picked], pa.utf8()),
                    "vector": column,
                }
            )
            shutil.rmtree(root / name, ignore_errors=True)
            lancedb.connect(str(root / name)).create_table(name, table)
        stamp_path.write_text(json.dumps(stamp), encoding="utf-8")
        print(f"  ... {time.perf_counter() - started:.0f} s", flush=True)
    registry = ctx.registry_dir / "many"
    registry.mkdir(parents=True, exist_ok=True)
    entries = [
        {
            "name": name,
            "uri": str(root / name),
            "description": f"{rows:,} passages of Python's documentation ({name})",
            "embedder": {"Local": {"model": "AllMiniLML6V2"}},
            "created_at": 1_760_000_000_000,
        }
        for name in names
    ]
    (registry / "rag_dbs.json").write_text(json.dumps({"dbs": entries}, indent=2), encoding="utf-8")
    (registry / "rag_active.json").write_text(json.dumps(names), encoding="utf-8")
    return registry
