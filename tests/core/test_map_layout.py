"""The map's neighbour layout against NumPy: each row's nearest rows found exactly by every metric, every
row placed from its exact nearest sampled rows, drawing rows toward their nearest rows keeping more of
each row's neighbourhood on the map, the lasso's test, finding the point under the pointer, the agent's
metric, a cache folder that cannot keep a map, a kept map counting the rows it was made from as the fresh
one did, and a knowledge base that stays untouched."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.session.session import Session
from tests.kbtools import perturbed_target, snapshot_tree

METRICS = ("l2", "cosine", "dot")


def clustered(rows: int, dim: int = 24, clusters: int = 30, seed: int = 5) -> np.ndarray[Any, Any]:
    """Rows around random centres: distinct distances (no ties) and neighbourhoods worth keeping."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim))
    rows_of = rng.integers(0, clusters, rows)
    return (centres[rows_of] + 0.35 * rng.normal(size=(rows, dim))).astype(np.float32)


def numpy_distances(queries: np.ndarray[Any, Any], rows: np.ndarray[Any, Any], metric: str) -> Any:
    """The metric's distance of every query to every row, in float64 (inf: no distance)."""
    q, r = queries.astype(np.float64), rows.astype(np.float64)
    if metric == "l2":
        return ((q[:, None, :] - r[None, :, :]) ** 2).sum(axis=2)
    if metric == "dot":
        return 1 - q @ r.T
    lengths = np.linalg.norm(r, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        found = 1 - (q @ r.T) / (np.linalg.norm(q, axis=1)[:, None] * lengths[None, :])
    found[:, lengths == 0] = np.inf
    return found


def kept_share(matrix: np.ndarray[Any, Any], positions: np.ndarray[Any, Any], k: int = 10) -> float:
    """The mean share of each row's k nearest rows in vector space among its k nearest on the map."""
    apart = numpy_distances(matrix, matrix, "l2")
    np.fill_diagonal(apart, np.inf)
    on_map = ((positions[:, None, :].astype(np.float64) - positions[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(on_map, np.inf)
    near = np.argsort(apart, axis=1)[:, :k]
    near_on_map = np.argsort(on_map, axis=1)[:, :k]
    return float(np.mean([len(set(a) & set(b)) / k for a, b in zip(near, near_on_map, strict=True)]))


@pytest.mark.parametrize("metric", METRICS)
def test_each_rows_nearest_rows_are_the_exact_ones_numpy_finds(metric: str) -> None:
    from recall_gui.core.inspect.neighbours import Reference, distances, nearest

    reference_rows = clustered(700, seed=1)
    reference_rows[17] = 0  # no cosine distance: never anyone's neighbour by cosine
    queries = clustered(900, seed=2)
    reference = Reference.of(reference_rows, metric)
    with ThreadPoolExecutor(2) as workers:
        found, scores = nearest(queries, reference, 7, workers=workers)
    alone, _ = nearest(queries, reference, 7)
    expected = numpy_distances(queries, reference_rows, metric)
    best = np.argsort(expected, axis=1, kind="stable")[:, :7]
    assert np.array_equal(found, alone)
    assert np.array_equal(found, best)
    got = distances(np.einsum("ij,ij->i", queries, queries), scores, metric)
    assert np.allclose(got, np.take_along_axis(expected, best, axis=1), rtol=1e-4, atol=1e-4)
    # Rows among themselves: none is its own neighbour.
    own, _ = nearest(reference_rows, reference, 5, self_offset=0)
    among = numpy_distances(reference_rows, reference_rows, metric)
    np.fill_diagonal(among, np.inf)
    usable = np.isfinite(among).sum(axis=1) >= 5
    assert np.array_equal(own[usable], np.argsort(among, axis=1, kind="stable")[usable, :5])


@pytest.mark.process
@pytest.mark.parametrize("metric", ("l2", "cosine"))
def test_every_other_row_is_placed_from_its_exact_nearest_sampled_rows(
    metric: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_gui.core.inspect import layout

    monkeypatch.setattr(layout, "SAMPLE_ROWS", 300)
    monkeypatch.setattr(layout, "PULL_STEPS", 0)  # the places before rows are drawn toward their neighbours
    matrix = clustered(2_400)
    matrix[1::10] = matrix[0::10]  # every tenth row twice: a copy of a sampled row lands on it
    made = layout.neighbour_layout(matrix, metric, 3)
    sample = made.sampled_rows
    assert sample is not None and len(sample) == 300
    others = np.setdiff1d(np.arange(len(matrix)), sample)
    apart = numpy_distances(matrix[others], matrix[sample], metric)
    nearest = np.argsort(apart, axis=1, kind="stable")[:, : layout.PLACE_NEIGHBOURS]
    near = np.take_along_axis(apart, nearest, axis=1)
    # The documented weights: exp(-(d - d0) / (d0 / 2)), from NumPy's distances.
    scale = np.maximum(near[:, :1], 1e-12) / 2
    weights = np.exp(-(near - near[:, :1]) / scale)
    weights /= weights.sum(axis=1, keepdims=True)
    expected = np.einsum("nk,nkd->nd", weights, made.positions[sample][nearest].astype(np.float64))
    assert np.allclose(made.positions[others], expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max())
    copies = [(row, row + 1) for row in range(0, len(matrix), 10) if row in set(sample.tolist())]
    copies = [pair for pair in copies if pair[1] not in set(sample.tolist())]
    assert copies and all(np.allclose(made.positions[a], made.positions[b], atol=1e-4) for a, b in copies)


@pytest.mark.slow
def test_rows_drawn_toward_their_nearest_rows_keep_more_of_their_neighbours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recall_gui.core.inspect import layout

    monkeypatch.setattr(layout, "SAMPLE_ROWS", 200)
    matrix = clustered(2_000, clusters=12)
    drawn = layout.neighbour_layout(matrix, "l2", 0)
    monkeypatch.setattr(layout, "PULL_STEPS", 0)
    placed = layout.neighbour_layout(matrix, "l2", 0)
    assert kept_share(matrix, drawn.positions) > 1.25 * kept_share(matrix, placed.positions)
    assert "200-row sample" in drawn.how and "(l2)" in drawn.how


def test_a_layout_stops_soon_after_it_is_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    from recall_gui.core.inspect import layout
    from recall_gui.core.inspect.projection import Cancelled

    monkeypatch.setattr(layout, "SAMPLE_ROWS", 200)
    cancel = threading.Event()
    stages: list[str] = []

    def progress(_fraction: float, stage: str) -> None:
        stages.append(stage)
        if stage.startswith("placing"):
            cancel.set()

    with pytest.raises(Cancelled):
        layout.neighbour_layout(clustered(3_000), "l2", 0, progress=progress, cancel=cancel)
    assert not any(stage.startswith("finding each row's nearest rows") for stage in stages)


def test_the_lasso_keeps_the_points_inside_by_the_even_odd_rule() -> None:
    from recall_gui.core.inspect.projection import within

    rng = np.random.default_rng(4)
    points = rng.uniform(-1, 1, size=(3_000, 2)).astype(np.float32)
    angles = np.sort(rng.uniform(0, 2 * np.pi, 40))
    radii = rng.uniform(0.3, 1.0, 40)
    polygon = [(float(r * np.cos(a)), float(r * np.sin(a))) for r, a in zip(radii, angles, strict=True)]
    polygon += [(0.5, 0.5), (-0.2, 0.1)]  # crossing edges: the even-odd rule decides
    expected = []
    for x, y in points.astype(np.float64).tolist():  # a ray to the right crosses the outline an odd time
        crossings = 0
        for (x1, y1), (x2, y2) in zip(polygon, polygon[1:] + polygon[:1], strict=True):
            if (y1 > y) != (y2 > y) and x < (x2 - x1) * (y - y1) / (y2 - y1) + x1:
                crossings += 1
        expected.append(crossings % 2 == 1)
    inside = within(points, polygon)
    assert inside.tolist() == expected and 0 < inside.sum() < len(points)


def test_the_point_under_the_pointer_is_found_among_many_as_one_pass_finds_it() -> None:
    from recall_gui.core.inspect.table_map import FINDER_POINTS, TableMap, _with_finder
    from recall_gui.core.session.map_cache import Projection

    rows = FINDER_POINTS + 10_000
    positions = np.random.default_rng(6).normal(size=(rows, 2)).astype(np.float32)
    plain = TableMap("t", 1, Projection(positions, "tsne", 0), np.arange(rows, dtype=np.uint64), rows, False)
    indexed = _with_finder(plain)
    assert plain.finder is None and indexed.finder is not None
    for x, y in np.random.default_rng(7).normal(size=(200, 2)).tolist():
        for scale_x, scale_y in ((1e-3, 1e-3), (2e-3, 5e-4)):
            assert indexed.nearest(x, y, scale_x, scale_y, 6) == plain.nearest(x, y, scale_x, scale_y, 6)


@pytest.fixture
def table(tmp_path: Path, passage_vectors: Any) -> Any:
    return perturbed_target(tmp_path, passage_vectors)


def test_the_map_finds_neighbours_by_the_agents_metric(table: Any) -> None:
    import dataclasses

    from recall_gui.core.inspect.table_map import build_map

    async def go() -> tuple[Any, Any]:
        async with Session() as session:
            by_default = await build_map(session, table, "tsne")
            cosine = dataclasses.replace(table, options=dataclasses.replace(table.options, metric="cosine"))
            return by_default, await build_map(session, cosine, "tsne")

    by_default, by_cosine = asyncio.run(go())
    assert by_default.metric == "l2" and by_default.how.endswith("(l2)")
    assert by_cosine.metric == "cosine" and by_cosine.how.endswith("(cosine)")
    # The passages' vectors have unit length: cosine and L2 rank their neighbours alike, so the maps agree.
    assert np.allclose(by_default.positions, by_cosine.positions, atol=1e-3)


def test_a_map_the_cache_folder_cannot_keep_is_made_and_says_why(table: Any, tmp_path: Path) -> None:
    from recall_gui.core.inspect.table_map import build_map
    from recall_gui.core.session.map_cache import MapCache

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be", encoding="utf-8")

    async def go() -> tuple[Any, Any]:
        async with Session() as session:
            session.maps = MapCache(blocker / "maps")
            made = await build_map(session, table, "tsne")
            return made, await build_map(session, table, "tsne")

    made, again = asyncio.run(go())
    assert len(made) == 240 and "cannot be written" in made.not_kept and str(blocker) in made.not_kept
    assert again.from_cache and np.array_equal(again.positions, made.positions)  # kept in memory still
    assert blocker.read_text(encoding="utf-8").startswith("a file")


@pytest.fixture
def with_a_nan_row(tmp_path: Path, passage_vectors: Any) -> Any:
    """A table of 40 rows whose row 7 has a NaN in its vector (no place on a map: 39 rows are mapped).
    LanceDB's Python API refuses to write one; Lance itself, as other writers, does."""
    import lance
    import lancedb
    import pyarrow as pa

    from recall_gui.core.storage.target import TableTarget

    made = perturbed_target(tmp_path / "made", passage_vectors, rows=40)
    rows = lancedb.connect(made.uri).open_table(made.table_name).to_arrow()
    vectors = np.stack(rows.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)
    vectors[7, 3] = np.nan
    column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), vectors.shape[1])
    rows = rows.set_column(rows.schema.get_field_index("vector"), "vector", column)
    lance.write_dataset(rows, str(tmp_path / "db" / "nan.lance"))
    return TableTarget(str(tmp_path / "db"), "nan")


@pytest.mark.parametrize("keep_vectors", [True, False], ids=["vectors-in-memory", "vectors-read"])
def test_a_kept_map_counts_its_rows_as_the_fresh_one_did(
    with_a_nan_row: Any, tmp_path: Path, keep_vectors: bool
) -> None:
    from recall_gui.core.inspect.table_map import build_map, kept_map
    from recall_gui.core.session.map_cache import MapCache

    async def go() -> tuple[Any, ...]:
        async with Session(keep_vectors=keep_vectors) as session:
            session.maps = MapCache(tmp_path / "maps")
            fresh = await build_map(session, with_a_nan_row, "tsne")
            in_memory = await kept_map(session, with_a_nan_row, "tsne")
        async with Session(keep_vectors=keep_vectors) as session:
            session.maps = MapCache(tmp_path / "maps")
            return fresh, in_memory, await kept_map(session, with_a_nan_row, "tsne")

    fresh, in_memory, on_disk = asyncio.run(go())
    assert len(fresh) == 39 and fresh.total_rows == 39 and not fresh.sampled
    for kept in (in_memory, on_disk):
        assert kept is not None and kept.from_cache
        assert kept.total_rows == 39 and not kept.sampled and kept.describe() == fresh.describe()


def test_making_maps_writes_nothing_to_the_knowledge_base(table: Any) -> None:
    from recall_gui.core.inspect.table_map import build_map, colour_by, point_labels

    folder = Path(table.uri)
    before = snapshot_tree(folder)

    async def go() -> None:
        async with Session() as session:
            for method in ("pca", "tsne"):
                made = await build_map(session, table, method)
                await colour_by(session, table, made, "id")
                await point_labels(session, table, [int(row) for row in made.row_ids[:5]])

    asyncio.run(go())
    assert snapshot_tree(folder) == before
