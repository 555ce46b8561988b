"""The reach report on Ray (``--engine ray``) is the local one, entry by entry, for both metrics; a table
the agent searches through an index is refused. On the one local Ray of the Ray tests (127.0.0.1)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.base.errors import RecallError
from recall_gui.core.ray.reach_ranking import rank_queries_on_ray
from recall_gui.core.reach.reach import find_reach
from recall_gui.core.reach.reach_report import ReachReport
from recall_gui.core.search.harness import Harness
from tests.core.test_cli import cli
from tests.kbtools import cosh_entry, snapshot_tree, write_registry
from tests.reachtools import NAME, Planted, write_planted


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Planted:
    return write_planted(tmp_path_factory.mktemp("planted-ray"), embedder)


def without_times(report: ReachReport) -> dict[str, Any]:
    data = report.to_dict()
    data.pop("seconds")
    return data


def both(registry: Path, name: str, limit: int) -> tuple[ReachReport, ReachReport]:
    async def go() -> tuple[ReachReport, ReachReport]:
        harness = Harness(registry)
        try:
            entry = harness.registry.get(name)
            assert entry is not None
            local = await find_reach(harness, entry, limit=limit, depth=8)
            on_ray = await find_reach(harness, entry, limit=limit, depth=8, ranker=rank_queries_on_ray)
            return local, on_ray
        finally:
            await harness.aclose()

    return asyncio.run(go())


@pytest.mark.ray
@pytest.mark.parametrize("metric", ["l2", "cosine"])
def test_ray_reach_is_the_local_report(
    ray_address: str,
    planted: Planted,
    tmp_path: Path,
    metric: str,
) -> None:
    entry = {**cosh_entry("notes-" + metric, planted.db_dir), "table": NAME, "metric": metric}
    registry = write_registry(tmp_path / "registry", [entry])
    before = snapshot_tree(planted.db_dir)
    local, on_ray = both(registry, "notes-" + metric, 2)
    assert without_times(on_ray) == without_times(local)
    assert local.metric == metric and len(local.unreachable) >= 5
    assert snapshot_tree(planted.db_dir) == before


@pytest.mark.ray
def test_ray_measures_near_ties_as_the_drivers_verdict_says_as_the_local_engine_does(
    ray_address: str, tmp_path: Path
) -> None:
    """Near-ties come out in the order of the measure the driver's self-test chose, on Ray as locally:
    here a verdict that a summation LanceDB does not use holds, so that both leave LanceDB's order."""
    from recall_gui.core.reach.reach_search import rank_queries
    from recall_gui.core.session.lance_arithmetic import LanceArithmetic
    from recall_gui.core.session.lance_distance import Measure
    from recall_gui.core.session.session import Session
    from recall_gui.core.storage.target import TableOptions, TableTarget
    from tests.core.test_lance_arithmetic import summed_backwards
    from tests.core.test_lance_order import METRICS, lance_search, near_ties, write_table

    class BackwardsHolds(LanceArithmetic):
        def measure(self) -> Measure:
            return summed_backwards

    rng = np.random.default_rng(16)
    bases = rng.standard_normal((3, 384)).astype(np.float32)
    write_table(tmp_path / "db", "ties", near_ties(bases, rng, nudged=12))
    queries = np.stack([bases[0], bases[1] + np.float32(1e-3) * rng.standard_normal(384).astype(np.float32)])

    async def ranked(metric: str) -> tuple[Any, Any]:
        async with Session() as session:
            session.arithmetic = BackwardsHolds(tmp_path / "cache")
            options = TableOptions(metric=metric)
            opened = await session.tables.open(TableTarget(str(tmp_path / "db"), "ties", options))
            asked = {"limit": 10, "depth": 30, "options": options}
            local = await rank_queries(session, opened, queries, None, **asked)
            return local, await rank_queries_on_ray(session, opened, queries, None, **asked)

    left_lancedbs_order = []
    for metric in METRICS:
        local, on_ray = asyncio.run(ranked(metric))
        assert [rows.tolist() for rows in on_ray.results] == [rows.tolist() for rows in local.results], metric
        for number, query in enumerate(queries):
            expected, _ = lance_search(tmp_path / "db", "ties", query, metric, 10)
            left_lancedbs_order.append(local.results[number].tolist() != expected)
    assert any(left_lancedbs_order)  # the premise: the measure given decides the order


@pytest.mark.process
@pytest.mark.ray
def test_reach_command_on_ray_prints_the_local_json(ray_address: str, planted: Planted) -> None:
    common = ("reach", "--registry", str(planted.registry_dir), "--db", NAME, "--limit", "1", "--json")
    local = cli(*common)
    on_ray = cli(*common, "--engine", "ray", "--ray-address", ray_address)
    assert (on_ray.returncode, local.returncode) == (1, 1), on_ray.stderr
    first, second = json.loads(local.stdout), json.loads(on_ray.stdout)
    first.pop("seconds"), second.pop("seconds")
    assert first == second


@pytest.mark.ray
def test_ray_refuses_a_table_searched_through_an_index(
    ray_address: str,
    tmp_path: Path,
    embedder: Any,
) -> None:
    import lancedb
    from lancedb.index import IvfFlat

    planted = write_planted(tmp_path, embedder)
    table = lancedb.connect(str(planted.db_dir)).open_table(NAME)
    table.create_index("vector", config=IvfFlat(distance_type="l2", num_partitions=2))

    async def go() -> None:
        harness = Harness(planted.registry_dir)
        try:
            entry = harness.registry.get(NAME)
            assert entry is not None
            await find_reach(harness, entry, limit=1, ranker=rank_queries_on_ray)
        finally:
            await harness.aclose()

    with pytest.raises(RecallError, match="through its index"):
        asyncio.run(go())


def unbounded_table(root: Path, passage_vectors: Any, kind: str) -> Path:
    """The passages and one row whose vector holds an infinity, or is too long for float32's squares
    (1e30 times a passage's); registered as ``t``."""
    import lancedb
    import numpy as np
    import pyarrow as pa

    from tests.kbtools import PASSAGES

    vectors = np.asarray(passage_vectors, np.float32)
    odd = vectors[3].copy()
    if kind == "infinite":
        odd[0] = np.inf
    else:
        odd *= np.float32(1e30)
    matrix = np.vstack([vectors, odd])
    table = pa.table(
        {
            "id": [*PASSAGES, kind],
            "content": [*PASSAGES.values(), "Berlin is the capital and largest city of Germany, oddly."],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1]),
        }
    )
    lancedb.connect(str(root / "db")).create_table("t", table)
    return write_registry(root / "registry", [cosh_entry("t", root / "db")])


@pytest.mark.ray
@pytest.mark.parametrize("kind", ["infinite", "huge"])
def test_ray_says_in_one_clean_line_why_it_cannot_rank_unbounded_vectors(
    ray_address: str,
    tmp_path: Path,
    passage_vectors: Any,
    kind: str,
) -> None:
    """The local engine answers (LanceDB's own search ranks such a row); Ray, which ranks exactly, says
    why it cannot in the words `duplicates --engine ray` uses for the same cause: no Ray log lines, no
    retry advice, no hint about nodes."""
    registry = unbounded_table(tmp_path, passage_vectors, kind)
    common = ("--registry", str(registry), "--db", "t")
    local = cli("reach", *common)
    # Without a terminal, stderr carries only the entries found out of reach as they are found.
    assert local.returncode in (0, 1), local.stderr
    assert all(line.startswith("out of reach: ") for line in local.stderr.splitlines()), local.stderr
    on_ray = cli("reach", *common, "--engine", "ray", "--ray-address", ray_address)
    assert on_ray.returncode == 2 and on_ray.stdout == ""
    said = "error: some vectors hold infinite (or huge) values: their distances are not defined"
    assert on_ray.stderr == (
        f"{said}\nhint: Run it with --engine local: the agent's own search (LanceDB's) ranks them there.\n"
    )
    duplicates = cli("duplicates", *common, "--engine", "ray", "--ray-address", ray_address)
    assert duplicates.returncode == 2 and duplicates.stderr.splitlines()[0] == said


def test_a_ray_tasks_own_error_is_said_in_its_words_and_any_other_in_one_line() -> None:
    """What Ray hands back for a failed task (its own exception types, as Ray builds them)."""
    pytest.importorskip("ray")
    from ray.exceptions import RayTaskError

    from recall_gui.core.ray.duplicate_engine import NODE_HINT, RayJobError, UnboundedVectors, job_error

    advice = "Failed to apply UDF transform after 1/1 attempts.\nTo change retry attempts, configure …"
    ours = RayTaskError("MapBatches(f)", advice, UnboundedVectors()).as_instanceof_cause()
    said = job_error(ours, "/db/t.lance")
    assert type(said) is UnboundedVectors and said.message == UnboundedVectors().message
    other = RayTaskError("MapBatches(f)", advice, ValueError("bad block\nmore")).as_instanceof_cause()
    said = job_error(other, "/db/t.lance")
    assert isinstance(said, RayJobError)
    assert said.message == "the Ray job on /db/t.lance failed: ValueError: bad block"
    assert said.hint == NODE_HINT
    driver = OSError("disk")
    assert job_error(driver, "/db/t.lance") is driver
