"""The reach report: every planted unreachable entry is found with the right cause, and every entry's
reach, place, the entries that took its place and its retrievability are LanceDB's own flat search's,
query by query (tests/reachtools.py is the oracle)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.reach.hubs import HubQuery
from recall_gui.core.reach.pseudo_queries import QueryRule
from recall_gui.core.reach.reach import find_reach
from recall_gui.core.reach.reach_report import ReachReport, Unreachable, gini, lorenz
from recall_gui.core.search.harness import Harness
from recall_gui.core.tables.folders import open_table
from tests.reachtools import CAUSES, NAME, Planted, lancedb_oracle, write_planted


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Planted:
    return write_planted(tmp_path_factory.mktemp("planted"), embedder)


def reach(
    planted: Planted,
    limit: int,
    *,
    depth: int | None = None,
    queries: Sequence[HubQuery] = (),
    rule: QueryRule | None = None,
    **more: Any,
) -> ReachReport:
    async def go() -> ReachReport:
        harness = Harness(planted.registry_dir)
        try:
            entry = harness.registry.get(NAME)
            assert entry is not None
            return await find_reach(
                harness, entry, limit=limit, depth=depth, queries=queries, rule=rule, **more
            )
        finally:
            await harness.aclose()

    return asyncio.run(go())


def test_every_planted_unreachable_entry_is_found_with_its_cause(planted: Planted) -> None:
    report = reach(planted, 1)
    causes = {item.id: item.cause for item in report.unreachable}
    for entry_id, cause in CAUSES.items():
        assert causes.get(entry_id) == cause, (entry_id, causes.get(entry_id))
    # Of two near-copies one wins: the other is unreachable because of it.
    copies = [item for item in report.unreachable if item.id in ("git-rebase", "rebase-copy")]
    assert len(copies) == 1 and copies[0].cause == "near-copy"
    other = "rebase-copy" if copies[0].id == "git-rebase" else "git-rebase"
    assert copies[0].taken_by == (other,)
    assert [item.taken_by for item in report.unreachable if item.id == "tides-copy"] == [("tides",)]
    # Of four chunks that start alike, only one can be the first answer.
    boiler = [item for item in report.unreachable if item.id.startswith("boiler-")]
    assert len(boiler) == 3 and {item.cause for item in boiler} == {"boilerplate"}
    for number in range(6):
        victim = next(item for item in report.unreachable if item.id == f"victim-{number}")
        assert victim.taken_by == ("hub",) and "hub" in victim.why
    assert [hub.id for hub in report.hubs] == ["hub"]
    assert [item.taken_by for item in report.unreachable if item.id == "weak"] == [("zero",)]
    words = {item.id: item.why for item in report.unreachable}
    assert "zero length" in words["zero"] and "missing" in words["no-vector"]
    assert "empty" in words["empty-0"] and "tides" in words["tides-copy"]


@pytest.mark.parametrize("limit", [1, 3])
def test_reach_places_and_retrievability_are_lancedbs_query_by_query(
    planted: Planted, embedder: Any, limit: int
) -> None:
    report = reach(planted, limit, depth=10)
    oracle = lancedb_oracle(planted, embedder, limit, depth=10)
    unreachable = {item.id: item for item in report.unreachable}
    for number, entry_id in enumerate(planted.ids):
        query = planted.queries[number]
        if not query:
            assert unreachable[entry_id].rank is None and unreachable[entry_id].taken_by == ()
            continue
        reached = entry_id in oracle.results[entry_id]
        assert (entry_id not in unreachable) == reached, entry_id
        if not reached:
            item = unreachable[entry_id]
            assert item.query == query
            assert list(item.taken_by) == oracle.results[entry_id]
            assert item.rank == oracle.places[entry_id]
    counted = {entry_id: 0 for entry_id in planted.ids}
    for found in oracle.results.values():
        for entry_id in set(found):
            counted[entry_id] += 1
    assert {item.id: item.returned_for for item in report.retrievability} == counted
    assert {item.id: item.rank for item in report.retrievability} == {
        entry_id: oracle.places.get(entry_id) for entry_id in planted.ids
    }
    assert report.reachable == sum(1 for key, found in oracle.results.items() if key in found)
    assert report.entries == len(planted.ids) and report.searched == len(oracle.results)
    assert report.limit == limit and report.method == "exact" and report.metric == "l2"
    assert report.antihubs == sum(1 for count in counted.values() if count == 0)


def test_the_entries_out_of_reach_are_told_part_by_part_as_they_are_found(
    planted: Planted, embedder: Any
) -> None:
    told: list[tuple[Unreachable, ...]] = []
    stages: list[tuple[str, int, int]] = []

    def progress(stage: str, done: int, total: int) -> None:
        stages.append((stage, done, total))

    report = reach(planted, 1, depth=10, part=4, on_unreachable=told.append, on_progress=progress)
    oracle = lancedb_oracle(planted, embedder, 1, depth=10)
    asked = [entry_id for entry_id, query in zip(planted.ids, planted.queries, strict=True) if query]
    blank = [entry_id for entry_id, query in zip(planted.ids, planted.queries, strict=True) if not query]
    # First the entries with nothing to ask, then each part of four queries' misses, in the table's order.
    assert [item.id for item in told[0]] == blank
    parts = [asked[start : start + 4] for start in range(0, len(asked), 4)]
    missed = [[key for key in part if key not in oracle.results[key]] for part in parts]
    assert [[item.id for item in found] for found in told[1:]] == [part for part in missed if part]
    for item in (item for found in told[1:] for item in found):
        assert item.cause == "pending" and list(item.taken_by) == oracle.results[item.id]
        assert (
            item.rank == oracle.places[item.id] and item.query == planted.queries[planted.ids.index(item.id)]
        )
    # The report itself lists the same entries, now with their causes.
    assert sorted(item.id for found in told for item in found) == sorted(
        item.id for item in report.unreachable
    )
    assert "pending" not in {item.cause for item in report.unreachable}
    searched = [done for stage, done, total in stages if stage == "searching" and total == len(asked)]
    assert searched[-1] == len(asked) and len(set(searched)) == len(parts)


def test_given_queries_count_at_their_own_limits(planted: Planted, embedder: Any) -> None:
    import lancedb

    asked = [
        HubQuery("How do tides work?", 2),
        HubQuery("What is the capital of France?", 1),
        HubQuery("Where do penguins live?", -1),  # the agent's harness reads a negative limit as 5
        HubQuery("What is rust?", 0),  # and 0 as no result
    ]
    agents_limit = {2: 2, 1: 1, -1: 5, 0: 0}
    report = reach(planted, 1, queries=asked)
    table = lancedb.connect(str(planted.db_dir)).open_table(NAME)
    counted = {entry_id: 0 for entry_id in planted.ids}
    for query in asked:
        if not agents_limit[query.limit]:
            continue
        vector = embedder.embed_sync(query.text)
        found = table.search(vector).distance_type("l2").limit(agents_limit[query.limit])
        for row in found.to_list():
            counted[row["id"]] += 1
    assert {item.id: item.returned_for_queries for item in report.retrievability} == counted
    assert report.queries == 4 and report.to_dict()["queries"] == 4


def test_the_model_named_is_the_one_the_pool_embedded_with(planted: Planted) -> None:
    async def used() -> Any:
        harness = Harness(planted.registry_dir)
        try:
            entry = harness.registry.get(NAME)
            assert entry is not None
            return (await harness.search_database(entry, "tides", 1)).model
        finally:
            await harness.aclose()

    assert reach(planted, 1).model == asyncio.run(used())


def test_a_column_makes_the_queries_when_asked(tmp_path: Path, embedder: Any) -> None:
    import lancedb
    import pyarrow as pa

    from tests.kbtools import PASSAGES, cosh_entry, write_registry

    texts = list(PASSAGES.values())
    vectors = np.vstack(embedder.embed_many(texts)).astype(np.float32)
    titles = ["password"] * 2 + ["" for _ in texts[2:]]
    data = pa.table(
        {
            "id": pa.array(list(PASSAGES)),
            "content": pa.array(texts),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), 384),
            "meta": pa.array([{"title": title} for title in titles]),
        }
    )
    lancedb.connect(str(tmp_path / "db")).create_table(NAME, data)
    registry = write_registry(tmp_path / "registry", [cosh_entry(NAME, tmp_path / "db")])
    report = reach(Planted(tmp_path / "db", registry, (), (), ()), 1, rule=QueryRule("column", "meta.title"))
    assert report.searched == 2 and report.query_from == "column:meta.title"
    empty = [item for item in report.unreachable if item.cause == "empty"]
    assert len(empty) == len(texts) - 2 and "column meta.title is empty" in empty[0].why


def test_a_table_without_ids_names_entries_by_row_id_as_a_search_does(tmp_path: Path, embedder: Any) -> None:
    planted = write_planted(tmp_path, embedder, id_column=False)

    async def go() -> tuple[ReachReport, list[str]]:
        harness = Harness(tmp_path / "registry")
        try:
            opened = await open_table(harness.session, str(planted.db_dir), table=NAME)
            report = await find_reach(harness, opened.entry, limit=1)
            found = await harness.search_database(opened.entry, planted.queries[0], 1)
            return report, [hit.id for hit in found.result.hits]
        finally:
            await harness.aclose()

    report, searched = asyncio.run(go())
    assert [item.id for item in report.retrievability] == [str(n) for n in range(len(planted.ids))]
    assert report.retrievability[0].rank == 1 and searched == ["0"]
    # The folder is the registered database "notes": the agent's scope says so.
    assert report.db_name == NAME and report.agent_searches


def test_an_opened_folder_no_agent_searches_is_reported_as_such(tmp_path: Path, embedder: Any) -> None:
    planted = write_planted(tmp_path, embedder)
    (tmp_path / "registry" / "rag_active.json").write_text("[]", encoding="utf-8")

    async def go() -> ReachReport:
        harness = Harness(tmp_path / "registry")
        try:
            entry = harness.registry.get(NAME)
            assert entry is not None
            return await find_reach(harness, entry, limit=1)
        finally:
            await harness.aclose()

    report = asyncio.run(go())
    assert not report.agent_searches and report.why_not == "it is not active"
    assert report.entries == len(planted.ids)


def test_gini_and_lorenz_of_known_counts() -> None:
    assert gini([0, 0, 0, 4]) == pytest.approx(0.75)
    assert gini([2, 2, 2, 2]) == pytest.approx(0.0)
    assert gini([]) == 0.0 and gini([0, 0]) == 0.0
    assert gini([1, 3]) == pytest.approx(0.25)
    x, y = lorenz([0, 0, 0, 4])
    assert x.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert y.tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]


def test_without_the_vectors_in_memory_lancedbs_flat_scan_answers_the_same(
    planted: Planted, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALL_GUI_EXACT_CACHE_MB", "0")
    report = reach(planted, 1, depth=6)
    oracle = lancedb_oracle(planted, embedder, 1, depth=6)
    assert report.method == "flat" and report.note
    unreachable = {item.id: item for item in report.unreachable}
    for key, found in oracle.results.items():
        assert (key not in unreachable) == (key in found), key
        if key in unreachable:
            assert list(unreachable[key].taken_by) == found and unreachable[key].rank == oracle.places[key]
    assert unreachable["tides-copy"].cause == "near-copy" and unreachable["zero"].cause == "zero-vector"


def test_an_indexed_table_is_searched_through_its_index_as_the_agent_searches(
    tmp_path: Path, embedder: Any
) -> None:
    import lancedb
    from lancedb.index import IvfFlat

    planted = write_planted(tmp_path, embedder)
    table = lancedb.connect(str(planted.db_dir)).open_table(NAME)
    table.create_index("vector", config=IvfFlat(distance_type="l2", num_partitions=4))
    report = reach(planted, 2, depth=6)
    assert report.method.startswith("index:") and report.exact_places
    flat = lancedb_oracle(planted, embedder, 2, depth=6)  # the places: LanceDB's exact order
    unreachable = {item.id: item for item in report.unreachable}
    for number, key in enumerate(planted.ids):
        if not planted.queries[number]:
            continue
        vector = embedder.embed_sync(planted.queries[number])
        found = [row["id"] for row in table.search(vector).distance_type("l2").limit(2).to_list()]
        assert (key not in unreachable) == (key in found), key
        if key in unreachable:
            assert list(unreachable[key].taken_by) == found and unreachable[key].rank == flat.places[key]


def test_causes_in_their_order() -> None:
    from recall_gui.core.reach.reach_causes import Facts, cause_of

    unit = np.eye(4, dtype=np.float32)

    def facts(**changed: Any) -> Facts:
        base: dict[str, Any] = {
            "query": "q",
            "query_from": "first sentence",
            "vector": unit[0],
            "sharing_query": 1,
            "rank": 4,
            "depth": 10,
            "limit": 2,
            "metric": "l2",
            "method": "exact",
            "taken_by": [("a", unit[1], 1), ("b", unit[2], 1)],
            "hub_min": 10,
        }
        return Facts(**{**base, **changed})

    assert cause_of(facts())[0] == "outranked" and "it ranks 4" in cause_of(facts())[1]
    assert "not in the first 10" in cause_of(facts(rank=None))[1]
    assert cause_of(facts(method="index:IVF_PQ", rank=2)) == (
        "index",
        "the agent's index (IVF_PQ) misses it: an exact search ranks it 2",
    )
    assert cause_of(facts(taken_by=[("z", np.zeros(4, np.float32), 1)]))[0] == "taken-by-zero"
    assert cause_of(facts(taken_by=[("h", unit[1], 10)]))[0] == "hub"
    assert cause_of(facts(sharing_query=3, taken_by=[("h", unit[1], 10)]))[0] == "boilerplate"
    near = unit[0] + np.float32(0.01) * unit[1]
    assert cause_of(facts(sharing_query=3, taken_by=[("c", near, 10)]))[0] == "near-copy"
    assert cause_of(facts(query="", taken_by=[("c", near, 10)]))[0] == "empty"
    zero = facts(vector=np.zeros(4, np.float32), query="")
    assert cause_of(zero)[0] == "zero-vector" and "no nearer" in cause_of(zero)[1]
    assert "never returned" in cause_of(facts(vector=np.zeros(4, np.float32), metric="cosine"))[1]
    assert cause_of(facts(vector=None, query=""))[0] == "no-vector"


def test_the_angle_between_vectors_is_unknown_where_one_is_infinite_or_zero() -> None:
    from recall_gui.core.reach.reach_causes import cosine_distance

    a = np.array([3.0, 4.0], dtype=np.float32)
    b = np.array([4.0, 3.0], dtype=np.float32)
    assert cosine_distance(a, b) == pytest.approx(1 - 24 / 25)
    assert cosine_distance(a, np.array([np.inf, 0.0], dtype=np.float32)) is None
    assert cosine_distance(np.zeros(2, dtype=np.float32), b) is None
