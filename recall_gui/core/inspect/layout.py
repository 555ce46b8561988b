"""The map's neighbour layout: t-SNE of a sample, every other row placed from its nearest sampled rows,
then drawn toward its nearest rows. Up to a million rows in about a minute on two cores.

1. **A sample** of :data:`SAMPLE_ROWS` rows (seeded) is laid out by t-SNE (openTSNE) from each sampled
   row's :data:`SAMPLE_NEIGHBOURS` nearest sampled rows, found exactly by the agent's metric
   (:mod:`recall_gui.core.inspect.neighbours`). A table no bigger than the sample is all sample: its map
   is a plain t-SNE.
2. **Every other row** is placed where its :data:`PLACE_NEIGHBOURS` nearest sampled rows (exact, the
   agent's metric) are, weighted by how near each is: a row equal to a sampled row lands on it.
3. **Drawn toward its neighbours**: each row's :data:`GRAPH_NEIGHBOURS` nearest rows of the whole table
   are looked for among the rows whose nearest sampled row is the same as its own or one of that row's
   nearest sampled rows (on the benchmark's tables this finds 92-99% of the exact ten); then every row
   moves :data:`PULL` of the way to the mean place of those rows, :data:`PULL_STEPS` times. The placing
   alone keeps a row's cell but not its order inside the cell; these steps bring rows that are near in
   vector space together on the map, so that a row's ten nearest on the map are about as often its ten
   nearest in vector space as in a full t-SNE (docs/PERFORMANCE_LOG.md#the-map).

Everything is seeded: the same matrix, metric and seed give the same map.
"""

from __future__ import annotations

import threading
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.errors import ProjectionError
from recall_gui.core.base.heap import release_free_memory
from recall_gui.core.inspect.neighbours import (
    Indices,
    Reference,
    distances,
    nearest,
    run_jobs,
    scores,
    smallest,
)
from recall_gui.core.inspect.projection import Cancelled, Progress, pca, sample_rows, tsne_threads
from recall_gui.core.session.map_cache import Method, Projection

#: Rows laid out by t-SNE; the others are placed from them.
SAMPLE_ROWS = 2_000
#: Neighbours per sampled row that t-SNE keeps together (uniform affinities: Böhm, Berens & Kobak 2022
#: show they give maps like perplexity 30).
SAMPLE_NEIGHBOURS = 15
#: Iterations of t-SNE's two phases (early exaggeration, then the rest): half of openTSNE's defaults,
#: which change the sample's map little at 2,000 rows (docs/PERFORMANCE_LOG.md#the-map).
EARLY_ITERATIONS = 125
ITERATIONS = 250
#: Nearest sampled rows a row is placed from.
PLACE_NEIGHBOURS = 5
#: Nearest rows a row is drawn toward, how far each step, how many steps.
GRAPH_NEIGHBOURS = 10
PULL = 0.8
PULL_STEPS = 3
#: About how many rows each row's neighbours are looked for among (whole cells of sampled rows).
GRAPH_CANDIDATES = 1_500
#: The most neighbouring cells searched besides a row's own.
MAX_PROBES = 8
#: The fewest rows a neighbour layout is made of; below it the PCA map is all there is to see.
MIN_LAYOUT_ROWS = SAMPLE_NEIGHBOURS + 2
_REPORT_EVERY_ITERATIONS = 10
_ROWS_PER_JOB = 2_048
#: Rows placed or moved in one step (bounds the memory of the step's temporaries).
_ROWS_PER_STEP = 65_536


def neighbour_layout(
    matrix: npt.NDArray[np.float32],
    metric: str,
    seed: int = 0,
    *,
    workers: Executor | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Projection:
    """The neighbour layout of the rows of ``matrix`` by ``metric`` (``l2``, ``cosine`` or ``dot``).

    Long products run on ``workers`` when given; ``progress(fraction, stage)`` hears how far it got;
    :class:`Cancelled` is raised soon after ``cancel`` is set."""
    rows = len(matrix)
    if rows < MIN_LAYOUT_ROWS:
        raise ProjectionError(
            f"a neighbour map needs at least {MIN_LAYOUT_ROWS} rows; this table has {rows}",
            hint="The PCA map shows every row.",
        )
    stop = cancel or threading.Event()
    say: Progress = progress or (lambda _fraction, _stage: None)
    reference = Reference.of(matrix, metric)
    usable = np.flatnonzero(np.isfinite(reference.per_row))  # cosine: rows of zero length have no place
    chosen = sample_rows(len(usable), SAMPLE_ROWS, seed)
    sample = usable if chosen is None else usable[chosen]
    weights = _stage_weights(rows, len(sample))
    stages = _Stages(say, weights)

    say(0.0, "finding the sampled rows' neighbours")
    sampled = Reference.of(matrix[sample], metric)
    near_sampled, _found = nearest(
        sampled.rows, sampled, SAMPLE_NEIGHBOURS, self_offset=0, workers=workers, cancel=stop
    )
    sample_places = _tsne(sampled.rows, near_sampled, seed, stages.report("tsne"), stop)
    method_note = f"t-SNE of {len(sample):,} rows ({metric})"
    if len(sample) == rows:
        return Projection(
            sample_places.astype(np.float32), "tsne", seed, how=method_note, sampled_rows=sample
        )

    work = _Work(matrix, reference, workers, stop)
    places, nearest_sampled = work.place(sample, sampled, sample_places, stages.report("place"))
    release_free_memory()  # each stage's short-lived arrays, before the next one's
    neighbours = work.neighbour_graph(sample, nearest_sampled, near_sampled, stages.report("graph"))
    release_free_memory()
    places = _drawn_together(places, neighbours, stop)
    if len(usable) < rows:  # rows of zero length (cosine): in the middle, apart from every neighbourhood
        others = np.ones(rows, bool)
        others[usable] = False
        places[others] = places[usable].mean(axis=0)
    say(1.0, "done")
    how = f"t-SNE of a {len(sample):,}-row sample, every other row placed from its nearest rows ({metric})"
    return Projection(places.astype(np.float32), "tsne", seed, how=how, sampled_rows=sample)


class _Stages:
    """Turns each stage's own 0..1 into the whole layout's fraction, by the stages' expected costs."""

    def __init__(self, say: Progress, weights: dict[str, float]) -> None:
        self.say = say
        total = sum(weights.values())
        self.spans: dict[str, tuple[float, float]] = {}
        start = 0.0
        for name, weight in weights.items():
            self.spans[name] = (start, start + weight / total)
            start += weight / total

    def report(self, name: str) -> Progress:
        start, end = self.spans[name]
        return lambda fraction, text: self.say(start + (end - start) * fraction, text)


def _stage_weights(rows: int, sampled: int) -> dict[str, float]:
    """Each stage's cost in seconds on one core, roughly (measured at 100k and 1M rows)."""
    rest = rows - sampled
    return {
        "tsne": 2.0,
        "place": rest * sampled * 1e-8,
        "graph": rows * min(GRAPH_CANDIDATES, rows) * 2.6e-8,
    }


def _tsne(
    sample: npt.NDArray[np.float32],
    neighbours: Indices,
    seed: int,
    report: Progress,
    cancel: threading.Event,
) -> npt.NDArray[np.float64]:
    """The t-SNE places of the sampled rows (openTSNE), from their exact nearest neighbours."""
    from openTSNE import TSNEEmbedding, affinity
    from openTSNE.nearest_neighbors import PrecomputedNeighbors
    from openTSNE.tsne import OptimizationInterrupt

    count = neighbours.shape[1]
    # Uniform affinities ignore the distances: ranks are what the exact search is trusted for.
    known = PrecomputedNeighbors(neighbours.astype(np.int64), np.ones(neighbours.shape, np.float64))
    affinities = affinity.Uniform(knn_index=known, k_neighbors=count, n_jobs=1)
    initial = pca(sample, seed).positions.astype(np.float64)
    scale = float(initial[:, 0].std()) or 1.0
    initial *= 1e-4 / scale  # openTSNE's own PCA initialisation: first axis with standard deviation 1e-4
    total = EARLY_ITERATIONS + ITERATIONS
    done = [0]

    def callback(_iteration: int, _error: float, _embedding: Any) -> bool:
        done[0] += _REPORT_EVERY_ITERATIONS
        report(min(1.0, done[0] / total), f"laying out the sample ({min(done[0], total)} of {total})")
        return cancel.is_set()

    embedding = TSNEEmbedding(
        initial,
        affinities,
        n_jobs=tsne_threads(),
        random_state=seed,
        callbacks=callback,
        callbacks_every_iters=_REPORT_EVERY_ITERATIONS,
    )
    try:
        embedding = embedding.optimize(
            EARLY_ITERATIONS, exaggeration=12, momentum=0.5, propagate_exception=True
        )
        embedding = embedding.optimize(ITERATIONS, momentum=0.8, propagate_exception=True)
    except OptimizationInterrupt:
        raise Cancelled from None
    return np.asarray(embedding, np.float64)


@dataclass(frozen=True)
class _Work:
    """What placing the rows and finding their neighbours share."""

    matrix: npt.NDArray[np.float32]
    reference: Reference
    workers: Executor | None
    cancel: threading.Event

    def place(
        self,
        sample: npt.NDArray[np.intp],
        sampled: Reference,
        sample_places: npt.NDArray[np.float64],
        report: Progress,
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.intp]]:
        """Every row's place from its nearest sampled rows, and the nearest sampled row of each row."""
        matrix = self.matrix
        rows = len(matrix)
        placed = np.ones(rows, bool)
        placed[sample] = False
        others = np.flatnonzero(placed)
        places = np.empty((rows, 2), np.float64)
        places[sample] = sample_places
        nearest_sampled = np.empty(rows, np.intp)
        nearest_sampled[sample] = np.arange(len(sample))
        found_at, found = nearest(
            matrix,
            sampled,
            PLACE_NEIGHBOURS,
            which=others,
            workers=self.workers,
            cancel=self.cancel,
            progress=lambda fraction: report(
                fraction, f"placing {len(others):,} rows by their nearest samples"
            ),
        )
        for start in range(0, len(others), _ROWS_PER_STEP):
            span = slice(start, start + _ROWS_PER_STEP)
            which = others[span]
            near = distances(self.reference.squares[which], found[span], sampled.metric)
            weights = placement_weights(near, sampled.metric)
            places[which] = np.einsum("nk,nkd->nd", weights, sample_places[found_at[span]])
        nearest_sampled[others] = found_at[:, 0]
        return places, nearest_sampled

    def neighbour_graph(
        self,
        sample: npt.NDArray[np.intp],
        nearest_sampled: npt.NDArray[np.intp],
        sample_neighbours: Indices,
        report: Progress,
    ) -> npt.NDArray[np.int32]:
        """Each row's :data:`GRAPH_NEIGHBOURS` nearest rows among the rows of its cell (the rows with the
        same nearest sampled row) and of the cells of that sampled row's nearest sampled rows."""
        matrix, reference, cancel = self.matrix, self.reference, self.cancel
        rows, cells = len(matrix), len(sample)
        order = np.argsort(nearest_sampled, kind="stable")
        starts = np.searchsorted(nearest_sampled[order], np.arange(cells + 1))
        probes = int(
            min(MAX_PROBES, sample_neighbours.shape[1], max(1, GRAPH_CANDIDATES * cells // rows - 1))
        )
        graph = np.empty((rows, GRAPH_NEIGHBOURS), np.int32)

        def job(span: tuple[int, int]) -> None:
            if cancel.is_set():
                raise Cancelled
            for cell in range(*span):
                members = order[starts[cell] : starts[cell + 1]]
                if not len(members):
                    continue
                around = (cell, *sample_neighbours[cell, :probes].tolist())
                candidates = np.concatenate([order[starts[c] : starts[c + 1]] for c in around])
                block = scores(np.asarray(matrix[members], np.float32), reference, candidates)
                own = np.arange(len(members))  # the cell's own rows come first among the candidates
                block[own, own] = np.inf
                take = min(GRAPH_NEIGHBOURS, len(candidates) - 1)
                if take > 0:
                    graph[members, :take] = candidates[smallest(block, take)[0]]
                graph[members, max(take, 0) :] = members[:, None]  # too few rows around: the row itself

        jobs = _cell_jobs(np.diff(starts))
        for done, _ in enumerate(run_jobs(job, jobs, self.workers), start=1):
            report(done / len(jobs), "finding each row's nearest rows")
        return graph


def placement_weights(found: npt.NDArray[np.float32], metric: str) -> npt.NDArray[np.float64]:
    """How much each nearest sampled row counts (rows of ``found``: the metric's distances, ascending):
    ``exp(-(d - d0) / (d0 / 2))`` with ``d0`` the nearest one's distance (for dot, whose distances may be
    negative, the spread of the distances instead), so a row equal to a sampled row lands on it."""
    near = found.astype(np.float64)
    first = near[:, :1]
    scale = first if metric != "dot" else near[:, -1:] - first
    scale = np.maximum(scale, 1e-12) / 2
    with np.errstate(over="ignore", invalid="ignore"):
        weights = np.exp(-(near - first) / scale)
    weights[~np.isfinite(weights)] = 0.0
    weights[:, 0] = np.where(np.isfinite(near[:, 0]), 1.0, weights[:, 0])
    total = weights.sum(axis=1, keepdims=True)
    return np.asarray(weights / np.where(total > 0, total, 1.0), np.float64)


def _cell_jobs(sizes: npt.NDArray[np.intp]) -> list[tuple[int, int]]:
    """Runs of consecutive cells with about :data:`_ROWS_PER_JOB` rows each (at least one cell)."""
    jobs, first, held = [], 0, 0
    for cell, size in enumerate(sizes.tolist()):
        held += size
        if held >= _ROWS_PER_JOB:
            jobs.append((first, cell + 1))
            first, held = cell + 1, 0
    if first < len(sizes):
        jobs.append((first, len(sizes)))
    return jobs


def _drawn_together(
    places: npt.NDArray[np.float64], graph: npt.NDArray[np.int32], cancel: threading.Event
) -> npt.NDArray[np.float64]:
    """:data:`PULL_STEPS` times, every row moves :data:`PULL` of the way to its neighbours' mean place."""
    for _ in range(PULL_STEPS):
        moved = np.empty_like(places)
        for start in range(0, len(places), _ROWS_PER_STEP):
            if cancel.is_set():
                raise Cancelled
            span = slice(start, start + _ROWS_PER_STEP)
            moved[span] = (1 - PULL) * places[span] + PULL * places[graph[span]].mean(axis=1)
        places = moved
    return places


def project(
    matrix: npt.NDArray[np.float32],
    method: Method,
    seed: int = 0,
    *,
    metric: str = "l2",
    workers: Executor | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Projection:
    """``matrix`` projected by ``method``: ``"pca"``, or ``"tsne"`` (the neighbour layout)."""
    if method == "pca":
        return pca(matrix, seed)
    if method == "tsne":
        return neighbour_layout(matrix, metric, seed, workers=workers, progress=progress, cancel=cancel)
    raise ProjectionError(f"unknown projection {method!r} (expected pca or tsne)")
