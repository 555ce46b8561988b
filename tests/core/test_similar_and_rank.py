""" "More like this" and "would the agent see this?" against real tables embedded with the real model:
the row comes first and the order is LanceDB's flat search; an entry's rank is its place in the agent's
full ranking, inside or outside the limit."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.search.agent_scope import ViewScope
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.similar import find_entry, more_like, similar_json
from recall_gui.core.search.visibility import would_agent_see
from recall_gui.core.session.exact import VectorMatrix
from recall_gui.core.session.exact_rank import rank_of
from recall_gui.core.session.session import Session
from recall_gui.core.storage.target import TableTarget
from tests.core.test_cli import cli
from tests.core.test_lance_order import lance_search
from tests.kbtools import (
    PASSAGES,
    KnowledgeBase,
    cosh_entry,
    snapshot_tree,
    write_lance_table,
    write_registry,
)

QUERIES = ("How do I change my password?", "European capitals", "coffee", "the moon and the sea")


@pytest.fixture
def copies_kb(tmp_path: Path, passage_vectors: Any) -> KnowledgeBase:
    """The passages, then an exact copy of "paris" (a tie at every distance) and a row sharing the id
    "berlin"."""
    ids = [*PASSAGES, "paris-copy", "berlin"]
    texts = [*PASSAGES.values(), PASSAGES["paris"], "Another row with the id berlin."]
    position = list(PASSAGES).index
    vectors = np.vstack(
        [passage_vectors, passage_vectors[position("paris")], passage_vectors[position("tides")]]
    )
    write_lance_table(tmp_path / "db", "notes", ids, texts, vectors)
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")])
    return KnowledgeBase("notes", tmp_path / "db", registry, tuple(ids), tuple(texts), vectors)


def lance_order(db_dir: Path, table: str, query: Any, metric: str) -> list[int]:
    """Every row's id (= its position here) in LanceDB's flat-search order."""
    return lance_search(db_dir, table, query, metric, 10_000)[0]


def test_more_like_this_puts_the_row_first_and_ranks_as_lancedb_does(
    copies_kb: KnowledgeBase, session: Session
) -> None:
    kb = copies_kb
    before = snapshot_tree(kb.db_dir)

    async def go(entry_id: str) -> Any:
        harness = Harness(kb.registry_dir, session=session)
        found = await find_entry(session, kb.target, entry_id)
        return found, await more_like(harness, harness.resolve_active(kb.name), found.hit, len(kb.ids))

    for entry_id in ("pw-reset", "coffee", "unicode"):
        found, report = asyncio.run(go(entry_id))
        hits = report.result.hits
        assert found.sharing_id == 1
        assert hits[0].id == entry_id
        assert hits[0].distance == pytest.approx(0.0, abs=1e-5)
        expected = [
            kb.ids[i] for i in lance_order(kb.db_dir, kb.name, kb.vectors[kb.ids.index(entry_id)], "l2")
        ]
        assert [hit.id for hit in hits] == expected
        assert report.result.query == f"more like {entry_id}"
    # A copy is at distance 0 too: the original (the lower row id) comes first, as LanceDB orders ties.
    _found, report = asyncio.run(go("paris-copy"))
    assert [hit.id for hit in report.result.hits[:2]] == ["paris", "paris-copy"]
    assert report.result.hits[1].distance == 0.0
    assert snapshot_tree(kb.db_dir) == before


def test_an_id_shared_by_rows_finds_the_first_and_says_how_many(
    copies_kb: KnowledgeBase, session: Session
) -> None:
    found = asyncio.run(find_entry(session, copies_kb.target, "berlin"))
    assert (found.hit.content, found.sharing_id) == (PASSAGES["berlin"], 2)
    with pytest.raises(InvalidInputError, match='no entry with the id "nope"'):
        asyncio.run(find_entry(session, copies_kb.target, "nope"))
    with pytest.raises(InvalidInputError, match="no entry with the id"):
        asyncio.run(find_entry(session, copies_kb.target, "it's"))  # a quote is a literal, not SQL


@pytest.mark.parametrize(
    ("name", "deleted", "message"),
    [
        ("coffee", "coffee", 'no entry with the id "coffee" in "notes"'),
        (
            "berlin·" + hashlib.sha256(PASSAGES["berlin"].encode("utf-8")).hexdigest()[:8],
            "berlin",
            'the entry "berlin·{digits}" is no longer in "notes"',
        ),
    ],
)
def test_an_entry_deleted_between_finding_and_reading_it_is_refused(
    copies_kb: KnowledgeBase,
    session: Session,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    deleted: str,
    message: str,
) -> None:
    """Another program deletes the row after its id (or its content's sha256) named it and before the row
    is read in full: the user is told it is not there, not given a stale row."""
    import lancedb

    from recall_gui.core.search import similar

    read_row = similar.fetch_row

    async def delete_then_read(*args: Any, **kwargs: Any) -> Any:
        table = lancedb.connect(str(copies_kb.db_dir)).open_table(copies_kb.name)
        table.delete(f"id = '{deleted}'")
        return await read_row(*args, **kwargs)

    monkeypatch.setattr(similar, "fetch_row", delete_then_read)
    with pytest.raises(InvalidInputError) as caught:
        asyncio.run(find_entry(session, copies_kb.target, name))
    assert str(caught.value) == message.format(digits=name.rpartition("·")[2])


@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
def test_every_rows_rank_is_its_place_in_the_exact_order(
    copies_kb: KnowledgeBase, embedder: Any, metric: str
) -> None:
    vectors = VectorMatrix.build(
        copies_kb.vectors.astype(np.float32), np.arange(len(copies_kb.ids), dtype=np.uint64)
    )
    for query in QUERIES:
        q = np.asarray(embedder.embed_sync(query), np.float32)
        order = lance_order(copies_kb.db_dir, copies_kb.name, q, metric)
        for place, position in enumerate(order, start=1):
            ranked = rank_of(vectors, q, metric, position)
            assert ranked is not None
            assert ranked[0] == place, (query, copies_kb.ids[position])


def test_a_filter_and_a_zero_vector_leave_rows_out_of_the_ranking() -> None:
    matrix = np.array([[1, 0], [0, 0], [0.9, 0.1], [0, 1]], np.float32)
    vectors = VectorMatrix.build(matrix, np.arange(4, dtype=np.uint64))
    query = np.array([1, 0], np.float32)
    assert rank_of(vectors, query, "cosine", 1) is None  # no cosine distance for a zero vector
    assert rank_of(vectors, query, "cosine", 3) == (3, 1.0)
    allowed = np.array([False, True, True, True])
    assert rank_of(vectors, query, "l2", 2, allowed) == (1, pytest.approx(0.02))
    assert rank_of(vectors, query, "l2", 0, allowed) is None


def test_would_the_agent_see_it_inside_and_outside_the_limit(
    copies_kb: KnowledgeBase, session: Session
) -> None:
    kb = copies_kb
    query, limit = "How do I change my password?", 3

    async def go() -> tuple[Any, dict[str, Any]]:
        harness = Harness(kb.registry_dir, session=session)
        entry = harness.resolve_active(kb.name)
        everything = await harness.search_database(entry, query, len(kb.ids))
        seen = {}
        for place, hit in enumerate(everything.result.hits, start=1):
            assert hit.row_id is not None
            verdict = await would_agent_see(
                harness, ViewScope(entry, limit=limit), query, hit.row_id, entry_id=hit.id
            )
            assert (verdict.differences, verdict.view, verdict.missing) == ((), None, None)
            seen[hit.id + f"@{place}"] = verdict.agent
        return everything, seen

    everything, seen = asyncio.run(go())
    hits = everything.result.hits
    cutoff = hits[limit - 1].distance
    for place, hit in enumerate(hits, start=1):
        visibility = seen[hit.id + f"@{place}"]
        assert visibility.rank == place
        assert visibility.distance == pytest.approx(hit.distance, rel=1e-6)
        assert visibility.cutoff == cutoff
        assert visibility.in_results == (place <= limit)
        assert visibility.result_rank == (place if place <= limit else None)
        assert visibility.places_behind == max(0, place - limit)
        margin = visibility.margin
        assert margin is not None
        assert (margin >= 0) == (place <= limit)
        assert visibility.rows == len(kb.ids)


@pytest.mark.process
def test_the_commands_print_similar_entries_and_an_entrys_rank(copies_kb: KnowledgeBase) -> None:
    kb = copies_kb
    before = snapshot_tree(kb.db_dir)
    done = cli(
        "similar", "--registry", str(kb.registry_dir), "--db", kb.name, "--id", "coffee", "--limit", "3"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["query"] == "more like coffee"
    assert [set(result) for result in data["results"]] == [{"id", "content", "distance"}] * 3
    assert data["results"][0] == {"id": "coffee", "content": PASSAGES["coffee"], "distance": 0.0}
    shared = cli("similar", "--registry", str(kb.registry_dir), "--db", kb.name, "--id", "berlin")
    assert "warning: 2 entries have the id 'berlin'" in shared.stderr
    missing = cli("similar", "--registry", str(kb.registry_dir), "--db", kb.name, "--id", "nope")
    assert missing.returncode == 1
    assert 'error: no entry with the id "nope" in "notes"' in missing.stderr

    ranked = cli(
        "rank", "--registry", str(kb.registry_dir), "--db", kb.name, "--id", "tides", "--limit", "2", "coffee"
    )
    assert ranked.returncode == 0, ranked.stderr
    place = json.loads(ranked.stdout)
    agent = json.loads(
        cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", "20", "coffee").stdout
    )
    assert place["rank"] == [result["id"] for result in agent["results"]].index("tides") + 1
    assert place["in_results"] is (place["rank"] <= 2)
    assert place["margin"] == pytest.approx(place["cutoff_distance"] - place["distance"])
    assert {"db_name", "active", "id", "query", "limit", "metric", "method"} <= set(place)
    assert snapshot_tree(kb.db_dir) == before


def test_through_an_index_the_rank_is_the_exact_one_and_says_so(
    tmp_path: Path, passage_vectors: Any, embedder: Any, session: Session
) -> None:
    import lancedb

    from tests.kbtools import write_perturbed_table

    ids, texts = list(PASSAGES), list(PASSAGES.values())
    write_perturbed_table(tmp_path / "db", "notes", ids, texts, passage_vectors, rows=600, ivf_partitions=4)
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")])
    stored = lancedb.connect(str(tmp_path / "db")).open_table("notes").to_arrow()
    query = "How do I change my password?"
    order = lance_order(tmp_path / "db", "notes", np.asarray(embedder.embed_sync(query), np.float32), "l2")
    position = order[40]  # far outside the agent's 5 results

    async def go() -> Any:
        harness = Harness(registry, session=session)
        entry = harness.resolve_active("notes")
        view = ViewScope(entry, limit=5)
        verdict = await would_agent_see(
            harness, view, query, position, entry_id=stored.column("id")[position].as_py()
        )
        assert verdict.agent is not None
        return verdict.agent

    seen = asyncio.run(go())
    assert seen.method.startswith("index:")
    assert not seen.in_results
    assert seen.rank == 41
    assert seen.note is not None and "approximate" in seen.note


def test_a_table_without_an_id_column_names_its_entries_by_row_id(tmp_path: Path, session: Session) -> None:
    import lancedb
    import pyarrow as pa

    vectors = np.eye(3, 4, dtype=np.float32)
    lancedb.connect(str(tmp_path / "db")).create_table(
        "plain",
        pa.table(
            {
                "content": ["zero", "one", "two"],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), 4),
            }
        ),
    )
    target = TableTarget(str(tmp_path / "db"), "plain")
    found = asyncio.run(find_entry(session, target, "1"))
    assert (found.hit.content, found.sharing_id, found.label) == ("one", 1, found.hit.id)
    for name in ("one", "7"):  # not a row id; no such row
        with pytest.raises(InvalidInputError) as caught:
            asyncio.run(find_entry(session, target, name))
        assert str(caught.value) == f'no entry with the id "{name}" in "plain"'


def test_a_shared_ids_entry_is_named_by_the_start_of_its_contents_sha256(
    cosh_kb: KnowledgeBase, session: Session
) -> None:
    shas = [hashlib.sha256(text.encode("utf-8")).hexdigest() for text in cosh_kb.contents]
    found = asyncio.run(find_entry(session, cosh_kb.target, f"content·{shas[3][:8]}"))
    assert (found.hit.content, found.sharing_id, found.sha_prefix) == (
        cosh_kb.contents[3],
        len(shas),
        shas[3][:8],
    )
    assert found.label == f"content·{shas[3][:8]}"
    unused = next(digit for digit in "0123456789abcdef" if not any(sha.startswith(digit) for sha in shas))
    with pytest.raises(InvalidInputError) as none:
        asyncio.run(find_entry(session, cosh_kb.target, f"content·{unused}"))
    assert str(none.value) == f'no entry "content" whose content\'s sha256 starts with {unused} in "docs"'
    shared = Counter(sha[0] for sha in shas).most_common(1)[0]
    assert shared[1] > 1  # 16 contents, 16 hex digits: some first digit repeats
    with pytest.raises(InvalidInputError) as many:
        asyncio.run(find_entry(session, cosh_kb.target, f"content·{shared[0]}"))
    assert str(many.value) == (
        f'{shared[1]} entries "content" have contents whose sha256 starts with {shared[0]}'
    )
    first = next(sha for sha in shas if sha.startswith(shared[0]))
    assert (many.value.hint or "").startswith(f"Give more of its hex digits, e.g. content·{first[:12]}")


def test_an_entry_without_a_stored_vector_cannot_be_searched_with(tmp_path: Path, session: Session) -> None:
    import lancedb
    import pyarrow as pa

    folder = tmp_path / "db"
    vectors = pa.FixedSizeListArray.from_arrays(
        pa.array([1.0, 0.0, 0.0, 0.0], pa.float32()), 2, mask=pa.array([False, True])
    )
    table = pa.table({"id": ["kept", "lost"], "content": ["a", "b"], "vector": vectors})
    lancedb.connect(str(folder)).create_table("notes", table, on_bad_vectors="null")
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", folder)])

    async def go() -> None:
        harness = Harness(registry, session=session)
        found = await find_entry(session, TableTarget(str(folder), "notes"), "lost")
        assert found.hit.vector is None
        await more_like(harness, harness.resolve_active("notes"), found.hit, 2)

    with pytest.raises(InvalidInputError) as caught:
        asyncio.run(go())
    assert str(caught.value) == 'the entry "lost" has no stored vector to search with'
    assert caught.value.hint == "Its vector is missing (null) in the table."


def test_similar_json_names_results_by_content_only_where_their_id_is_shared(
    cosh_kb: KnowledgeBase, copies_kb: KnowledgeBase, session: Session
) -> None:
    async def like(kb: KnowledgeBase, name: str) -> tuple[Any, Any]:
        harness = Harness(kb.registry_dir, session=session)
        entry = harness.resolve_active(kb.name)
        found = await find_entry(session, kb.target, name)
        report = await more_like(harness, entry, found.hit, 2, found.label)
        return report, await session.tables.id_repeats(entry.target)

    report, repeats = asyncio.run(like(copies_kb, "coffee"))
    data = json.loads(similar_json(report))  # no repeats given: every result by its id
    assert data["query"] == "more like coffee"
    assert [set(result) for result in data["results"]] == [{"id", "content", "distance"}] * 2
    assert "ids_repeat" not in data
    shared = json.loads(similar_json(report, repeats))  # "berlin" repeats, but is not among the results
    assert [result["id"] for result in shared["results"]] == [result["id"] for result in data["results"]]
    assert shared["ids_repeat"]["shared_ids"] == {"berlin": 2}

    sha = hashlib.sha256(cosh_kb.contents[0].encode("utf-8")).hexdigest()
    report, repeats = asyncio.run(like(cosh_kb, f"content·{sha[:8]}"))
    data = json.loads(similar_json(report, repeats))
    assert data["query"] == f"more like content·{sha[:8]}"
    first = data["results"][0]
    assert first == {"id": "content", "content_sha256": sha, "content": cosh_kb.contents[0], "distance": 0.0}
    assert data["ids_repeat"]["shared_ids"] == {"content": len(cosh_kb.contents)}


def rank_of_entry(
    kb: KnowledgeBase, session: Session, query: str, limit: int, row_id: int, entry_id: str
) -> Any:
    from recall_gui.core.search.visibility import rank_in

    async def go() -> Any:
        harness = Harness(kb.registry_dir, session=session)
        return await rank_in(
            harness, harness.resolve_active(kb.name), query, limit, row_id, entry_id=entry_id
        )

    return asyncio.run(go())


def test_without_vectors_in_memory_a_rank_is_known_only_inside_the_results(
    copies_kb: KnowledgeBase, session: Session, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALL_GUI_EXACT_CACHE_MB", "0")  # the user turned comparing in memory off
    kb = copies_kb
    query = "coffee"
    order = lance_order(kb.db_dir, kb.name, np.asarray(embedder.embed_sync(query), np.float32), "l2")
    first, eighth = order[0], order[7]  # row ids = positions here
    inside = rank_of_entry(kb, session, query, 3, first, kb.ids[first])
    assert (inside.rank, inside.result_rank, inside.in_results, inside.note) == (1, 1, True, None)
    outside = rank_of_entry(kb, session, query, 3, eighth, kb.ids[eighth])
    assert (outside.rank, outside.distance, outside.in_results) == (None, None, False)
    assert outside.note == (
        "its rank among all rows needs the vectors in memory: comparing all rows in memory is off "
        "(RECALL_GUI_EXACT_CACHE_MB=0)"
    )
    assert outside.margin is None and outside.places_behind is None


def test_a_row_the_table_no_longer_has_is_refused(copies_kb: KnowledgeBase, session: Session) -> None:
    with pytest.raises(InvalidInputError, match='the entry "gone" is no longer in the table'):
        rank_of_entry(copies_kb, session, "coffee", 3, 10_000, "gone")


def test_ranked_on_a_thread_a_large_table_gets_the_same_rank(
    copies_kb: KnowledgeBase, session: Session, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_gui.core.search import visibility

    # Above this size the ranking runs on the compute thread; a table that large takes a minute to build.
    monkeypatch.setattr(visibility, "INLINE_RANK_BYTES", 0)
    query = "the moon and the sea"
    order = lance_order(
        copies_kb.db_dir, copies_kb.name, np.asarray(embedder.embed_sync(query), np.float32), "l2"
    )
    place = rank_of_entry(copies_kb, session, query, 3, order[5], copies_kb.ids[order[5]])
    assert (place.rank, place.in_results, place.places_behind) == (6, False, 3)


def cosine_kb_with(
    tmp_path: Path, passage_vectors: Any, entry_id: str, vector: Any
) -> tuple[KnowledgeBase, Any]:
    """:data:`PASSAGES` and one more row ``entry_id`` of ``vector``, searched by cosine; and LanceDB's cosine
    flat search of the first passage's vector over it (the oracle)."""
    import lancedb

    ids = [*PASSAGES, entry_id]
    vectors = np.vstack([passage_vectors, vector[None, :]]).astype(np.float32)
    write_lance_table(tmp_path / "db", "notes", ids, [*PASSAGES.values(), entry_id[0]], vectors)
    entry = cosh_entry("notes", tmp_path / "db") | {"metric": "cosine"}
    registry = write_registry(tmp_path / "registry", [entry])
    kb = KnowledgeBase("notes", tmp_path / "db", registry, tuple(ids), (), vectors)
    table = lancedb.connect(str(tmp_path / "db")).open_table("notes")
    return kb, table.search(passage_vectors[0]).distance_type("cosine").limit(100).to_arrow()


def test_under_cosine_a_zero_vector_has_no_place(
    tmp_path: Path, session: Session, passage_vectors: Any
) -> None:
    """LanceDB's cosine distance to it is not a number (the oracle); the answer says why it has no rank,
    and with fewer rows than the limit there is no cut to miss."""
    kb, found = cosine_kb_with(tmp_path, passage_vectors, "zero", np.zeros(384, np.float32))
    distances = dict(zip(found.column("id").to_pylist(), found.column("_distance").to_pylist(), strict=True))
    assert not np.isfinite(distances.get("zero", np.nan))
    zero = rank_of_entry(kb, session, "coffee", 20, kb.ids.index("zero"), "zero")
    assert (zero.rank, zero.cutoff, zero.margin) == (None, None, None)
    assert zero.note == "it has no place in this search: its vector has zero length (no cosine distance)"


def test_under_cosine_a_vector_too_short_for_float32_has_no_place(
    tmp_path: Path, session: Session, passage_vectors: Any
) -> None:
    """A row of float32's smallest positive value is not zero, but every product with it rounds to 0:
    LanceDB's cosine distance to it is 0/0, and its flat search leaves the row out (the oracle)."""
    smallest = np.nextafter(np.float32(0), np.float32(1))
    kb, found = cosine_kb_with(tmp_path, passage_vectors, "faint", np.full(384, smallest, np.float32))
    assert found.num_rows == len(PASSAGES) and "faint" not in found.column("id").to_pylist()
    faint = rank_of_entry(kb, session, "coffee", 20, kb.ids.index("faint"), "faint")
    assert (faint.rank, faint.distance, faint.in_results) == (None, None, False)
    assert faint.rows == found.num_rows  # the rows LanceDB ranks
    assert faint.note == (
        "it has no place in this search: its vector is too short or too long for float32, "
        "and LanceDB's distance to it is undefined"
    )
