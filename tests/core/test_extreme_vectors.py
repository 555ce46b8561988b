"""Vectors too short or too long for float32 are ranked as LanceDB's flat search ranks them, everywhere.

Three tables of the packaged model's width, written with LanceDB, searched for one query embedded with
the packaged model; LanceDB's own flat search is the oracle of every answer:

- "tiny": 30 rows of components about 1e-39 (their float32 squared length is 0) and 3 passages. LanceDB's
  cosine distance is -inf for the tiny rows pointing the query's way, +inf for the others;
- "huge": 10 rows of components about 7e17 (their float32 squared length is near float32's largest) and
  3 passages: LanceDB's l2 distance between two of them overflows to +inf, and it keeps them, last;
- "overflow": 10 rows of components about 1e19 (their float32 squared length overflows) and 3 passages:
  LanceDB's l2 distance to them is +inf. Exact search in memory refuses such a table (its searches are
  LanceDB's flat scan), but its kernel ranks them as LanceDB does;
- "faint": 30 rows near the query's direction, components about 1e-23 (their squared components are
  float32 subnormals), and 3 passages: LanceDB's cosine distances are finite but far from the exact ones
  (negative even), and the int8 scan's bound, which covered rounding only, lost the nearest row.

Each is registered under several metrics (the registry entry's ``metric``), and searched through the core
(int8 codes, the float32 matrix, LanceDB's flat scan), "more like this", hubs, the MCP server, and the
commands ``search``, ``rank``, ``check``, ``shadowing`` and ``health``. Every JSON printed is strict JSON
(RFC 8259): a distance that is not finite is a string.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.base.types import RecallSearchInput
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.nearest import search_hits
from recall_gui.core.session.exact import nearest_rows, nearest_rows_many
from recall_gui.core.session.exact_rank import rank_of, ranked_rows
from recall_gui.core.session.session import Session
from recall_gui.core.session.vector_cache import CACHE_ENV
from recall_gui.core.storage.target import TableOptions
from recall_gui.mcp.server import call_recall_search
from tests.core.test_cli import cli
from tests.core.test_lance_order import in_memory, lance_search, write_table
from tests.kbtools import cosh_entry, write_registry

QUERY = "How do I change my password?"
#: (registered name, table, metric)
DATABASES = (
    ("tiny", "tiny", "cosine"),
    ("tiny-l2", "tiny", "l2"),
    ("tiny-dot", "tiny", "dot"),
    ("huge", "huge", "l2"),
    ("huge-cosine", "huge", "cosine"),
    ("huge-dot", "huge", "dot"),
    ("overflow", "overflow", "l2"),
    ("overflow-cosine", "overflow", "cosine"),
    ("faint", "faint", "cosine"),
)


def strict_json(text: str) -> Any:
    """``json.loads`` that refuses what RFC 8259 does not allow (NaN, Infinity, -Infinity)."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def tables(query: np.ndarray[Any, Any], passages: np.ndarray[Any, Any]) -> dict[str, np.ndarray[Any, Any]]:
    rng = np.random.default_rng(0)
    dim = len(query)
    faint = (query + rng.standard_normal((30, dim)) * 0.05) * 2e-22
    tiny = rng.standard_normal((30, dim)) * 1e-39
    huge = rng.standard_normal((10, dim)) * 7e17
    overflow = rng.standard_normal((10, dim)) * 1e19
    matrices = {"tiny": tiny, "huge": huge, "overflow": overflow, "faint": faint}
    # the passages among the others, so that positions and row ids tell nothing by themselves
    return {
        name: np.insert(m, [4, 5, 9], passages, axis=0).astype(np.float32) for name, m in matrices.items()
    }


@pytest.fixture(scope="module")
def extreme_kb(
    tmp_path_factory: pytest.TempPathFactory, embedder: Any, passage_vectors: Any
) -> tuple[Path, Path, np.ndarray[Any, Any], dict[str, np.ndarray[Any, Any]]]:
    root = tmp_path_factory.mktemp("extreme")
    query = np.asarray(embedder.embed_sync(QUERY), np.float32)
    matrices = tables(query, np.asarray(passage_vectors[:3], np.float32))
    for table, matrix in matrices.items():
        write_table(root / "db", table, matrix)
    entries = [
        {**cosh_entry(name, root / "db"), "table": table, "metric": metric}
        for name, table, metric in DATABASES
    ]
    return root / "db", write_registry(root / "registry", entries), query, matrices


def test_the_tables_are_as_extreme_as_they_should_be(extreme_kb: Any) -> None:
    db_dir, _, query, matrices = extreme_kb
    tiny = matrices["tiny"]
    assert np.einsum("ij,ij->i", tiny[:4], tiny[:4]).tolist() == [0.0] * 4  # float32 squares underflow
    _, distances = lance_search(db_dir, "tiny", query, "cosine", 10)
    assert np.isneginf(distances).all()
    huge = matrices["huge"]
    assert np.isfinite(np.einsum("ij,ij->i", huge, huge)).all()
    _, distances = lance_search(db_dir, "huge", huge[0], "l2", 13)
    assert np.isposinf(distances).any() and np.isfinite(distances[:4]).all()
    _, distances = lance_search(db_dir, "overflow", query, "l2", 13)
    assert np.isposinf(distances[3:]).all() and np.isfinite(distances[:3]).all()
    _, distances = lance_search(db_dir, "faint", query, "cosine", 3)
    assert np.isfinite(distances).all() and distances[0] < 0  # no cosine distance is below 0 but in float32


@pytest.mark.parametrize("path", ["int8 codes", "float32", "flat scan"])
def test_the_core_search_gives_lancedbs_rows_and_distances(
    extreme_kb: Any, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    db_dir, _, query, _ = extreme_kb
    if path == "flat scan":
        monkeypatch.setenv(CACHE_ENV, "0")

    async def search_all() -> dict[tuple[str, str, int], Any]:
        found = {}
        async with Session(int8_codes=path == "int8 codes") as session:
            for _, table, metric in DATABASES:
                for limit in (1, 2, 3, 10, 40):
                    request = RecallSearchInput(str(db_dir), table, len(query), QUERY, query, limit)
                    options = TableOptions(metric=metric)
                    found[table, metric, limit] = await search_hits(session, request, options)
        return found

    for (table, metric, limit), result in asyncio.run(search_all()).items():
        assert result.method == ("flat" if path == "flat scan" or table == "overflow" else "exact")
        expected, distances = lance_search(db_dir, table, query, metric, limit)
        assert [hit.row_id for hit in result.hits] == expected, (table, metric, limit)
        assert np.array([hit.distance for hit in result.hits], np.float32).tobytes() == distances.tobytes()


def test_the_kernel_and_every_rows_rank_give_lancedbs_order(extreme_kb: Any) -> None:
    db_dir, _, query, matrices = extreme_kb
    rng = np.random.default_rng(1)
    for _, table, metric in DATABASES:
        matrix = matrices[table]
        vectors = in_memory(matrix, rng)
        position_of = {int(row_id): i for i, row_id in enumerate(vectors.row_ids)}
        expected, _ = lance_search(db_dir, table, query, metric, len(matrix))
        assert ranked_rows(vectors, query, metric) == len(expected)
        positions, _ = nearest_rows(vectors, query, metric, len(matrix))  # the kernel, any table
        assert vectors.row_ids[positions].tolist() == expected, (table, metric)
        ((together, _),) = nearest_rows_many(vectors, query[None, :], metric, [len(matrix)])  # golden checks
        assert vectors.row_ids[together].tolist() == expected, (table, metric)
        for place, row_id in enumerate(expected, start=1):
            ranked = rank_of(vectors, query, metric, position_of[row_id])
            assert ranked is not None and ranked[0] == place, (table, metric, place)
        for row_id in set(range(len(matrix))) - set(expected):
            assert rank_of(vectors, query, metric, position_of[row_id]) is None


def test_the_mcp_server_more_like_this_and_hubs_give_lancedbs_order(extreme_kb: Any) -> None:
    from recall_gui.core.reach.hubs import HubQuery, find_hubs
    from recall_gui.core.search.similar import find_entry, more_like

    db_dir, registry, query, _ = extreme_kb

    async def go() -> dict[str, Any]:
        harness = Harness(registry)
        answers: dict[str, Any] = {}
        try:
            for name, _, _ in DATABASES:
                for limit in (1, 2, 10):
                    arguments = {"db_name": name, "query": QUERY, "limit": limit}
                    answers[f"{name} {limit}"] = await call_recall_search(harness, arguments)
                entry = harness.resolve_active(name)
                found = await find_entry(harness.session, entry.target, "r0")
                answers[f"{name} like"] = (found.hit.vector, await more_like(harness, entry, found.hit, 13))
                answers[f"{name} hubs"] = await find_hubs(harness, entry, [HubQuery(QUERY, 10)])
        finally:
            await harness.aclose()
        return answers

    answers = asyncio.run(go())
    for name, table, metric in DATABASES:
        for limit in (1, 2, 10):
            called = answers[f"{name} {limit}"]
            assert called.is_error is False
            expected, _ = lance_search(db_dir, table, query, metric, limit)
            ids = [result["id"] for result in strict_json(called.content[0].text)["results"]]
            assert ids == [f"r{row_id}" for row_id in expected], (name, limit)
        vector, like = answers[f"{name} like"]
        expected, distances = lance_search(db_dir, table, np.asarray(vector), metric, 13)
        assert [hit.row_id for hit in like.result.hits] == expected, name
        found = np.array([hit.distance for hit in like.result.hits], np.float32)
        assert found.tobytes() == distances.tobytes()
        expected, _ = lance_search(db_dir, table, query, metric, 10)
        hubs = answers[f"{name} hubs"]
        assert sorted(returned.id for returned in hubs.returned) == sorted(f"r{i}" for i in expected)


@pytest.mark.process
def test_the_commands_give_lancedbs_order_in_strict_json_and_health_names_the_vectors(
    extreme_kb: Any, tmp_path: Path
) -> None:
    db_dir, registry, query, matrices = extreme_kb
    first, distances = lance_search(db_dir, "tiny", query, "cosine", 10)
    faint_first, _ = lance_search(db_dir, "faint", query, "cosine", 1)
    golden = tmp_path / "golden.json"
    checks = [  # two a database: each database's checks are ranked in one pass
        {"db_name": "tiny", "query": QUERY, "expect": [f"r{first[0]}"], "limit": 10},
        {"db_name": "tiny", "query": QUERY, "expect": [f"r{first[9]}"], "limit": 11},
        {"db_name": "faint", "query": QUERY, "expect": [f"r{faint_first[0]}"], "limit": 1},
        {"db_name": "faint", "query": QUERY, "expect": [f"r{faint_first[0]}"], "limit": 2},
    ]
    golden.write_text(json.dumps({"checks": checks}), encoding="utf-8")
    where = ("--registry", str(registry))
    commands = {
        "search": ("search", *where, "--db", "tiny", "--limit", "10", QUERY),
        "rank": ("rank", *where, "--db", "tiny", "--id", f"r{first[0]}", "--limit", "10", QUERY),
        "check": ("check", *where, "--json", str(golden)),
        "shadowing": ("shadowing", *where, "--db", "tiny", "--limit", "10", "--json", QUERY),
        "health tiny": ("health", *where, "--db", "tiny", "--json"),
        "health overflow": ("health", *where, "--db", "overflow", "--json"),
        "similar": ("similar", *where, "--db", "tiny", "--id", "r0", "--limit", "12"),
    }
    with ThreadPoolExecutor(3) as pool:
        done = dict(zip(commands, pool.map(lambda args: cli(*args), commands.values()), strict=True))
    for name, finished in done.items():
        assert finished.stdout, (name, finished.stderr)
    printed = {name: strict_json(finished.stdout) for name, finished in done.items()}
    expected_ids = [f"r{row_id}" for row_id in first]

    assert done["search"].returncode == 0, done["search"].stderr
    assert [result["id"] for result in printed["search"]["results"]] == expected_ids

    assert done["rank"].returncode == 0, done["rank"].stderr
    verdict = printed["rank"]
    assert (verdict["in_results"], verdict["rank"], verdict["distance"]) == (True, 1, "-Infinity")
    assert verdict["cutoff_distance"] == "-Infinity"

    assert done["check"].returncode == 0, done["check"].stdout
    assert [check["passed"] for check in printed["check"]["checks"]] == [True] * 4

    assert done["shadowing"].returncode == 0, done["shadowing"].stderr
    results = printed["shadowing"]["results"]
    assert [result["id"] for result in results] == expected_ids
    assert [result["distance"] for result in results] == ["-Infinity"] * len(distances)

    tiny_ids = {f"r{i}" for i in range(33)} - {"r4", "r6", "r11"}  # the passages' places after insertion
    overflow_ids = {f"r{i}" for i in range(13)} - {"r4", "r6", "r11"}
    assert done["health tiny"].returncode == 1
    vectors = printed["health tiny"]["vectors"]
    assert (set(vectors["too_short"]), vectors["too_long"], vectors["zero_norm"]) == (tiny_ids, [], [])
    assert any("too short for float32" in warning for warning in printed["health tiny"]["warnings"])
    vectors = printed["health overflow"]["vectors"]
    assert (vectors["too_short"], set(vectors["too_long"])) == ([], overflow_ids)
    assert any("too long for float32" in warning for warning in printed["health overflow"]["warnings"])

    assert done["similar"].returncode == 0, done["similar"].stderr
    expected, distances = lance_search(db_dir, "tiny", matrices["tiny"][0], "cosine", 12)
    results = printed["similar"]["results"]
    assert [result["id"] for result in results] == [f"r{row_id}" for row_id in expected]
    shown = {-np.inf: "-Infinity", np.inf: "Infinity"}
    assert [result["distance"] for result in results] == [shown.get(d, float(d)) for d in distances]


@pytest.mark.parametrize("scale", [1e-23, 3e-23, 1e-22, 1e-21, 1e-20, 1e-19])
def test_rows_whose_squared_components_are_subnormal_keep_their_nearest_through_the_int8_codes(
    tmp_path: Path, scale: float
) -> None:
    """Cosine rows whose squares fall below float32's normal range: LanceDB's distances to them are off by
    far more than rounding, and the nearest row by LanceDB's arithmetic must still come first."""
    from recall_gui.core.session.exact import VectorMatrix

    rng = np.random.default_rng(23)
    dim = 384
    center = rng.standard_normal(dim)
    faint = (center + rng.standard_normal((60, dim))) * scale
    matrix = np.vstack([faint, rng.standard_normal((4, dim))]).astype(np.float32)
    write_table(tmp_path, "faint", matrix)
    vectors = VectorMatrix.build(matrix, np.arange(len(matrix), dtype=np.uint64)).with_codes(
        tmp_path / "codes"
    )
    for query in (center, center + rng.standard_normal(dim)):
        expected, _ = lance_search(tmp_path, "faint", query.astype(np.float32), "cosine", 5)
        for k in (1, 2, 3, 5):
            positions, _ = nearest_rows(vectors, query, "cosine", k)
            assert positions.tolist() == expected[:k], k
