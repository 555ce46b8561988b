"""Browsing a table read-only: its description, pages by offset, a filter, one row in full — and on a
1M-row table, without ever holding the table in memory."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.registry.registry import load_registry
from recall_gui.core.search.health import check_health
from recall_gui.core.session.session import Session
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.browse import fetch_page
from tests.coretools import describe, in_session, read_page, read_row
from tests.kbtools import KnowledgeBase, view_entry, write_lance_table

ROOT = Path(__file__).resolve().parents[2]

ODD_TEXTS = {
    "quote": "It's a quote: O'Brien said \"hi\".",
    "percent": "Progress: 100%_done with under_scores.",
    "backslash": r"A Windows path C:\Users\name and a \n that is not a newline.",
    "rtl": "مرحبا بالعالم — Arabic text, right to left.",
    "emoji": "Rocket launch 🚀 and fire 🔥.",
    "control": "Bell\x07 and escape\x1b[0m inside.",
}


@pytest.fixture
def odd_kb(tmp_path: Path, embedder: Any) -> tuple[Path, str]:
    ids, texts = list(ODD_TEXTS), list(ODD_TEXTS.values())
    vectors = np.vstack(embedder.embed_many(texts))
    write_lance_table(tmp_path / "odd", "odd", ids, texts, vectors, extra={"n": list(range(len(ids)))})
    return tmp_path / "odd", "odd"


def test_describe_gives_schema_rows_indexes_and_version(kb: KnowledgeBase) -> None:
    info = describe(str(kb.db_dir), kb.name)
    assert info.row_count == len(kb.ids)
    assert info.schema == (
        ("id", "string"),
        ("content", "string"),
        ("vector", "fixed_size_list<item: float>[384]"),
    )
    assert (info.columns.id, info.columns.content, info.columns.vector, info.columns.vector_dim) == (
        "id",
        "content",
        "vector",
        384,
    )
    assert info.indexes == () and info.default_metric == "l2"
    assert info.version >= 1


def test_describe_lists_indexes_with_their_metric(tmp_path: Path, kb: KnowledgeBase) -> None:
    import lancedb
    from lancedb.index import BTree, IvfFlat

    rng = np.random.default_rng(7)
    vectors = np.repeat(kb.vectors, 50, axis=0) + rng.normal(0, 0.01, (600, 384)).astype(np.float32)
    ids = [f"{kb.ids[i % 12]}~{i}" for i in range(600)]
    write_lance_table(tmp_path / "ix", "ix", ids, [kb.contents[i % 12] for i in range(600)], vectors)
    table = lancedb.connect(str(tmp_path / "ix")).open_table("ix")
    table.create_index("id", config=BTree())
    table.create_index("vector", config=IvfFlat(distance_type="cosine", num_partitions=4))
    info = describe(str(tmp_path / "ix"), "ix")
    by_column = {ix.columns: ix for ix in info.indexes}
    assert by_column[("vector",)].metric == "cosine"
    assert "IVF" in by_column[("vector",)].index_type.upper()
    assert ("id",) in by_column
    assert info.default_metric == "cosine"


def test_pages_cover_every_row_once_in_order_without_vectors(kb: KnowledgeBase) -> None:
    rows = []
    for offset in range(0, 12, 5):
        page = read_page(str(kb.db_dir), kb.name, offset=offset, limit=5)
        assert page.total == 12 and page.offset == offset
        rows.extend(page.rows)
    assert [r.id for r in rows] == list(kb.ids)
    assert [r.offset for r in rows] == list(range(12))
    assert [r.content for r in rows] == list(kb.contents)
    assert all("vector" not in r.extra for r in rows)


@pytest.mark.parametrize(
    ("offset", "limit", "expected"),
    [(12, 5, 0), (100, 5, 0), (-3, 2, 2), (10, 5, 2), (0, 0, 0), (0, -1, 0)],
)
def test_page_bounds_are_clamped(kb: KnowledgeBase, offset: int, limit: int, expected: int) -> None:
    page = read_page(str(kb.db_dir), kb.name, offset=offset, limit=limit)
    assert len(page.rows) == expected and page.total == 12


def test_filter_matches_id_or_content_case_insensitively(kb: KnowledgeBase) -> None:
    page = read_page(str(kb.db_dir), kb.name, offset=0, limit=50, filter_text="  PARIS ")
    assert [r.id for r in page.rows] == ["paris"] and page.total == 1
    page = read_page(str(kb.db_dir), kb.name, offset=0, limit=50, filter_text="pw-")
    assert [r.id for r in page.rows] == ["pw-reset", "pw-rules"]
    page = read_page(str(kb.db_dir), kb.name, offset=1, limit=50, filter_text="capital")
    assert page.total == 2 and [r.id for r in page.rows] == ["berlin"] and page.rows[0].offset == 1
    empty = read_page(str(kb.db_dir), kb.name, offset=0, limit=0, filter_text="capital")
    assert empty.rows == () and empty.total == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("o'brien", ["quote"]),
        ('"hi"', ["quote"]),
        ("100%_", ["percent"]),
        ("%", ["percent"]),
        ("_", ["percent"]),
        ("c:\\users", ["backslash"]),
        ("\\n", ["backslash"]),
        ("بالعالم", ["rtl"]),
        ("🚀", ["emoji"]),
        ("\x1b[0m", ["control"]),
        ("' OR 1=1 --", []),
        ("`", []),
    ],
)
def test_filter_text_is_a_literal_never_sql(odd_kb: tuple[Path, str], text: str, expected: list[str]) -> None:
    db, table = odd_kb
    page = read_page(str(db), table, offset=0, limit=50, filter_text=text)
    assert [r.id for r in page.rows] == expected
    assert page.total == len(expected)


def test_metadata_columns_come_with_each_row(odd_kb: tuple[Path, str]) -> None:
    db, table = odd_kb
    page = read_page(str(db), table, offset=0, limit=2)
    assert [r.extra for r in page.rows] == [{"n": 0}, {"n": 1}]


def _containers(root: object) -> int:
    """How many objects other than plain values (text, numbers, None) ``root`` holds, itself included."""
    seen, todo = set(), [root]
    while todo:
        found = todo.pop()
        if id(found) in seen or isinstance(found, str | bytes | int | float | type) or found is None:
            continue
        seen.add(id(found))
        todo.extend(gc.get_referents(found))
    return len(seen)


def test_a_page_is_a_few_objects_however_many_rows_it_holds(odd_kb: tuple[Path, str]) -> None:
    """Paging through a long table must not leave a garbage collector thousands of objects per page."""
    db, table = odd_kb
    small, large = (read_page(str(db), table, offset=0, limit=n) for n in (2, 6))
    assert (len(small), len(large)) == (2, len(ODD_TEXTS)) == (2, 6)
    assert _containers(large) == _containers(small)
    assert [row.extra for row in large.rows][:2] == [{"n": 0}, {"n": 1}]


def test_one_row_in_full_by_row_id(kb: KnowledgeBase) -> None:
    page = read_page(str(kb.db_dir), kb.name, offset=4, limit=1)
    (row,) = page.rows
    assert row.row_id is not None
    hit = read_row(str(kb.db_dir), kb.name, row.row_id)
    assert hit is not None and hit.id == row.id == kb.ids[4]
    assert hit.vector is not None
    np.testing.assert_allclose(np.asarray(hit.vector), kb.vectors[4], rtol=1e-6)
    assert read_row(str(kb.db_dir), kb.name, 10_000) is None


def test_health_of_a_good_and_of_broken_databases(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path
) -> None:
    from tests.kbtools import cosh_entry, write_registry

    kb = make_kb()
    write_registry(
        kb.registry_dir,
        [
            cosh_entry(kb.name, kb.db_dir),
            cosh_entry("gone", tmp_path / "gone"),
            {**cosh_entry("notable", kb.db_dir), "table": "nope"},
            view_entry(kb, "nomodel", model="AllMiniLML12V2"),
            view_entry(kb, "badcols") | {"content_column": "body"},
        ],
    )
    registry = load_registry(kb.registry_dir)

    async def all_health(session: Session) -> dict[str, Any]:
        return {e.name: await check_health(session, e) for e in registry.databases}

    health = in_session(all_health)
    assert health[kb.name].ok and health[kb.name].searchable and health[kb.name].info is not None
    assert health["gone"].status("path") == "failed" and health["gone"].status("table") == "unknown"
    assert "does not exist" in health["gone"].summary
    assert (
        health["notable"].status("table") == "failed" and "tables there: notes" in health["notable"].summary
    )
    assert health["nomodel"].status("model") == "failed" and health["nomodel"].status("dimension") == "ok"
    assert health["nomodel"].status("table") == "ok" and not health["nomodel"].searchable
    assert 'content column "body" is not in the table' in health["badcols"].summary


MILLION_PROBE = """
import asyncio, json, sys, time
import psutil
from recall_gui.core.tables.browse import describe_table, fetch_page
from recall_gui.core.session.session import Session
from recall_gui.core.storage.target import TableTarget
uri, table = sys.argv[1], sys.argv[2]
where = TableTarget(uri, table)
def high_water_mark():
    with open("/proc/self/status") as status:
        line = next(l for l in status if l.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024
async def warm():
    async with Session() as session:
        await describe_table(session, where)
        await fetch_page(session, where, offset=0, limit=1)  # the query builders: the lancedb package
asyncio.run(warm())  # warm: libraries and the table's metadata
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # reset the high-water mark to the current RSS
baseline = psutil.Process().memory_info().rss
started = time.perf_counter()
out = {}
async def browse():
    async with Session() as session:
        info = await describe_table(session, where)
        out["rows"] = info.row_count
        last = await fetch_page(session, where, offset=info.row_count - 50, limit=50)
        out["last_ids"] = [last.rows[0].id, last.rows[-1].id]
        middle = await fetch_page(session, where, offset=500_000, limit=100)
        out["middle_id"] = middle.rows[0].id
        found = await fetch_page(session, where, offset=0, limit=20, filter_text="row 0999998")
        out["filtered"] = [r.id for r in found.rows]
        out["filtered_total"] = found.total
asyncio.run(browse())
out["seconds"] = time.perf_counter() - started
out["peak_growth"] = high_water_mark() - baseline
print(json.dumps(out))
"""


@pytest.mark.process
@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc to measure peaks")
def test_a_million_rows_are_browsed_without_loading_the_table(tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    rows, dim = 1_000_000, 4
    filler = "x" * 180
    contents = pa.array([f"row {i:07d} {filler}" for i in range(rows)], pa.utf8())
    content_bytes = contents.nbytes
    vectors = np.random.default_rng(1).random((rows, dim), dtype=np.float32)
    data = pa.table(
        {
            "id": pa.array([f"id-{i}" for i in range(rows)], pa.utf8()),
            "content": contents,
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), dim),
        }
    )
    lancedb.connect(str(tmp_path / "big")).create_table("big", data)
    del contents, vectors, data
    done = subprocess.run(
        [sys.executable, "-c", MILLION_PROBE, str(tmp_path / "big"), "big"],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["rows"] == rows
    assert out["last_ids"] == ["id-999950", "id-999999"]
    assert out["middle_id"] == "id-500000"
    assert out["filtered"] == ["id-999998"] and out["filtered_total"] == 1
    # Loading the content column alone (~190 MB) would grow the process by at least that much; paging and
    # filtering stream it in batches.
    bound = content_bytes * 3 // 4
    print(
        f"\n1M-row browse session: {out['seconds']:.2f} s, peak RSS growth "
        f"{out['peak_growth'] / 2**20:.1f} MiB (bound {bound / 2**20:.0f} MiB, "
        f"content column {content_bytes / 2**20:.0f} MiB)"
    )
    assert out["peak_growth"] < bound


def test_rows_are_counted_once_per_table_version_and_filter(tmp_path: Path, embedder: Any) -> None:
    """Paging reads the row count with every page; a version never changes, so it is counted once per
    version, and a row another program adds (a new version) is counted at the next page."""
    import lancedb

    texts = [f"passage number {n}" for n in range(5)]
    vectors = np.vstack(embedder.embed_many(texts))
    write_lance_table(tmp_path, "t", [f"p{n}" for n in range(5)], texts, vectors)

    where = TableTarget(str(tmp_path), "t")

    async def browse(session: Session) -> dict[str, Any]:
        opened = await session.tables.open(where)
        calls: list[str | None] = []

        class Counting:  # the table that counts rows (LanceDB's compiled one): its counts are noted
            def __init__(self, table: Any) -> None:
                self.table = table

            async def count_rows(self, where: str | None = None) -> int:
                calls.append(where)
                return int(await self.table.count_rows(where))

            def __getattr__(self, name: str) -> Any:
                return getattr(self.table, name)

        opened.native = Counting(opened.native)
        totals = [(await fetch_page(session, where, offset=o, limit=2)).total for o in (0, 2, 4)]
        filtered = [(await fetch_page(session, where, offset=0, limit=2, filter_text="number")).total]
        filtered.append((await fetch_page(session, where, offset=2, limit=2, filter_text="number")).total)
        before = list(calls)
        vector = embedder.embed_many(["one more"])[0]
        other_program = lancedb.connect(str(tmp_path)).open_table("t")
        other_program.add([{"id": "p5", "content": "one more", "vector": vector.tolist()}])
        grown = await fetch_page(session, where, offset=4, limit=2)
        return {"totals": totals, "filtered": filtered, "calls": before, "grown": (grown.total, len(grown))}

    found = in_session(browse)
    assert found["totals"] == [5, 5, 5] and found["filtered"] == [5, 5]
    assert len(found["calls"]) == 2 and found["calls"][0] is None  # once in all, once for the filter
    assert found["grown"] == (6, 2)


def test_a_page_says_which_version_it_was_read_from(tmp_path: Path, embedder: Any) -> None:
    """After another program adds a row, the next page is of the new version (the window's header follows
    it); a page of a chosen older version, or of chosen rows, says that version; the latest is known
    whatever version is open."""
    import lancedb

    from recall_gui.core.tables import fetch_selected_page, latest_version

    texts = [f"passage number {n}" for n in range(3)]
    write_lance_table(tmp_path, "t", ["p0", "p1", "p2"], texts, np.vstack(embedder.embed_many(texts)))
    where = TableTarget(str(tmp_path), "t")
    other_program = lancedb.connect(str(tmp_path)).open_table("t")
    first = other_program.version

    async def browse(session: Session) -> dict[str, Any]:
        before = await fetch_page(session, where, offset=0, limit=10)
        vector = embedder.embed_many(["one more"])[0]
        other_program.add([{"id": "p3", "content": "one more", "vector": vector.tolist()}])
        after = await fetch_page(session, where, offset=0, limit=10)
        older = await fetch_page(session, where.at(first), offset=0, limit=10)
        chosen = await fetch_selected_page(
            session, where.at(first), np.array([0], np.uint64), offset=0, limit=10
        )
        empty = await fetch_page(session, where.at(first), offset=10, limit=10)
        return {
            "pages": [(page.version, page.total) for page in (before, after, older, chosen, empty)],
            "latest": await latest_version(session, where.at(first)),
        }

    found = in_session(browse)
    latest = lancedb.connect(str(tmp_path)).open_table("t")
    assert found["pages"] == [(first, 3), (latest.version, 4), (first, 3), (first, 1), (first, 3)]
    assert found["latest"] == latest.version != first
