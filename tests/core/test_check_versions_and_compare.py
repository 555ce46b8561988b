"""`check --versions` (which version broke a check) and `compare` (A/B), against LanceDB's own answers on
each version and knowledge base."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import lancedb
import pytest

from tests.core.test_cli import cli
from tests.kbtools import EXACT_MODEL_JSON, KnowledgeBase, snapshot_tree

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

FRANCE = "What is the capital of France?"
PASSWORD = "How do I change my password?"


def golden(tmp_path: Path, checks: list[dict[str, Any]]) -> Path:
    path = tmp_path / "golden.json"
    path.write_text(json.dumps({"checks": checks}), encoding="utf-8")
    return path


def lance_ids(
    embedder: Any, db_dir: Path, table: str, query: str, limit: int, version: int | None = None
) -> list[str]:
    """The oracle: LanceDB's flat search (l2, as the registry's entries use) with the real model."""
    opened = lancedb.connect(str(db_dir)).open_table(table)
    if version is not None:
        opened.checkout(version)
    found = opened.search(embedder.embed_sync(query)).distance_type("l2").limit(limit).to_list()
    return [row["id"] for row in found]


def remove_row(kb: KnowledgeBase, entry_id: str) -> None:
    """Another program deletes a row: version 2 of the table."""
    lancedb.connect(str(kb.db_dir)).open_table(kb.name).delete(f"id = '{entry_id}'")


def by_hand(ids: list[str], expect: list[str], limit: int) -> dict[str, float]:
    ranks = [ids.index(e) + 1 for e in expect if e in ids]
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(len(expect), limit) + 1))
    return {
        "recall": len(ranks) / len(expect),
        "reciprocal_rank": 1 / min(ranks) if ranks else 0.0,
        "ndcg": sum(1 / math.log2(r + 1) for r in ranks) / ideal,
    }


def test_check_versions_says_which_version_broke_a_check(
    kb: KnowledgeBase, tmp_path: Path, embedder: Any
) -> None:
    remove_row(kb, "paris")
    path = golden(
        tmp_path,
        [
            {"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3},
            {"db_name": kb.name, "query": PASSWORD, "expect": ["pw-reset"], "limit": 3},
        ],
    )
    before = snapshot_tree(kb.db_dir)
    done = cli("check", "--registry", str(kb.registry_dir), "--versions", "--json", str(path))
    assert done.returncode == 1, done.stderr  # the latest version fails a check
    report = json.loads(done.stdout)
    assert [(v["db_name"], v["version"], v["passed"], v["failed"]) for v in report["versions"]] == [
        (kb.name, 1, 2, 0),
        (kb.name, 2, 1, 1),
    ]
    for check, (query, expect) in zip(
        report["checks"], ((FRANCE, "paris"), (PASSWORD, "pw-reset")), strict=True
    ):
        assert [b["version"] for b in check["by_version"]] == [1, 2]
        for run in check["by_version"]:
            ids = lance_ids(embedder, kb.db_dir, kb.name, query, 3, run["version"])
            rank = ids.index(expect) + 1 if expect in ids else None
            assert run["expected"] == [{"id": expect, "rank": rank}]
            assert run["passed"] is (rank is not None)
            assert run["metrics"] == by_hand(ids, [expect], 3)
    plain = cli("check", "--registry", str(kb.registry_dir), "--versions", str(path))
    assert f'broke at version 2: {kb.name}  "{FRANCE}"' in plain.stdout.splitlines()
    assert snapshot_tree(kb.db_dir) == before  # old versions are read-only checkouts


def test_compare_a_version_with_the_latest_lists_what_was_lost(
    kb: KnowledgeBase, tmp_path: Path, embedder: Any
) -> None:
    remove_row(kb, "paris")
    path = golden(tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3}])
    done = cli("compare", "--registry", str(kb.registry_dir), "--version", "1", "--json", str(path))
    assert done.returncode == 1, done.stderr  # B lost the expected id A had
    report = json.loads(done.stdout)
    a_ids = lance_ids(embedder, kb.db_dir, kb.name, FRANCE, 3, 1)
    b_ids = lance_ids(embedder, kb.db_dir, kb.name, FRANCE, 3)
    assert report["a"]["metrics"] == {
        "recall": 1.0,
        "mrr": 1 / (a_ids.index("paris") + 1),
        "ndcg": by_hand(a_ids, ["paris"], 3)["ndcg"],
    }
    assert report["b"]["metrics"] == {"recall": 0.0, "mrr": 0.0, "ndcg": 0.0}
    (check,) = report["checks"]
    a_expected = [{"id": "paris", "rank": a_ids.index("paris") + 1}]
    assert check["a"] == {"passed": True, "expected": a_expected, "model": EXACT_MODEL_JSON}
    assert check["b"] == {
        "passed": False,
        "expected": [{"id": "paris", "rank": None}],
        "model": EXACT_MODEL_JSON,
    }
    assert check["lost"] == [i for i in a_ids if i not in b_ids]
    assert check["gained"] == [i for i in b_ids if i not in a_ids]


def test_compare_with_another_knowledge_base_uses_its_own_search(
    make_kb: Any, tmp_path: Path, embedder: Any
) -> None:
    kb = make_kb()
    other = make_kb(name="notes")  # the same entries in another folder, registered elsewhere
    remove_row(other, "pw-reset")
    path = golden(tmp_path, [{"db_name": kb.name, "query": PASSWORD, "expect": ["pw-reset"], "limit": 2}])
    done = cli(
        "compare",
        "--registry",
        str(kb.registry_dir),
        "--path",
        str(other.db_dir),
        "--table",
        "notes",
        "--json",
        str(path),
    )
    assert done.returncode == 1, done.stderr
    (check,) = json.loads(done.stdout)["checks"]
    a_ids = lance_ids(embedder, kb.db_dir, kb.name, PASSWORD, 2)
    b_ids = lance_ids(embedder, other.db_dir, "notes", PASSWORD, 2)
    assert check["lost"] == [i for i in a_ids if i not in b_ids] and "pw-reset" in check["lost"]
    assert check["gained"] == [i for i in b_ids if i not in a_ids]
    same = cli(
        "compare", "--registry", str(kb.registry_dir), "--path", str(kb.db_dir), "--table", kb.name, str(path)
    )
    assert same.returncode == 0, same.stderr


def test_compare_refuses_no_side_or_two_with_status_2(
    kb: KnowledgeBase, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Status 1 says B lost an expected id: a refusal is 2, as every other of compare's."""
    from recall_gui.cli import main

    path = golden(tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"]}])
    for extra in ((), ("--version", "1", "--db", kb.name)):
        assert main(["compare", "--registry", str(kb.registry_dir), *extra, str(path)]) == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert err.startswith("error: give exactly one of --version V, --db OTHER or --path PATH\n")


@pytest.mark.parametrize("version", ["-1", "0", str(2**63), str(2**64)])
def test_rank_and_compare_refuse_a_version_no_table_can_have_with_status_2(
    kb: KnowledgeBase, tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    from recall_gui.cli import main

    path = golden(tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"]}])
    registry = ("--registry", str(kb.registry_dir))
    for words in (
        ["rank", *registry, "--db", kb.name, "--id", "paris", f"--version={version}", FRANCE],
        ["compare", *registry, f"--version={version}", str(path)],
    ):
        assert main(words) == 2, words
        out, err = capsys.readouterr()
        assert out == ""
        assert err == (
            f"error: --version {version} is not a version number\n"
            f"hint: Give a whole number from 1 to {2**63 - 1}.\n"
        )


def test_compare_says_a_side_that_could_not_run_is_an_error_not_a_fail(make_kb: Any, tmp_path: Path) -> None:
    """A at a version that is not on disk, B a registered database whose folder is gone: each is an
    error naming the side and why (status 2), with nothing lost or gained, never FAIL."""
    import shutil

    from tests.kbtools import cosh_entry, write_registry

    kb = make_kb()
    path = golden(tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3}])
    done = cli("compare", "--registry", str(kb.registry_dir), "--version", "7", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"error: {path}, check 1: A could not run it: ")
    assert "version 7" in done.stderr.splitlines()[0]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("A: no check ran: ") and "version 7" in lines[0]
    assert lines[1].startswith("B: not compared: A could not run 1 of 1 checks: ") and "version 7" in lines[1]
    assert lines[2].startswith("A ERROR, B PASS  ")
    assert lines[3].startswith("       A could not run: ") and "lost" not in done.stdout

    gone = make_kb(name="gone")
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir), cosh_entry("gone", gone.db_dir)])
    shutil.rmtree(gone.db_dir)
    done = cli("compare", "--registry", str(kb.registry_dir), "--db", "gone", "--json", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"error: {path}, check 1: B could not run it: ")
    (check,) = json.loads(done.stdout)["checks"]
    assert "error" in check["b"] and "error" not in check["a"]
    assert check["lost"] == [] and check["gained"] == []
    # Only B could not run: the text says so first, with B's error, not that A ran nothing.
    text = cli("compare", "--registry", str(kb.registry_dir), "--db", "gone", str(path)).stdout.splitlines()
    assert text[0] == f"A: not compared: B could not run 1 of 1 checks: {check['b']['error']}"
    assert text[1] == f"B: no check ran: {check['b']['error']}"


def test_compare_names_once_a_check_neither_side_could_run_and_averages_both_over_the_same_checks(
    make_kb: Any, tmp_path: Path
) -> None:
    kb = make_kb()
    path = golden(
        tmp_path,
        [
            {"db_name": "missing", "query": FRANCE, "expect": ["paris"], "limit": 3},
            {"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3},
        ],
    )
    done = cli("compare", "--registry", str(kb.registry_dir), "--version", "1", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"error: {path}, check 1: A and B could not run it: ") and "more" not in first
    neither = "       neither side could run it: "
    shared = [line for line in done.stdout.splitlines() if line.startswith(neither)]
    assert len(shared) == 1 and "Database 'missing' not found" in shared[0], done.stdout
    assert "A could not run" not in done.stdout and "B could not run" not in done.stdout
    shown = cli("compare", "--registry", str(kb.registry_dir), "--version", "1", "--json", str(path))
    data = json.loads(shown.stdout)
    # Both sides ran check 2 only: each side's means are check 2's recall and reciprocal rank.
    for side in ("a", "b"):
        (expected,) = data["checks"][1][side]["expected"]
        rank = expected["rank"]
        assert data[side]["metrics"]["recall"] == (1.0 if rank is not None else 0.0)
        assert data[side]["metrics"]["mrr"] == pytest.approx(1 / rank if rank is not None else 0.0)


def test_check_versions_refuses_options_of_the_ray_engine(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = golden(tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3}])
    for option in (["--ray-address", "127.0.0.1:1"], ["--verbose"]):
        done = cli("check", "--registry", str(kb.registry_dir), "--versions", *option, str(path))
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert done.stderr.startswith(f"error: {option[0]} is for --engine ray"), done.stderr


def grow_history(kb: KnowledgeBase, embedder: Any, last: int, gaps: range = range(0)) -> None:
    """One appended row per version up to version ``last``: filler in random directions (far from every
    query), at version 150 a row holding the France query's own vector (it outranks paris from then on),
    at version 180 pw-reset deleted. The manifests of the versions in ``gaps`` are removed, as a cleanup
    of old versions removes them."""
    import numpy as np
    import pyarrow as pa

    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    rng = np.random.default_rng(35)
    for version in range(2, last + 1):
        if version == 180:
            table.delete("id = 'pw-reset'")
            continue
        vector = embedder.embed_sync(FRANCE) if version == 150 else rng.normal(size=384)
        vector = np.asarray(vector, np.float32) / np.linalg.norm(vector)
        row_id = "france-copy" if version == 150 else f"filler-{version}"
        column = pa.FixedSizeListArray.from_arrays(pa.array(vector.astype(np.float32)), 384)
        table.add(pa.table({"id": [row_id], "content": [row_id], "vector": column}))
    assert table.version == last
    for version in gaps:  # LanceDB names a version's manifest by 2**64 - 1 - version
        (kb.db_dir / f"{kb.name}.lance" / "_versions" / f"{2**64 - 1 - version}.manifest").unlink()


def history_checks(kb: KnowledgeBase) -> list[dict[str, Any]]:
    return [
        {"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 1},
        {"db_name": kb.name, "query": PASSWORD, "expect": ["pw-reset"], "limit": 3},
    ]


def test_check_versions_on_a_long_history_shows_progress_and_honours_the_bounds(
    kb: KnowledgeBase, tmp_path: Path, embedder: Any
) -> None:
    import re

    grow_history(kb, embedder, 230, gaps=range(120, 125))
    path = golden(tmp_path, history_checks(kb))
    before = snapshot_tree(kb.db_dir)
    done = cli("check", "--registry", str(kb.registry_dir), "--versions", "--from", "96", "--json", str(path))
    assert done.returncode == 1, done.stderr  # the latest version fails both checks
    ran = [v for v in range(96, 231) if v not in range(120, 125)]
    report = json.loads(done.stdout)
    assert [v["version"] for v in report["versions"]] == ran
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)  # the oracle, as lance_ids, each version
    for check, (query, expect, limit) in zip(
        report["checks"], ((FRANCE, "paris", 1), (PASSWORD, "pw-reset", 3)), strict=True
    ):
        assert [b["version"] for b in check["by_version"]] == ran
        vector = embedder.embed_sync(query)
        for run in check["by_version"]:
            table.checkout(run["version"])
            found = table.search(vector).distance_type("l2").limit(limit).to_list()
            ids = [row["id"] for row in found]
            rank = ids.index(expect) + 1 if expect in ids else None
            assert run["expected"] == [{"id": expect, "rank": rank}], run["version"]
    # Not a terminal: a line every 100 versions and at the last (and one after 30 s without any).
    lines = done.stderr.splitlines()
    shape = re.compile(rf"{kb.name}: checked version (\d+) \(([\d,]+) of 130 versions\)")
    assert all(shape.fullmatch(line) for line in lines[1:]), lines
    assert f"{kb.name}: checked version {ran[99]} (100 of 130 versions)" in lines
    assert lines[-1] == f"{kb.name}: checked version 230 (130 of 130 versions)"
    assert lines[0].startswith(f'listing 230 versions of "{kb.name}"') or shape.fullmatch(lines[0])

    plain = cli(
        "check", "--registry", str(kb.registry_dir), "--versions", "--last", "40", "--to", "200", str(path)
    )
    assert plain.returncode == 1, plain.stderr
    out = plain.stdout.splitlines()
    assert [line.split(":")[0] for line in out[:40]] == [f"{kb.name} version {v}" for v in range(161, 201)]
    assert f'broke at version 180: {kb.name}  "{PASSWORD}"' in out
    assert not any(line.startswith("broke at version 150") for line in out)  # before the versions run
    assert snapshot_tree(kb.db_dir) == before


def test_check_versions_refuses_bounds_it_cannot_honour(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = golden(tmp_path, history_checks(kb))
    base = ("check", "--registry", str(kb.registry_dir))
    for extra, message in (
        (("--versions", "--from", "5", "--to", "3"), "error: --from 5 is after --to 3"),
        (("--versions", "--last", "0"), "error: --last 0 is not a number of versions"),
        (("--versions", "--to", "-1"), "error: --to -1 is not a version number"),
        (("--versions", "--from", str(2**63)), f"error: --from {2**63} is not a version number"),
        (("--last", "5"), "error: --last applies only with --versions"),
        (("--versions", "--from", "x"), "argument --from: invalid int value: 'x'"),
    ):
        done = cli(*base, *extra, str(path))
        assert done.returncode == 2 and message in done.stderr, (extra, done.stderr)
        assert done.stdout == ""
    done = cli(*base, "--versions", "--from", "7", str(path))  # the table has version 1 only
    assert done.returncode == 2
    assert (
        f"could not run: {kb.name}  none of versions from 7 is on disk (its table's versions end at 1)"
        in (done.stdout.splitlines())
    )


def test_a_run_over_versions_keeps_none_of_them_in_the_session(kb: KnowledgeBase, embedder: Any) -> None:
    """Each version's open table and vectors are dropped before the next: a run over thousands of
    versions must not hold them all (it grew to 2.26 GB)."""
    import asyncio

    from recall_gui.core.golden import GoldenCheck, run_on_versions
    from recall_gui.core.search import Harness

    grow_history(kb, embedder, 30)
    checks = [GoldenCheck(kb.name, FRANCE, ("paris",), 1), GoldenCheck(kb.name, PASSWORD, ("pw-reset",), 3)]
    held: list[int] = []

    class Progress:
        def listing(self, name: str, count: int | None, seconds: float) -> None:
            pass

        def ran(self, name: str, done: int, total: int, version: int) -> None:
            pinned = [key for key in harness.session.vectors.cached_versions() if key[3] is not None]
            held.append(len(pinned))

    async def run() -> Any:
        try:
            return await run_on_versions(harness, checks, progress=Progress())
        finally:
            await harness.aclose()

    harness = Harness(kb.registry_dir)
    report = asyncio.run(run())
    assert [run.version for run in report.runs] == list(range(1, 31))
    assert held == [0] * 30
