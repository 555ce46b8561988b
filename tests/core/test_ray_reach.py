"""The reach report on Ray (``--engine ray``) is the local one, entry by entry, for both metrics; a table
the agent searches through an index is refused. On the one local Ray of the Ray tests (127.0.0.1)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.agents.ray_reach import rank_queries_on_ray
from recall_gui.core.agents.reach import find_reach
from recall_gui.core.agents.reach_report import ReachReport
from recall_gui.core.base.errors import RecallError
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
