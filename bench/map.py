"""The map's metrics.

- ``map_pca_100k_ms``: PCA of the 100k table's vectors (the first picture), beside one float32 product of
  the matrix with a 384x2 matrix: the least any projection onto a plane costs.
- ``map_layout_100k_s``, ``map_layout_1m_s``: the neighbour layout of the 100k and 1M tables' vectors
  (:func:`recall_gui.core.inspect.layout.neighbour_layout`, on two worker threads as the session runs it),
  with the time each stage started.
- ``map_knn_preservation``: the share of a row's 10 nearest rows in vector space (NumPy, exact, L2: the
  agent's metric for these tables) that are among its 10 nearest on the map, over 2,000 seeded rows, for
  the neighbour layout of the 100k table, beside a full t-SNE of the same rows (openTSNE with its own
  defaults: perplexity 30, its neighbour search, 750 iterations), whose time is ``map_tsne_100k_s``. The
  100k table's rows are the 1M table's first rows: the 1M map is measured on them too (the same rows,
  the same reference), and on the whole million (reported).
- ``map_pan_gap_ms`` and ``map_pan_gap_1m_ms``: the GUI thread's longest stall while the map of the 100k
  (1M) table is panned, zoomed and hovered in the real window (:mod:`bench.map_child`), and for 1M the
  anonymous resident memory the map adds to what the window held with the vectors read
  (``map_1m_memory_mb``), the time to the first picture and to the layout, colouring and lasso.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from bench.context import BenchContext
from bench.results import Metric
from bench.window import _child, display

PCA_RUNS = 5
GOAL_PCA_MS = 1000.0
GOAL_PAN_GAP_MS = 50.0
GOAL_LAYOUT_100K_S = 10.0
GOAL_LAYOUT_1M_S = 60.0
#: The neighbour layout may keep at most this much less of each row's neighbourhood than a full t-SNE.
GOAL_PRESERVATION_MARGIN = 0.05
GOAL_MEMORY_MB = 500.0
EVALUATED_ROWS = 2_000
NEIGHBOURS = 10


def run(ctx: BenchContext) -> list[Metric]:
    small, big = ctx.table(100_000), ctx.table(1_000_000)
    matrix = np.ascontiguousarray(np.load(small.vectors_path), np.float32)
    pca = measure_pca(matrix, ctx.size.count(PCA_RUNS))
    layout_small = measure_layout(matrix)
    reference = measure_reference(matrix)
    evaluated = np.sort(
        np.random.default_rng(7).choice(len(matrix), min(EVALUATED_ROWS, len(matrix)), replace=False)
    )
    truth = exact_neighbours(matrix, evaluated)
    kept = {
        "layout_100k": kept_share(truth, layout_small.pop("positions"), evaluated),
        "tsne_100k": kept_share(truth, reference.pop("positions"), evaluated),
    }
    del matrix
    whole = np.load(big.vectors_path, mmap_mode="r")
    matrix = np.ascontiguousarray(whole, np.float32)
    layout_big = measure_layout(matrix)
    positions = layout_big.pop("positions")
    if np.array_equal(matrix[: small.rows], np.load(small.vectors_path)):
        kept["layout_1m_on_100k_rows"] = kept_share(truth, positions[: small.rows], evaluated)
    spread = np.sort(
        np.random.default_rng(8).choice(len(matrix), min(EVALUATED_ROWS, len(matrix)), replace=False)
    )
    kept["layout_1m"] = kept_share(exact_neighbours(matrix, spread), positions, spread)
    del matrix, whole, positions
    windows = {}
    with display() as (environment, kind):
        for table, extra in ((small, []), (big, ["--full"])):
            registry = write_registry(ctx, table)
            with tempfile.TemporaryDirectory(prefix="recall-gui-map-") as config:
                command = [sys.executable, "-m", "bench.map_child", "--registry", str(registry)]
                command += ["--config", config, *extra]
                windows[table.rows] = _child(command, {**environment, "RECALL_GUI_CONFIG_DIR": config}, 1800)
    return metrics(
        pca, (layout_small, layout_big), reference, kept, (windows[small.rows], windows[big.rows], kind)
    )


def measure_pca(matrix: np.ndarray[Any, Any], runs: int) -> dict[str, float]:
    from recall_gui.core.inspect.projection import pca

    values, floors = [], []
    basis = np.random.default_rng(0).standard_normal((matrix.shape[1], 2)).astype(np.float32)
    for _ in range(runs):
        started = time.perf_counter()
        pca(matrix, 0)
        values.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        _ = matrix @ basis
        floors.append((time.perf_counter() - started) * 1000)
    return {"value_ms": statistics.median(values), "floor_ms": statistics.median(floors)}


def measure_layout(matrix: np.ndarray[Any, Any]) -> dict[str, Any]:
    """The neighbour layout of ``matrix`` (L2) on the session's number of scan threads, and its stages."""
    import threading

    from recall_gui.core.inspect.layout import neighbour_layout
    from recall_gui.core.inspect.projection import Cancelled
    from recall_gui.core.session.session import SCAN_THREADS

    stages: dict[str, float] = {}
    with ThreadPoolExecutor(SCAN_THREADS) as workers:
        started = time.perf_counter()

        def progress(_fraction: float, stage: str) -> None:
            stages.setdefault(stage.split(" (", maxsplit=1)[0], round(time.perf_counter() - started, 2))

        made = neighbour_layout(matrix, "l2", 0, workers=workers, progress=progress)
        took = time.perf_counter() - started
        # How soon a cancel takes effect: set it while rows are placed, time until the run stops.
        cancel, stopped = threading.Event(), {}

        def cancel_midway(fraction: float, _stage: str) -> None:
            if fraction >= 0.5 and not cancel.is_set():
                stopped["asked"] = time.perf_counter()
                cancel.set()

        try:
            neighbour_layout(matrix, "l2", 1, workers=workers, progress=cancel_midway, cancel=cancel)
        except Cancelled:
            stopped["done"] = time.perf_counter()
    return {
        "value_s": took,
        "stages_s": stages,
        "how": made.how,
        "threads": SCAN_THREADS,
        "cancel_ms": (stopped["done"] - stopped["asked"]) * 1000 if "done" in stopped else None,
        "positions": made.positions,
    }


def measure_reference(matrix: np.ndarray[Any, Any]) -> dict[str, Any]:
    """A full t-SNE of every row by openTSNE's own defaults (one thread, seeded): the reference."""
    from openTSNE import TSNE

    started = time.perf_counter()
    positions = np.asarray(TSNE(n_jobs=1, random_state=0).fit(matrix), np.float32)
    return {"value_s": time.perf_counter() - started, "positions": positions}


def exact_neighbours(matrix: np.ndarray[Any, Any], rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The :data:`NEIGHBOURS` nearest other rows (squared L2, NumPy) of each of ``rows``."""
    squares = np.einsum("ij,ij->i", matrix, matrix)
    found = np.empty((len(rows), NEIGHBOURS), np.intp)
    for start in range(0, len(rows), 250):
        chosen = rows[start : start + 250]
        distances = squares[None, :] - 2 * (matrix[chosen] @ matrix.T)
        distances[np.arange(len(chosen)), chosen] = np.inf
        found[start : start + 250] = np.argpartition(distances, NEIGHBOURS, axis=1)[:, :NEIGHBOURS]
    return found


def kept_share(
    truth: np.ndarray[Any, Any], positions: np.ndarray[Any, Any], rows: np.ndarray[Any, Any]
) -> float:
    """The mean share of each row's nearest rows in vector space (``truth``) among its nearest on the map."""
    from scipy.spatial import cKDTree

    _distances, near = cKDTree(positions.astype(np.float64)).query(positions[rows], k=NEIGHBOURS + 1)
    shares = []
    for row, wanted, found in zip(rows.tolist(), truth, near, strict=True):
        on_map = [int(i) for i in found if i != row][:NEIGHBOURS]
        shares.append(len(set(on_map) & set(wanted.tolist())) / NEIGHBOURS)
    return float(np.mean(shares))


def write_registry(ctx: BenchContext, table: Any) -> Path:
    directory = ctx.registry_dir / f"map-{table.name}"
    directory.mkdir(parents=True, exist_ok=True)
    entry = {
        "name": table.name,
        "uri": str(table.db_dir),
        "description": f"{table.rows:,} benchmark rows derived from Python's documentation",
        "embedder": {"Local": {"model": "AllMiniLML6V2"}},
        "created_at": 1_760_000_000_000,
    }
    (directory / "rag_dbs.json").write_text(json.dumps({"dbs": [entry]}, indent=2), encoding="utf-8")
    (directory / "rag_active.json").write_text(json.dumps([table.name]), encoding="utf-8")
    return directory


def metrics(
    pca: dict[str, float],
    layouts: tuple[dict[str, Any], dict[str, Any]],
    reference: dict[str, Any],
    kept: dict[str, float],
    windows: tuple[dict[str, Any], dict[str, Any], str],
) -> list[Metric]:
    small, big = layouts
    window, window_1m, kind = windows
    floor = kept["tsne_100k"] - GOAL_PRESERVATION_MARGIN
    return [
        Metric(
            "map_pca_100k_ms",
            pca["value_ms"],
            "ms",
            pca["floor_ms"],
            f"<= {GOAL_PCA_MS:g} ms",
            pca["value_ms"] <= GOAL_PCA_MS,
            {"scope": "PCA of 100,000 x 384 float32 vectors (core.projection.pca)", "runs": PCA_RUNS},
        ),
        layout_metric("map_layout_100k_s", small, GOAL_LAYOUT_100K_S, "100,000"),
        layout_metric("map_layout_1m_s", big, GOAL_LAYOUT_1M_S, "1,000,000"),
        Metric(
            "map_knn_preservation",
            kept["layout_100k"],
            "share",
            kept["tsne_100k"],
            f">= the full t-SNE's - {GOAL_PRESERVATION_MARGIN:g}",
            kept["layout_100k"] >= floor,
            {
                "scope": f"share of each of {EVALUATED_ROWS:,} rows' {NEIGHBOURS} nearest rows in vector "
                "space (exact, L2) among its nearest on the map, 100k table",
                "floor_is": "a full t-SNE of the same 100,000 rows (openTSNE's defaults)",
                "layout_1m_on_the_same_rows": (
                    round(kept["layout_1m_on_100k_rows"], 4) if "layout_1m_on_100k_rows" in kept else None
                ),
                "layout_1m_whole": round(kept["layout_1m"], 4),
            },
        ),
        Metric(
            "map_tsne_100k_s",
            reference["value_s"],
            "s",
            None,
            "",
            None,
            {"scope": "the reference: a full t-SNE of the 100k table (openTSNE's defaults, one thread)"},
        ),
        gap_metric("map_pan_gap_ms", window, kind, "100,000"),
        gap_metric("map_pan_gap_1m_ms", window_1m, kind, "1,000,000"),
        Metric(
            "map_1m_memory_mb",
            window_1m["anon_peak_growth_mb"],
            "MB",
            None,
            f"<= {GOAL_MEMORY_MB:g} MB",
            window_1m["anon_peak_growth_mb"] <= GOAL_MEMORY_MB,
            {
                "scope": "the window's largest anonymous resident memory while the 1M map is made, shown, "
                "panned, hovered, coloured and lassoed, minus what it held with the vectors read",
                "with_vectors_mb": round(window_1m["vectors_mb"], 1),
                "first_picture_s": round(window_1m["first_picture_s"], 2),
                "layout_shown_s": round(window_1m["layout_shown_s"], 2),
                "stage_started_s": window_1m.get("stage_started_s"),
                "colour_ms": round(window_1m["colour_ms"], 1),
                "lasso_ms": round(window_1m["lasso_ms"], 1),
                "chosen": window_1m["chosen"],
            },
        ),
    ]


def layout_metric(name: str, layout: dict[str, Any], goal: float, rows: str) -> Metric:
    return Metric(
        name,
        layout["value_s"],
        "s",
        None,
        f"<= {goal:g} s",
        layout["value_s"] <= goal,
        {
            "scope": f"the neighbour layout of {rows} x 384 vectors (core.layout.neighbour_layout, L2)",
            "how": layout["how"],
            "stage_started_s": layout["stages_s"],
            "threads": layout["threads"],
            "cancel_took_ms": None if layout["cancel_ms"] is None else round(layout["cancel_ms"], 1),
        },
    )


def gap_metric(name: str, window: dict[str, Any], kind: str, rows: str) -> Metric:
    gap = max(window["pan_gap_ms"], window["zoom_gap_ms"], window["hover_gap_ms"])
    extra = {
        "scope": f"the GUI thread's longest stall while the map of {rows} points is panned (60 steps), "
        "zoomed (20) and hovered (60) in the window",
        "floor_is": "the same 10 ms timer's longest gap in the idle window",
        "points": window["points"],
        "pan_gap_ms": round(window["pan_gap_ms"], 1),
        "zoom_gap_ms": round(window["zoom_gap_ms"], 1),
        "hover_gap_ms": round(window["hover_gap_ms"], 1),
        "making_gap_ms": round(window["make_gap_ms"], 1),
        "longest_gap": window.get("pan_longest_gap"),
        "display": kind,
    }
    for what in ("colour", "lasso"):
        if f"{what}_gap_ms" in window:
            extra[f"{what}_gap_ms"] = round(window[f"{what}_gap_ms"], 1)
    return Metric(
        name, gap, "ms", window["idle_gap_ms"], f"<= {GOAL_PAN_GAP_MS:g} ms", gap <= GOAL_PAN_GAP_MS, extra
    )
