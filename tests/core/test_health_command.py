"""`recall-gui health`: LanceDB's own statistics and an independent scan (NumPy, here) as the oracles, on a
table built with bad vectors, empty and duplicated contents, several fragments and indexes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from lancedb.index import FTS, IvfPq

from tests.core.test_cli import cli
from tests.kbtools import snapshot_tree

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

WIDTH = 384


def rows(start: int, count: int, seed: int) -> pa.Table:
    generator = np.random.default_rng(seed)
    matrix = generator.normal(size=(count, WIDTH)).astype(np.float32)
    ids = [f"row-{start + n}" for n in range(count)]
    contents = [f"passage number {start + n} about something" for n in range(count)]
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), WIDTH)
    return pa.table({"id": ids, "content": contents, "vector": vectors})


def odd_rows() -> pa.Table:
    """A zero vector, an infinite one, a missing one, an empty content and two contents that are the same."""
    matrix = np.random.default_rng(9).normal(size=(6, WIDTH)).astype(np.float32)
    matrix[0] = 0
    matrix[1, 5] = np.inf  # LanceDB refuses to add NaN, not infinity
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), WIDTH)
    vectors = pa.array(
        [None if n == 2 else vectors[n].as_py() for n in range(6)], pa.list_(pa.float32(), WIDTH)
    )
    return pa.table(
        {
            "id": ["zero", "infinite", "missing", "empty", "twin-a", "twin-b"],
            "content": ["z", "n", "m", "   ", "the very same words", "the very same words"],
            "vector": vectors,
        }
    )


def build(folder: Path) -> Any:
    db = lancedb.connect(str(folder))
    table = db.create_table("kb", rows(0, 300, 1))
    table.create_index("vector", config=IvfPq(distance_type="l2", num_partitions=1, num_sub_vectors=8))
    table.create_index("content", config=FTS())
    table.add(rows(300, 20, 2))  # after the indexes: not covered by them
    table.add(odd_rows())
    return table


def independent_scan(table: Any) -> dict[str, Any]:
    data = table.to_arrow()
    ids = data["id"].to_pylist()
    found: dict[str, Any] = {"zero_norm": [], "missing": [], "not_finite": [], "empty": []}
    found |= {"too_short": [], "too_long": []}
    limits = np.finfo(np.float32)
    for name, vector in zip(ids, data["vector"].to_pylist(), strict=True):
        if vector is None:
            found["missing"].append(name)
        elif not np.isfinite(vector).all():
            found["not_finite"].append(name)
        elif not np.any(vector):
            found["zero_norm"].append(name)
        elif sum(x * x for x in vector) < limits.tiny:
            found["too_short"].append(name)
        elif sum(x * x for x in vector) > limits.max:
            found["too_long"].append(name)
    by_content: dict[str, list[str]] = {}
    for name, content in zip(ids, data["content"].to_pylist(), strict=True):
        if not content.strip():
            found["empty"].append(name)
        else:
            by_content.setdefault(content, []).append(name)
    found["duplicate_groups"] = [group for group in by_content.values() if len(group) > 1]
    return found


def test_health_reports_what_lancedb_and_an_independent_scan_find(tmp_path: Path) -> None:
    folder = tmp_path / "lancedb"
    table = build(folder)
    before = snapshot_tree(folder)
    done = cli("health", "--path", str(folder), "--table", "kb", "--json")
    assert done.returncode == 1, done.stderr  # something is listed
    report = json.loads(done.stdout)
    stats = table.stats()
    assert report["rows"] == table.count_rows() == 326
    assert report["versions"] == len(table.list_versions())
    assert report["fragments"] == {
        "count": stats["fragment_stats"]["num_fragments"],
        "small": stats["fragment_stats"]["num_small_fragments"],
    }
    expected_indices = sorted(
        (index.name, table.index_stats(index.name).num_unindexed_rows) for index in table.list_indices()
    )
    assert sorted((i["name"], i["unindexed_rows"]) for i in report["indices"]) == expected_indices
    assert all(unindexed == 26 for _name, unindexed in expected_indices)
    scan = independent_scan(table)
    assert report["vectors"] == {
        "width": WIDTH,
        "zero_norm": scan["zero_norm"],
        "missing": scan["missing"],
        "not_finite": scan["not_finite"],
        "too_short": scan["too_short"],
        "too_long": scan["too_long"],
    }
    assert report["content"] == {"empty": scan["empty"], "duplicate_groups": scan["duplicate_groups"]}
    assert scan["duplicate_groups"] == [["twin-a", "twin-b"]]
    assert any("26 rows are not in the index" in warning for warning in report["warnings"])
    assert snapshot_tree(folder) == before  # nothing written: no optimize, no index


def test_a_healthy_table_exits_0_and_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "lancedb"
    lancedb.connect(str(folder)).create_table("kb", rows(0, 50, 3))
    done = cli("health", "--path", str(folder), "--table", "kb")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "50 rows, 1 version, 1 fragment (1 small), vectors of width 384"
    assert done.stdout.splitlines()[-1] == "healthy"


def twin_table(folder: Path) -> None:
    """A sound table whose only blemish is one pair of entries with the same content."""
    table = rows(0, 30, 4)
    contents = table.column("content").to_pylist()
    contents[7] = contents[3]
    lancedb.connect(str(folder)).create_table("kb", table.set_column(1, "content", pa.array(contents)))


def test_one_pair_of_identical_contents_does_not_fail_by_default(tmp_path: Path) -> None:
    """A CI step on a sound knowledge base passes; the pair is still listed, and --fail-on can make it
    fail."""
    folder = tmp_path / "lancedb"
    twin_table(folder)
    where = ("health", "--path", str(folder), "--table", "kb")
    done = cli(*where)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "the same content (2): row-3, row-7" in lines
    assert lines[-1] == "something is listed above (duplicates: --fail-on does not fail on it)"
    for kinds, status in (("duplicates", 1), ("all", 1), ("vectors,empty", 0), ("none", 0)):
        done = cli(*where, "--fail-on", kinds)
        assert done.returncode == status, (kinds, done.stdout, done.stderr)
    assert cli(*where, "--fail-on", "duplicates").stdout.splitlines()[-1] == (
        "something is listed above (duplicates: fails)"
    )


def test_fail_on_chooses_what_fails_on_a_table_with_every_kind(tmp_path: Path) -> None:
    """Bad vectors fail by default; each kind listed fails when named and only then."""
    folder = tmp_path / "lancedb"
    build(folder)
    where = ("health", "--path", str(folder), "--table", "kb", "--json")
    assert cli(*where).returncode == 1
    for kinds, status in (
        ("none", 0),
        ("model", 0),
        ("empty", 1),
        ("duplicates", 1),
        ("advice", 1),
        ("vectors", 1),
    ):
        assert cli(*where, "--fail-on", kinds).returncode == status, kinds


def test_an_unknown_kind_is_refused_before_the_scan(tmp_path: Path) -> None:
    folder = tmp_path / "lancedb"
    twin_table(folder)
    done = cli("health", "--path", str(folder), "--table", "kb", "--fail-on", "vectors,dupes")
    assert done.returncode == 2 and done.stdout == ""  # not 1: that says the table is unhealthy
    assert "--fail-on 'vectors,dupes' is not a list of kinds (dupes unknown)" in done.stderr
    assert "advice" in done.stderr  # the hint names the kinds


def test_vectors_too_short_or_too_long_are_vectors_not_advice() -> None:
    from recall_gui.core.search.health_scan import HealthReport

    for field in ("too_short", "too_long"):
        report = HealthReport(**{field: ["a"]})  # type: ignore[arg-type]
        report.warnings.append("1 vector is too short or too long for float32")
        assert report.listed_kinds() == {"vectors"}
