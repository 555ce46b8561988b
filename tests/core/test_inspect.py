"""Looking inside a knowledge base: its versions, what changed between two of them, its schema, browsing
an older version with a filter, and the map of its vectors. Real tables with a real history (appends,
deletes, updates, an overwrite), embedded with the real model; nothing in the knowledge base's
folder may change, and no version or tag may be added."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.base.errors import FilterError, InvalidInputError, ProjectionError
from recall_gui.core.session.session import Session
from tests.inspecttools import (
    BERLIN_AFTER,
    NAME,
    NEW_ROW,
    PARIS_2,
    SOURCES,
    TIDES_AFTER,
    History,
    lancedb_versions,
    write_history,
)
from tests.kbtools import PASSAGES, perturbed_target, snapshot_tree


@pytest.fixture
def history(tmp_path: Path, embedder: Any) -> History:
    return write_history(tmp_path / "kb", embedder)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def in_session(call: Any) -> Any:
    async def go() -> Any:
        async with Session() as session:
            return await call(session)

    return run(go())


def test_versions_are_listed_with_their_rows_and_tags(history: History) -> None:
    from recall_gui.core.tables.versions import list_versions

    versions = in_session(lambda s: list_versions(s, history.kb.target))
    assert [v.version for v in versions] == sorted(history.made_by)
    assert [v.rows for v in versions] == [12, 13, 12, 12, 12, 12]
    assert [v.latest for v in versions] == [False] * 5 + [True]
    assert [v.tags for v in versions if v.tags] == [(history.tag,)]
    assert versions[history.tagged_version - 1].tags == (history.tag,)
    assert versions[0].timestamp <= versions[-1].timestamp


def test_a_diff_by_id_names_rows_added_removed_and_changed(history: History) -> None:
    from recall_gui.core.inspect.version_diff import diff_versions

    target = history.kb.target
    whole = in_session(lambda s: diff_versions(s, target, 1))
    assert whole.to_json() == {
        "from": 1,
        "to": history.latest,
        "added": ["kyoto", "paris-2"],
        "removed": ["coffee", "unicode"],
        "changed": ["berlin", "tides"],
        "by": "id",
    }
    what = {change.id: change.what for change in whole.changes}
    assert what["tides"] == "content" and what["berlin"] == "content and vector"
    # One step at a time: each version did exactly what it was made for.
    steps = [in_session(lambda s, v=v: diff_versions(s, target, v, v + 1)).to_json() for v in range(1, 6)]
    assert [(d["added"], d["removed"], d["changed"]) for d in steps] == [
        (["paris-2"], [], []),
        ([], ["coffee"], []),
        ([], [], ["tides"]),
        ([], [], ["berlin"]),
        (["kyoto"], ["unicode"], []),  # the overwrite rewrote every row; only these two differ
    ]
    same = in_session(lambda s: diff_versions(s, target, 4, 4))
    assert same.changes == () and same.summary() == "0 added, 0 removed, 0 changed"


def test_a_changed_row_is_read_as_it_was_and_as_it_is(history: History) -> None:
    from recall_gui.core.inspect.version_diff import diff_versions, fetch_sides

    async def go(session: Session) -> Any:
        diff = await diff_versions(session, history.kb.target, 1)
        sides = {}
        for change in diff.changes:
            sides[change.id] = await fetch_sides(session, history.kb.target, diff, change)
        return sides

    sides = in_session(go)
    old, new = sides["tides"]
    assert old.content == PASSAGES["tides"] and new.content == TIDES_AFTER
    assert np.array_equal(np.asarray(old.vector), np.asarray(new.vector))  # only the text was updated
    old, new = sides["berlin"]
    assert (old.content, new.content) == (PASSAGES["berlin"], BERLIN_AFTER)
    assert not np.array_equal(np.asarray(old.vector), np.asarray(new.vector))
    assert sides["paris-2"][0] is None and sides["paris-2"][1].content == PARIS_2
    assert sides["kyoto"][1].content == NEW_ROW
    assert sides["coffee"][0].content == PASSAGES["coffee"] and sides["coffee"][1] is None


def test_a_table_without_ids_is_compared_by_content_and_says_so(tmp_path: Path, passage_vectors: Any) -> None:
    import lancedb
    import pyarrow as pa

    from recall_gui.core.inspect.version_diff import diff_versions
    from recall_gui.core.storage.target import TableTarget

    texts = list(PASSAGES.values())
    db = lancedb.connect(str(tmp_path))  # a table with only a text and a vector column: no id

    vectors = pa.FixedSizeListArray.from_arrays(pa.array(passage_vectors.astype(np.float32).ravel()), 384)
    table = db.create_table("plain", pa.table({"text": texts, "vector": vectors}))
    first = table.version
    table.delete(f"text = '{texts[0]}'")
    table.add(pa.table({"text": ["A brand new passage."], "vector": vectors.slice(1, 1)}))
    table.update(where=f"text = '{texts[2]}'", values={"vector": [0.5] * 384})
    diff = in_session(lambda s: diff_versions(s, TableTarget(str(tmp_path), "plain"), first))
    assert diff.by == "content"
    assert len(diff.added) == 1 and len(diff.removed) == 1 and len(diff.changed) == 1
    change = next(c for c in diff.changes if c.kind == "changed")
    assert change.what == "vector"


def test_an_unknown_version_is_refused_with_the_versions_there_are(history: History) -> None:
    from recall_gui.core.inspect.version_diff import diff_versions

    with pytest.raises(InvalidInputError, match=r"has no version 9 \(its versions: 1–6\)"):
        in_session(lambda s: diff_versions(s, history.kb.target, 9))


def test_the_schema_lists_every_column_its_type_role_and_indexes(history: History) -> None:
    import lancedb
    from lancedb.index import BTree

    from recall_gui.core.tables.schema_view import describe_schema

    lancedb.connect(str(history.kb.db_dir)).open_table(NAME).create_index("page", config=BTree())
    before = snapshot_tree(history.kb.db_dir)
    facts = in_session(lambda s: describe_schema(s, history.kb.target))
    by_name = {column.name: column for column in facts.columns}
    assert list(by_name) == ["id", "content", "vector", "source", "page", "meta", "meta.lang"]
    assert by_name["id"].role == "id" and by_name["content"].role == "text"
    vector = by_name["vector"]
    assert (vector.role, vector.width, vector.metric) == ("vector", 384, "l2")
    assert vector.arrow_type == "fixed_size_list<item: float>[384]"
    assert by_name["page"].arrow_type == "int64" and by_name["page"].nullable
    assert by_name["page"].indexes == ("page_idx (BTree)",)
    assert by_name["meta.lang"].depth == 1 and by_name["meta.lang"].arrow_type == "string"
    assert "vector" not in facts.filterable and "meta.lang" in facts.filterable
    assert snapshot_tree(history.kb.db_dir) == before


#: Version 2's rows: the twelve passages (page i, source doc{i % 3}.md, lang "en" for odd pages) and paris-2.
VERSION_2 = [(i, p, SOURCES[p], "en" if p % 2 else "fr") for p, i in enumerate(PASSAGES)] + [
    ("paris-2", 12, "doc0.md", "fr")
]


@pytest.mark.process
@pytest.mark.parametrize(
    ("where", "keeps"),
    [
        ("source = 'doc1.md'", lambda page, source, lang: source == "doc1.md"),
        ("page >= 9", lambda page, source, lang: page >= 9),
        ("meta.lang = 'en' AND page < 6", lambda page, source, lang: lang == "en" and page < 6),
    ],
)
def test_an_older_version_is_browsed_with_a_filter_as_it_was(
    history: History, where: str, keeps: Any
) -> None:
    from recall_gui.core.tables.browse import fetch_page

    page = in_session(lambda s: fetch_page(s, history.kb.target.at(2), offset=0, limit=50, where=where))
    expected = [i for i, p, source, lang in VERSION_2 if keeps(p, source, lang)]
    assert [row.id for row in page.rows] == expected
    assert "coffee" in [i for i, *_rest in VERSION_2]  # deleted in version 3: still there in version 2
    assert 0 < len(expected) < len(VERSION_2)


@pytest.mark.process
def test_a_bad_filter_says_why_in_one_line_and_offers_the_columns(history: History) -> None:
    from recall_gui.core.tables.browse import fetch_page

    def browse(where: str) -> Any:
        return in_session(lambda s: fetch_page(s, history.kb.target, offset=0, limit=5, where=where))

    with pytest.raises(FilterError) as caught:
        browse("pages < 3")
    assert caught.value.message == (
        "the filter 'pages < 3' cannot be used: there is no column named pages (did you mean page?)"
    )
    assert "id, content, source, page, meta, meta.lang" in (caught.value.hint or "")
    for statement, why in [
        ("page < 3; DROP TABLE notes", "';'"),
        ("page < 3 -- and more", "comment"),
        ("page < 3) OR (1 = 1", "closes a bracket"),
        ("source = 'a.md", "not closed"),
    ]:
        with pytest.raises(FilterError, match=why) as refused:
            browse(statement)
        assert "\n" not in refused.value.message
    with pytest.raises(FilterError, match="cannot be parsed"):
        browse("page <")


@pytest.mark.process
def test_a_selection_is_browsed_by_row_id_with_the_filters(history: History) -> None:
    from recall_gui.core.tables.browse import fetch_page
    from recall_gui.core.tables.selection import fetch_selected_page

    async def go(session: Session) -> Any:
        everything = await fetch_page(session, history.kb.target, offset=0, limit=50)
        chosen = np.array([row.row_id for row in everything.rows[::2]], np.uint64)
        page = await fetch_selected_page(session, history.kb.target, chosen, offset=0, limit=50)
        narrowed = await fetch_selected_page(
            session, history.kb.target, chosen, offset=0, limit=50, where="source = 'doc0.md'"
        )
        later = await fetch_selected_page(session, history.kb.target, chosen, offset=2, limit=2)
        return everything, page, narrowed, later

    everything, page, narrowed, later = in_session(go)
    assert [row.id for row in page.rows] == [row.id for row in everything.rows[::2]]
    assert page.total == len(everything.rows[::2])
    assert all(row.extra["source"] == "doc0.md" for row in narrowed.rows) and 0 < narrowed.total < page.total
    assert [row.id for row in later.rows] == [row.id for row in page.rows[2:4]]


@pytest.mark.process
def test_inspecting_writes_nothing_restores_nothing_and_tags_nothing(history: History, embedder: Any) -> None:
    from recall_gui.core.inspect.table_map import build_map
    from recall_gui.core.inspect.version_diff import diff_versions
    from recall_gui.core.search.harness import Harness
    from recall_gui.core.tables.browse import fetch_page, fetch_row
    from recall_gui.core.tables.schema_view import describe_schema
    from recall_gui.core.tables.versions import list_versions

    kb = history.kb
    files, versions = snapshot_tree(kb.db_dir), lancedb_versions(kb.db_dir)

    async def everything(session: Session) -> None:
        harness = Harness(kb.registry_dir, session=session)
        entry = harness.resolve_active(NAME)
        for version in sorted(history.made_by):
            pinned = kb.target.at(version)
            page = await fetch_page(session, pinned, offset=0, limit=20, where="page >= 0")
            await fetch_row(session, pinned, page.rows[0].row_id)
            await harness.search_database(entry, "capital of France", 3, version=version, where="page < 20")
            await describe_schema(session, pinned)
            await build_map(session, pinned, "pca")
        await list_versions(session, kb.target)
        await diff_versions(session, kb.target, 1, 3)
        latest = await harness.search_database(entry, "capital of France", 3)
        assert latest.result.table_version == history.latest

    in_session(everything)
    assert snapshot_tree(kb.db_dir) == files
    assert lancedb_versions(kb.db_dir) == versions


# --- the map ------------------------------------------------------------------------------------------


@pytest.fixture
def perturbed(tmp_path: Path, passage_vectors: Any) -> Any:
    return perturbed_target(tmp_path, passage_vectors)


def test_the_pca_map_is_the_vectors_two_leading_components(history: History) -> None:
    import lancedb

    from recall_gui.core.inspect.table_map import build_map

    table_map = in_session(lambda s: build_map(s, history.kb.target.at(1), "pca"))
    data = lancedb.connect(str(history.kb.db_dir)).open_table(NAME)
    data.checkout(1)
    rows = data.search().with_row_id(True).limit(None).to_arrow()
    matrix = np.vstack(rows.column("vector").to_numpy(zero_copy_only=False)).astype(np.float64)
    centred = matrix - matrix.mean(axis=0)
    _u, _s, vt = np.linalg.svd(centred, full_matrices=False)
    expected = centred @ vt[:2].T
    points = table_map.index_of(rows.column("_rowid").to_numpy())
    assert len(table_map) == 12 and not table_map.sampled and table_map.version == 1
    assert sorted(points.tolist()) == list(range(12))
    for axis in range(2):  # the same axes up to their sign
        got = table_map.positions[points, axis].astype(np.float64)
        assert abs(np.corrcoef(got, expected[:, axis])[0, 1]) > 0.9999
    placed = table_map.projection.place(matrix[0].astype(np.float32))
    assert placed == pytest.approx(tuple(table_map.positions[points[0]]), abs=1e-4)


@pytest.mark.slow
def test_the_t_sne_map_is_the_same_for_a_seed_and_kept_per_version(perturbed: Any, tmp_path: Path) -> None:
    from recall_gui.core.base.paths import app_cache_dir
    from recall_gui.core.inspect.table_map import build_map

    stages: list[str] = []
    first = in_session(
        lambda s: build_map(s, perturbed, "tsne", seed=3, progress=lambda f, t: stages.append(t))
    )
    again = in_session(lambda s: build_map(s, perturbed, "tsne", seed=3))  # a new session: from the disk
    other = in_session(lambda s: build_map(s, perturbed, "pca", seed=3))
    assert len(first) == 240 and first.method == "tsne" and not first.from_cache
    assert again.from_cache and np.array_equal(again.positions, first.positions)
    assert np.array_equal(again.row_ids, first.row_ids)
    assert any("neighbours" in stage for stage in stages) and any("laying out" in stage for stage in stages)
    assert list((app_cache_dir() / "maps").glob("*.npz"))
    assert not np.allclose(other.positions, first.positions)
    from recall_gui.core.inspect.layout import neighbour_layout

    matrix = np.random.default_rng(1).normal(size=(200, 16)).astype(np.float32)
    once, twice = neighbour_layout(matrix, "l2", 5), neighbour_layout(matrix, "l2", 5)
    assert np.array_equal(once.positions, twice.positions)
    assert not np.array_equal(once.positions, neighbour_layout(matrix, "l2", 6).positions)


def test_a_t_sne_map_stops_when_cancelled(perturbed: Any) -> None:
    from recall_gui.core.inspect.table_map import build_map

    cancel = threading.Event()

    def progress(fraction: float, _stage: str) -> None:
        if fraction > 0.5:
            cancel.set()

    with pytest.raises(asyncio.CancelledError):
        in_session(lambda s: build_map(s, perturbed, "tsne", seed=9, progress=progress, cancel=cancel))
    with pytest.raises(ProjectionError, match="at least"):
        in_session(lambda s: build_map(s, perturbed, "tsne", bound=5))


def test_a_big_table_is_mapped_from_a_seeded_sample_and_says_so(perturbed: Any) -> None:
    from recall_gui.core.inspect.table_map import build_map

    one = in_session(lambda s: build_map(s, perturbed, "pca", bound=50, seed=1))
    two = in_session(lambda s: build_map(s, perturbed, "pca", bound=50, seed=1))
    assert one.sampled and len(one) == 50 and one.total_rows == 240
    assert one.describe().startswith("a sample of 50 of 240 rows")
    assert np.array_equal(one.row_ids, two.row_ids) and np.array_equal(one.positions, two.positions)


def test_points_show_their_id_and_first_line_and_colour_by_a_column(history: History) -> None:
    from recall_gui.core.inspect.table_map import build_map, colour_by, point_labels

    async def go(session: Session) -> Any:
        table_map = await build_map(session, history.kb.target, "pca")
        labels = await point_labels(session, history.kb.target, [int(r) for r in table_map.row_ids])
        by_source = await colour_by(session, history.kb.target, table_map, "source")
        by_page = await colour_by(session, history.kb.target, table_map, "page")
        by_lang = await colour_by(session, history.kb.target, table_map, "meta.lang")
        return table_map, labels, by_source, by_page, by_lang

    table_map, labels, by_source, by_page, by_lang = in_session(go)
    assert sorted(identifier for identifier, _line in labels.values()) == sorted(
        [i for i in PASSAGES if i not in ("coffee", "unicode")] + ["paris-2", "kyoto"]
    )
    assert ("tides", TIDES_AFTER) in labels.values()
    assert by_source.kind == "category" and sorted(by_source.labels) == ["doc0.md", "doc1.md", "doc2.md"]
    assert by_page.kind == "number" and (by_page.low, by_page.high) == (0.0, 13.0)
    assert sorted(by_lang.labels) == ["en", "fr"] and (by_lang.codes >= 0).all()
    kyoto = next(row for row, (identifier, _l) in labels.items() if identifier == "kyoto")
    at = int(table_map.index_of([kyoto])[0])
    assert by_page.codes[at] == pytest.approx(1.0)
    x, y = table_map.positions[at]
    assert table_map.nearest(float(x) + 1e-4, float(y), 1e-3, 1e-3, 3) == at


def test_closing_the_session_stops_a_t_sne_run(perturbed: Any) -> None:
    from recall_gui.core.inspect.table_map import build_map

    async def go() -> float:
        session = Session()
        underway = asyncio.Event()
        loop = asyncio.get_running_loop()

        def progress(fraction: float, _stage: str) -> None:
            if fraction > 0.45:
                underway.set()

        task = loop.create_task(build_map(session, perturbed, "tsne", seed=11, progress=progress))
        await underway.wait()
        workers = [t for t in threading.enumerate() if t.name.startswith("recall-inspect")]
        await session.aclose()
        closed = loop.time()
        await asyncio.to_thread(lambda: [worker.join(30) for worker in workers])
        assert workers and not any(worker.is_alive() for worker in workers)
        stopped_after = loop.time() - closed
        with pytest.raises(asyncio.CancelledError):
            await task
        return stopped_after

    assert run(go()) < 10.0
