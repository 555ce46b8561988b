"""LanceDB's order holds on a processor that sums otherwise: the self-test finds out, and LanceDB itself then
measures the candidates of exact search.

A processor that sums in another order is simulated by substituting the emulation of LanceDB's arithmetic
with one that adds the same float32 terms in reverse order: on near-ties it orders rows otherwise than
LanceDB does here. The session's self-test must notice it, and every exact path (the core's search with
int8 codes and in float32, a rank, golden checks in one pass, the MCP server) must still give LanceDB's
flat-search order, which stays the oracle.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from recall_gui.core.base.types import RecallSearchInput
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.nearest import search_hits
from recall_gui.core.session.exact import nearest_rows, nearest_rows_many
from recall_gui.core.session.exact_rank import rank_of
from recall_gui.core.session.lance_arithmetic import (
    VERDICTS_FILE,
    LanceArithmetic,
    lancedb_distances,
    machine_key,
)
from recall_gui.core.session.lance_distance import EMULATIONS, Measure
from recall_gui.core.session.session import Session
from recall_gui.core.storage.target import TableOptions
from recall_gui.mcp.server import call_recall_search
from tests.core.test_lance_order import (  # lance_measure, tie_kb: fixtures
    METRICS,
    in_memory,
    lance_measure,  # noqa: F401
    lance_search,
    near_ties,
    tie_kb,  # noqa: F401
    write_table,
)


def summed_backwards(rows: npt.NDArray[Any], query: npt.NDArray[Any], metric: str) -> npt.NDArray[np.float32]:
    """LanceDB's distances as a processor adding the float32 terms last to first would compute them."""
    x = np.ascontiguousarray(rows, np.float32)
    q = np.ascontiguousarray(query, np.float32)

    def backwards(terms: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        summed: npt.NDArray[np.float32] = np.add.accumulate(terms[:, ::-1], axis=1, dtype=np.float32)[:, -1]
        return summed

    with np.errstate(all="ignore"):
        if metric == "l2":
            return backwards((x - q) * (x - q))
        if metric == "dot":
            return np.float32(1) - backwards(x * q)
        qq = backwards((q * q)[None, :])[0]
        return np.float32(1) - (backwards(x * q) / np.sqrt(qq)) / np.sqrt(backwards(x * x))


#: The app's emulations replaced by one that sums otherwise than LanceDB anywhere.
BACKWARDS: dict[str, Measure] = {"backwards": summed_backwards}


@pytest.fixture(scope="module")
def tie_table(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, npt.NDArray[np.float32], list[Any]]:
    root = tmp_path_factory.mktemp("arithmetic")
    rng = np.random.default_rng(16)
    bases = rng.standard_normal((3, 384)).astype(np.float32)
    matrix = near_ties(bases, rng, nudged=12)
    write_table(root / "db", "ties", matrix)
    queries = [bases[0], bases[1] + np.float32(1e-3) * rng.standard_normal(384).astype(np.float32)]
    return root / "db", matrix, queries


def test_the_simulated_processor_orders_near_ties_otherwise(tie_table: Any) -> None:
    """The premise: with the other summation order, the emulation alone leaves LanceDB's order."""
    db_dir, matrix, queries = tie_table
    vectors = in_memory(matrix, np.random.default_rng(0))
    differs = []
    for query in queries:
        for metric in METRICS:
            expected, _ = lance_search(db_dir, "ties", query, metric, 40)
            positions, _ = nearest_rows(vectors, query, metric, 40, measure=summed_backwards)
            differs.append(vectors.row_ids[positions].tolist() != expected)
    assert any(differs)
    assert LanceArithmetic(db_dir.parent / "cache", emulations=BACKWARDS).wait(60) is False


def test_on_a_processor_that_sums_otherwise_every_exact_path_gives_lancedbs_order(
    tie_table: Any, tmp_path: Path
) -> None:
    db_dir, matrix, queries = tie_table
    rng = np.random.default_rng(1)
    vectors = in_memory(matrix, rng)
    arithmetic = LanceArithmetic(tmp_path / "cache", emulations=BACKWARDS)
    assert arithmetic.wait(60) is False
    measure = arithmetic.measure()
    position_of = {int(row_id): i for i, row_id in enumerate(vectors.row_ids)}
    for metric in METRICS:
        together = nearest_rows_many(vectors, np.stack(queries), metric, [40, 40], measure=measure)
        for query, (positions, _) in zip(queries, together, strict=True):
            expected, distances = lance_search(db_dir, "ties", query, metric, 40)
            assert vectors.row_ids[positions].tolist() == expected
            alone, found = nearest_rows(vectors, query, metric, 40, measure=measure)
            assert vectors.row_ids[alone].tolist() == expected
            assert found.tobytes() == distances.tobytes()
            for place, row_id in enumerate(expected[:12], start=1):
                ranked = rank_of(vectors, query, metric, position_of[row_id], measure=measure)
                assert ranked == (place, float(distances[place - 1]))


@pytest.mark.parametrize("int8_codes", [True, False], ids=["int8 codes", "float32"])
def test_a_session_on_such_a_processor_searches_in_lancedbs_order(tie_table: Any, int8_codes: bool) -> None:
    db_dir, _, queries = tie_table

    async def search_all() -> list[tuple[str, Any, Any]]:
        found = []
        async with Session(int8_codes=int8_codes) as session:
            session.arithmetic = LanceArithmetic(db_dir.parent / "none", emulations=BACKWARDS)
            for metric in METRICS:
                for query in queries:
                    request = RecallSearchInput(str(db_dir), "ties", 384, "q", query, 30)
                    result = await search_hits(session, request, TableOptions(metric=metric))
                    found.append((metric, query, result))
            assert session.arithmetic.wait(60) is False  # the first answer started it
        return found

    for metric, query, result in asyncio.run(search_all()):
        assert result.method == "exact"
        expected, distances = lance_search(db_dir, "ties", query, metric, 30)
        assert [hit.row_id for hit in result.hits] == expected
        assert [hit.distance for hit in result.hits] == [float(d) for d in distances]


def test_the_mcp_server_and_a_rank_on_such_a_processor_give_lancedbs_order(
    tie_kb: tuple[Path, Path],  # noqa: F811
    embedder: Any,
) -> None:
    from tests.core.test_lance_order import QUERY, query_vector

    db_dir, registry = tie_kb
    vector = query_vector(embedder)

    async def go() -> dict[str, Any]:
        from recall_gui.core.search import ViewScope, would_agent_see

        harness = Harness(registry)
        harness.session.arithmetic = LanceArithmetic(db_dir.parent / "none", emulations=BACKWARDS)
        answers: dict[str, Any] = {}
        try:
            for metric in METRICS:
                called = await call_recall_search(harness, {"db_name": metric, "query": QUERY, "limit": 25})
                answers[metric] = json.loads(called.content[0].text)["results"]
                expected, _ = lance_search(db_dir, "ties", vector, metric, 25)
                entry = harness.resolve_active(metric)
                view = ViewScope(entry, None, None, limit=25)
                row = expected[17]
                verdict = await would_agent_see(harness, view, QUERY, row, entry_id=f"r{row}")
                answers[f"{metric} rank"] = verdict.agent
        finally:
            await harness.aclose()
        return answers

    answers = asyncio.run(go())
    for metric in METRICS:
        expected, distances = lance_search(db_dir, "ties", vector, metric, 25)
        assert [result["id"] for result in answers[metric]] == [f"r{row_id}" for row_id in expected]
        rank = answers[f"{metric} rank"]
        assert (rank.rank, rank.distance) == (18, float(distances[17]))


def test_the_first_emulation_that_gives_lancedbs_distances_is_chosen_and_only_the_apps_own_are_remembered(
    tmp_path: Path,
) -> None:
    """On any processor (the shipped emulations hold on some only): of one that sums otherwise and
    LanceDB's own distances, the second is chosen."""
    arithmetic = LanceArithmetic(tmp_path / "cache", emulations={**BACKWARDS, "lancedb": lancedb_distances})
    assert arithmetic.wait(60) is True and arithmetic.tested
    assert arithmetic.measure() is lancedb_distances
    assert not (tmp_path / "cache" / VERDICTS_FILE).exists()


def test_the_verdict_here_is_remembered_per_machine_and_checked_again_where_it_cannot_be(
    tmp_path: Path,
    lance_measure: Measure,  # noqa: F811
) -> None:
    # LanceDB's own search on other tables says which emulation holds here, if any.
    holding = [name for name, emulation in EMULATIONS.items() if emulation is lance_measure]
    holds = bool(holding)
    folder = tmp_path / "cache"
    first = LanceArithmetic(folder)
    assert first.measure() is lancedb_distances  # LanceDB measures while the verdict is not known
    assert first.wait(60) is holds and first.verdict is holds
    assert first.measure() is lance_measure
    remembered = json.loads((folder / VERDICTS_FILE).read_text(encoding="utf-8"))
    assert remembered == {machine_key(): holding[0] if holds else "none"}
    again = LanceArithmetic(folder)
    assert again.wait(60) is holds and not again.tested  # read, not tested again
    assert again.measure() is lance_measure

    unwritable = tmp_path / "a file"
    unwritable.write_text("not a folder", encoding="utf-8")
    for _ in range(2):
        blocked = LanceArithmetic(unwritable / "cache")
        assert blocked.wait(60) is holds and blocked.tested  # each time tested anew, and searches go on
    assert unwritable.read_text(encoding="utf-8") == "not a folder"


def test_a_table_made_ready_and_searched_while_the_self_test_runs_waits_for_none_of_it(
    tie_table: Any,
) -> None:
    """Choosing a database and searching it do not wait for the verdict: LanceDB measures the candidates."""
    import threading

    from recall_gui.core.search.nearest import prepare
    from recall_gui.core.storage.target import TableTarget

    db_dir, _, queries = tie_table
    release = threading.Event()

    def held_emulation(rows: Any, query: Any, metric: str) -> Any:
        release.wait(60)  # the self-test, once started, cannot end until the searches are done
        return summed_backwards(rows, query, metric)

    async def search_while_testing() -> list[Any]:
        async with Session() as session:
            session.arithmetic = LanceArithmetic(db_dir.parent / "held", emulations={"held": held_emulation})
            options = TableOptions(metric="cosine")
            assert await prepare(session, TableTarget(str(db_dir), "ties", options)) is None
            found = []
            for query in queries:
                request = RecallSearchInput(str(db_dir), "ties", 384, "q", query, 30)
                found.append((query, await search_hits(session, request, options)))
            assert session.arithmetic.verdict is None  # all of it done before the verdict
            release.set()
            assert session.arithmetic.wait(60) is False
        return found

    try:
        answers = asyncio.run(search_while_testing())
    finally:
        release.set()
    for query, result in answers:
        expected, distances = lance_search(db_dir, "ties", query, "cosine", 30)
        assert [hit.row_id for hit in result.hits] == expected
        assert [hit.distance for hit in result.hits] == [float(d) for d in distances]


def test_reach_on_such_a_processor_ranks_in_lancedbs_order(tie_table: Any) -> None:
    """Reach's batched ranking measures its candidates as every other exact path does."""
    from recall_gui.core.reach.reach_search import rank_queries
    from recall_gui.core.storage.target import TableTarget

    db_dir, _, queries = tie_table
    asked = np.stack([np.asarray(query, np.float32) for query in queries])

    async def ranked(metric: str) -> Any:
        async with Session() as session:
            session.arithmetic = LanceArithmetic(db_dir.parent / "none", emulations=BACKWARDS)
            options = TableOptions(metric=metric)
            opened = await session.tables.open(TableTarget(str(db_dir), "ties", options))
            owners = np.array([5, 17], dtype=np.uint64)
            return await rank_queries(session, opened, asked, owners, limit=10, depth=30, options=options)

    for metric in METRICS:
        ranking = asyncio.run(ranked(metric))
        assert ranking.method == "exact"
        for number, query in enumerate(queries):
            expected, _ = lance_search(db_dir, "ties", query, metric, 30)
            assert ranking.results[number].tolist() == expected[:10]
            owner = (5, 17)[number]
            assert ranking.own_rank[number] == (expected.index(owner) + 1 if owner in expected else 0)


def test_lancedb_measures_no_rows_as_no_distances() -> None:
    measured = lancedb_distances(np.empty((0, 8), np.float32), np.ones(8, np.float32), "l2")
    assert measured.shape == (0,) and measured.dtype == np.float32


def test_a_self_test_that_fails_leaves_the_distances_to_lancedb_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(rows: Any, query: Any, metric: str) -> Any:
        raise ValueError("this emulation cannot run here")

    arithmetic = LanceArithmetic(tmp_path / "cache", emulations={"broken": broken})
    with caplog.at_level(logging.WARNING, logger="recall_gui.core.session.lance_arithmetic"):
        assert arithmetic.wait(60) is False
    assert arithmetic.measure() is lancedb_distances
    assert [r.getMessage() for r in caplog.records] == [
        "LanceDB's arithmetic could not be checked: this emulation cannot run here"
    ]


def test_the_machine_key_without_cpuinfo_or_a_package_version_still_names_the_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import platform
    from importlib import metadata

    from recall_gui.core.session import lance_arithmetic

    here = machine_key()
    real_version = metadata.version

    def no_cpuinfo(*args: Any, **kwargs: Any) -> Any:  # not Linux: no /proc/cpuinfo to read
        raise FileNotFoundError(2, "No such file or directory", "/proc/cpuinfo")

    def no_pylance(package: str) -> str:  # a bundle that ships lance without its metadata
        if package == "pylance":
            raise metadata.PackageNotFoundError(package)
        return real_version(package)

    monkeypatch.setattr(lance_arithmetic, "open", no_cpuinfo, raising=False)
    monkeypatch.setattr(metadata, "version", no_pylance)
    elsewhere = machine_key()
    assert elsewhere.startswith(f"{platform.system()} {platform.machine()} ")
    assert elsewhere.endswith(f" lancedb {real_version('lancedb')} pylance ?")
    assert here.endswith(f" lancedb {real_version('lancedb')} pylance {real_version('pylance')}")
    assert elsewhere.split()[2] != here.split()[2]  # the processor's features are not in it


@pytest.mark.parametrize("written", [True, "an emulation this version does not have"])
def test_a_remembered_verdict_of_another_kind_is_tested_again(
    tmp_path: Path,
    written: Any,
    lance_measure: Measure,  # noqa: F811
) -> None:
    """An earlier version remembered ``true`` for its one emulation: which one it meant is not known."""
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / VERDICTS_FILE).write_text(json.dumps({machine_key(): written}), encoding="utf-8")
    arithmetic = LanceArithmetic(folder)
    arithmetic.wait(60)
    assert arithmetic.tested and arithmetic.measure() is lance_measure


def test_a_remembered_none_leaves_the_distances_to_lancedb_without_testing(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / VERDICTS_FILE).write_text(json.dumps({machine_key(): "none"}), encoding="utf-8")
    arithmetic = LanceArithmetic(folder)
    assert arithmetic.wait(60) is False and not arithmetic.tested
    assert arithmetic.measure() is lancedb_distances
