"""The Ray engine (``--engine ray``): near-duplicate groups and golden-check outcomes equal the local
engine's, the partition plan loses no pair, nothing is written, and without the ``scale`` extra the command
says what to install. The run's local Ray of one core serves every test here (``-m ray`` runs just these)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.golden.checks import run_checks
from recall_gui.core.golden.golden import read_golden
from recall_gui.core.inspect.duplicates import find_duplicates
from recall_gui.core.ray.partitions import assign, kmeans, reach_of, unit_rows
from recall_gui.core.search.harness import Harness
from recall_gui.core.session.session import Session
from tests.core.test_check_command import golden
from tests.core.test_cli import cli
from tests.core.test_duplicates import brute_force_pairs, components, planted  # noqa: F401 (a fixture)
from tests.kbtools import PASSAGES, KnowledgeBase, cosh_entry, snapshot_tree, write_registry
from tests.waiting import wait_until

INSTALL = "pip install 'recall-gui[scale]'"


def with_zero_vectors(kb: KnowledgeBase, db_dir: Path) -> KnowledgeBase:
    """The planted rows and two zero vectors, written in two appends (two fragments, the second first)."""
    import lancedb
    import pyarrow as pa

    ids = (*kb.ids, "zero-a", "zero-b")
    contents = (*kb.contents, "nothing", "nothing either")
    vectors = np.vstack([kb.vectors, np.zeros((2, kb.vectors.shape[1]), np.float32)])
    half = len(ids) // 2

    def rows(part: slice) -> Any:
        return pa.table(
            {
                "id": pa.array(ids[part], pa.utf8()),
                "content": pa.array(contents[part], pa.utf8()),
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(vectors[part].ravel()), vectors.shape[1]
                ),
            }
        )

    table = lancedb.connect(str(db_dir)).create_table(kb.name, rows(slice(half, None)))
    table.add(rows(slice(0, half)))
    order = [*range(half, len(ids)), *range(half)]  # the table's order: the second half written first
    registry = write_registry(db_dir.parent / "registry-zero", [cosh_entry(kb.name, db_dir)])
    return KnowledgeBase(
        kb.name,
        db_dir,
        registry,
        tuple(ids[i] for i in order),
        tuple(contents[i] for i in order),
        vectors[order],
    )


@pytest.mark.process
@pytest.mark.ray
@pytest.mark.parametrize(("metric", "threshold"), [("cosine", 0.05), ("l2", 0.10)])
def test_ray_groups_are_the_local_engines_and_a_brute_forces(
    ray_address: str,
    planted: tuple[KnowledgeBase, dict[str, set[str]]],  # noqa: F811
    session: Session,
    tmp_path: Path,
    metric: str,
    threshold: float,
) -> None:
    """Copies, noisy copies, re-embedded edits and two zero vectors in two fragments, split into 3
    partitions (so rows are guests): the same groups in the same order, with the same entries, and the
    same rows left out, as the local engine, and the groups of NumPy's all-pairs distances."""
    from recall_gui.core.ray.duplicate_engine import find_duplicates_on_ray

    kb = with_zero_vectors(planted[0], tmp_path / "zero-db")
    before = snapshot_tree(kb.db_dir)
    local = asyncio.run(find_duplicates(session, kb.target, metric=metric, threshold=threshold))
    found = asyncio.run(
        find_duplicates_on_ray(session, kb.target, metric=metric, threshold=threshold, partitions=3)
    )
    on_ray = found.report
    assert on_ray.to_dict() == local.to_dict()
    assert [group.entries for group in on_ray.groups] == [group.entries for group in local.groups]
    assert (on_ray.rows, on_ray.pairs, on_ray.left_out) == (local.rows, local.pairs, local.left_out)
    assert on_ray.left_out == (2 if metric == "cosine" else 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pairs = brute_force_pairs(kb.vectors, threshold, metric)
    if metric == "cosine":  # zero vectors have no cosine distance: they join no group
        zero = set(np.flatnonzero(~kb.vectors.any(axis=1)).tolist())
        pairs = {(a, b) for a, b in pairs if a not in zero and b not in zero}
    oracle = components(pairs)
    assert {frozenset(kb.ids.index(i) for i in group.ids) for group in on_ray.groups} == oracle
    assert len(found.plan.held) == 3 and sum(found.plan.home) == len(kb.ids) - on_ray.left_out
    assert snapshot_tree(kb.db_dir) == before


@pytest.mark.ray
def test_a_ray_job_cancelled_after_its_sample_stops_and_ray_still_serves(
    ray_address: str,
    planted: tuple[KnowledgeBase, dict[str, set[str]]],  # noqa: F811
    session: Session,
) -> None:
    """Cancelled once it reports progress: the awaiting task ends cancelled, the job's thread stops at
    its next step, and the next job on the same Ray answers."""
    from recall_gui.core.ray.check_tasks import run_checks_on_ray
    from recall_gui.core.ray.duplicate_engine import find_duplicates_on_ray

    kb, _expected = planted

    async def cancel_once_started() -> list[float]:
        shares: list[float] = []
        started = asyncio.Event()

        def progress(share: float) -> None:
            shares.append(share)
            started.set()

        task = asyncio.ensure_future(
            find_duplicates_on_ray(session, kb.target, partitions=3, on_progress=progress)
        )
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return shares

    shares = asyncio.run(cancel_once_started())
    assert shares and shares[-1] < 1.0
    wait_until(
        lambda: not any(thread.name == "recall-ray-job" for thread in threading.enumerate()),
        "the cancelled job's thread stops",
        timeout=120,
    )
    check = read_golden(
        golden(kb.db_dir.parent, [{"db_name": kb.name, "query": "capital of France", "expect": ["paris"]}])
    ).checks
    assert asyncio.run(run_checks_on_ray(kb.registry_dir, check)).passed == 1


@pytest.mark.parametrize(
    ("metric", "threshold"), [("l2", 0.3), ("l2", 1.0), ("cosine", 0.01), ("cosine", 0.03)]
)
@pytest.mark.slow
def test_every_pair_within_the_threshold_meets_in_some_partition(metric: str, threshold: float) -> None:
    """The guest rule is exact: 2,000 clustered rows, 8 partitions, each brute-force pair shares one."""
    rng = np.random.default_rng(5)
    centres = rng.standard_normal((40, 16))
    vectors = (centres[rng.integers(0, 40, 2000)] + rng.normal(0, 0.15, (2000, 16))).astype(np.float32)
    rows = unit_rows(vectors) if metric == "cosine" else vectors
    centroids = kmeans(rows[rng.choice(2000, 500, replace=False)], 8, seed=1)
    _home, held = assign(rows, centroids, reach_of(threshold, metric))
    where = np.zeros((2000, len(centroids)), bool)
    for j, members in enumerate(held):
        where[members, j] = True
    pairs = brute_force_pairs(vectors, threshold, metric)
    assert pairs, "the data has pairs within the threshold"
    assert all((where[a] & where[b]).any() for a, b in pairs)
    assert where.sum() < 2000 * len(centroids)  # not every row everywhere: the partitions do split


@pytest.mark.parametrize("metric", ["cosine", "l2"])
def test_a_partition_compares_only_pairs_with_a_row_at_home(metric: str) -> None:
    """``first_rows``: the pairs of a brute force whose first row is among the first rows (tiles of 3 x 5
    rows, so the cut falls inside a tile), and no pair of two later rows."""
    from recall_gui.core.inspect.near_duplicates import GroupFinder
    from recall_gui.core.session.exact import VectorMatrix

    rng = np.random.default_rng(9)
    vectors = (rng.standard_normal((6, 8))[rng.integers(0, 6, 40)] + rng.normal(0, 0.1, (40, 8))).astype(
        np.float32
    )
    threshold = 0.2 if metric == "l2" else 0.01
    finder = GroupFinder(
        VectorMatrix.build(vectors, np.arange(40, dtype=np.uint64)),
        threshold,
        metric,
        tile_rows=3,
        tile_columns=5,
        keep_pairs=True,
        first_rows=17,
    )
    while not finder.done:
        finder.step()
    first, second = finder.close_pairs()
    expected = {(a, b) for a, b in brute_force_pairs(vectors, threshold, metric) if a < 17}
    assert len(expected) > 5
    assert set(zip(first.tolist(), second.tolist(), strict=True)) == expected


def checks_of_two_databases(make_kb: Any, tmp_path: Path) -> tuple[Path, Path]:
    notes, more = make_kb("notes"), make_kb("more")
    registry = write_registry(
        tmp_path / "both", [cosh_entry("notes", notes.db_dir), cosh_entry("more", more.db_dir)]
    )
    queries = list(PASSAGES.values())[:6]
    checks = [
        {"db_name": name, "query": text[:60], "expect": [list(PASSAGES)[n]], "limit": 3}
        for n, text in enumerate(queries)
        for name in ("notes", "more")
    ]
    checks.append({"db_name": "missing", "query": "anything", "expect": ["x"]})
    return registry, golden(tmp_path, checks)


@pytest.mark.ray
def test_ray_check_outcomes_are_the_local_ones(ray_address: str, make_kb: Any, tmp_path: Path) -> None:
    """Two databases (a task each) and an unknown one: the same JSON as the local run, check by check."""
    from recall_gui.core.ray.check_tasks import run_checks_on_ray

    registry, path = checks_of_two_databases(make_kb, tmp_path)
    checks = read_golden(path).checks

    async def local() -> Any:
        harness = Harness(registry)
        try:
            return await run_checks(harness, checks)
        finally:
            await harness.aclose()

    seen: list[tuple[int, int]] = []
    expected = asyncio.run(local()).to_dict()
    on_ray = asyncio.run(run_checks_on_ray(registry, checks, lambda done, total: seen.append((done, total))))
    assert json.dumps(on_ray.to_dict(), sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert expected["passed"] >= 10 and expected["errors"] == 1
    assert seen[-1] == (len(checks), len(checks))


@pytest.mark.process
@pytest.mark.ray
def test_the_commands_on_ray_print_what_the_local_engine_prints_and_write_nothing(
    ray_address: str,
    planted: tuple[KnowledgeBase, dict[str, set[str]]],  # noqa: F811
    make_kb: Any,
    tmp_path: Path,
) -> None:
    kb, _expected = planted
    before = snapshot_tree(kb.db_dir)
    common = ("duplicates", "--registry", str(kb.registry_dir), "--db", kb.name, "--json")
    local = cli(*common)
    on_ray = cli(*common, "--engine", "ray", "--ray-address", ray_address, "--partitions", "2")
    assert local.returncode == 0 and on_ray.returncode == 0, on_ray.stderr
    assert json.loads(on_ray.stdout) == json.loads(local.stdout)
    assert len(json.loads(local.stdout)["groups"]) >= 5
    assert snapshot_tree(kb.db_dir) == before

    registry, path = checks_of_two_databases(make_kb, tmp_path)
    local = cli("check", "--registry", str(registry), "--json", str(path))
    on_ray = cli(
        "check",
        "--registry",
        str(registry),
        "--json",
        "--engine",
        "ray",
        "--ray-address",
        ray_address,
        str(path),
    )
    assert (on_ray.returncode, on_ray.stdout) == (local.returncode, local.stdout), on_ray.stderr


#: Runs the command line with Ray made unimportable, as where the scale extra is not installed.
WITHOUT_RAY = "import sys; sys.modules['ray'] = None; from recall_gui.cli import main; sys.exit(main())"


@pytest.mark.process
@pytest.mark.parametrize("command", ["duplicates", "check"])
def test_without_the_scale_extra_the_ray_engine_says_what_to_install(
    kb: KnowledgeBase, tmp_path: Path, command: str
) -> None:
    import subprocess

    args = ["--registry", str(kb.registry_dir), "--engine", "ray"]
    if command == "duplicates":
        args += ["--db", kb.name]
    else:
        args.append(str(golden(tmp_path, [{"db_name": kb.name, "query": "x", "expect": ["paris"]}])))
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_RAY, command, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "--engine ray needs ray[data]" in done.stderr and INSTALL in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.process
def test_a_ray_address_with_the_local_engine_is_refused(kb: KnowledgeBase) -> None:
    done = cli(
        "duplicates", "--registry", str(kb.registry_dir), "--db", kb.name, "--ray-address", "ray://h:1"
    )
    assert done.returncode != 0
    assert "--ray-address is for --engine ray" in done.stderr


def test_quieting_ray_leaves_every_handler_but_rays_own_as_it_was(caplog: pytest.LogCaptureFixture) -> None:
    """pytest puts its capture handlers on the loggers that do not propagate, as Ray's do. Quieting Ray
    Data's terminal lines when Ray starts quiets Ray's own handler only: it once set pytest's above
    CRITICAL too, and no later test of that worker captured a log record."""
    import io
    import logging

    import ray.data  # noqa: F401 (Ray Data's loggers and their handlers)

    from recall_gui.core.ray.cluster import _quiet

    logger = logging.getLogger("ray.data")
    mine = logging.StreamHandler(io.StringIO())
    logger.addHandler(mine)
    rays = [handler for handler in logger.handlers if type(handler).__name__ == "PlainRayHandler"]
    levels = {name: logging.getLogger(name).level for name in ("ray", "ray.data")}
    before = {handler: handler.level for handler in rays}
    try:
        _quiet(verbose=False)
        assert rays and all(handler.level == logging.CRITICAL + 1 for handler in rays)
        assert (mine.level, caplog.handler.level) == (logging.NOTSET, logging.NOTSET)
        logging.getLogger("recall_gui.tests").warning("still heard")
        assert "still heard" in caplog.text
    finally:
        logger.removeHandler(mine)
        for handler, level in before.items():
            handler.setLevel(level)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
