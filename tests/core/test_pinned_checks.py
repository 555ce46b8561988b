"""Golden checks pinned to a version or a LanceDB tag: run on that version read-only, judged against
LanceDB's own answer there; a pin no longer on disk is that check's error, named, never a crash."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import lancedb
import pytest

from tests.core.test_check_versions_and_compare import FRANCE, PASSWORD, golden, lance_ids, remove_row
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, snapshot_tree

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own


def test_a_check_pinned_to_a_version_runs_there_and_the_unpinned_one_on_the_latest(
    kb: KnowledgeBase, tmp_path: Path, embedder: Any
) -> None:
    remove_row(kb, "paris")  # version 2 has no paris
    path = golden(
        tmp_path,
        [
            {"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3, "version": 1},
            {"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3},
        ],
    )
    before = snapshot_tree(kb.db_dir)
    done = cli("check", "--registry", str(kb.registry_dir), "--json", str(path))
    assert done.returncode == 1, done.stderr  # the unpinned check fails on the latest version
    pinned, latest = json.loads(done.stdout)["checks"]
    assert pinned["version"] == 1 and "version" not in latest
    assert pinned["results"] == lance_ids(embedder, kb.db_dir, kb.name, FRANCE, 3, version=1)
    assert latest["results"] == lance_ids(embedder, kb.db_dir, kb.name, FRANCE, 3)
    assert (pinned["passed"], latest["passed"]) == (True, False)
    assert pinned["searched"] == f"{kb.name} at version 1"
    assert snapshot_tree(kb.db_dir) == before  # read-only: no checkout restored, nothing tagged


def test_a_check_pinned_to_a_tag_runs_on_the_tagged_version(
    kb: KnowledgeBase, tmp_path: Path, embedder: Any
) -> None:
    lancedb.connect(str(kb.db_dir)).open_table(kb.name).tags.create("release", 1)
    remove_row(kb, "pw-reset")
    path = golden(
        tmp_path,
        [{"db_name": kb.name, "query": PASSWORD, "expect": ["pw-reset"], "limit": 2, "tag": "release"}],
    )
    done = cli("check", "--registry", str(kb.registry_dir), "--json", str(path))
    assert done.returncode == 0, done.stderr
    (check,) = json.loads(done.stdout)["checks"]
    assert check["tag"] == "release" and check["searched"] == f'{kb.name} at tag "release" (version 1)'
    assert check["results"] == lance_ids(embedder, kb.db_dir, kb.name, PASSWORD, 2, version=1)
    plain = cli("check", "--registry", str(kb.registry_dir), str(path))
    assert f'PASS   {kb.name} at tag "release" (version 1)' in plain.stdout


def test_a_pinned_version_that_was_cleaned_up_is_reported_naming_the_check(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    remove_row(kb, "paris")
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    with pytest.warns(UserWarning, match="removes every version except the latest"):
        table.optimize(cleanup_older_than=dt.timedelta(0), delete_unverified=True)
    (kept,) = [int(v["version"]) for v in table.list_versions()]
    assert kept >= 2  # version 1 is gone
    path = golden(
        tmp_path,
        [
            {"db_name": kb.name, "query": PASSWORD, "expect": ["pw-reset"], "version": 1},
            {"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "tag": "gone"},
            {"db_name": kb.name, "query": PASSWORD, "expect": ["pw-reset"], "version": kept},
        ],
    )
    done = cli("check", "--registry", str(kb.registry_dir), "--json", str(path))
    assert done.returncode == 2
    report = json.loads(done.stdout)
    assert (report["passed"], report["failed"], report["errors"]) == (1, 0, 2)
    first, second, third = report["checks"]
    assert first["error"] == (
        f'version: table "{kb.name}" no longer has version 1 on disk (cleaned up, or never written; '
        f"its versions: {kept})"
    )
    assert second["error"] == f'tag: table "{kb.name}" has no tag "gone" (its tags: none)'
    assert third["passed"] is True
    assert done.stderr.splitlines() == [
        f"error: {path}, check 1 could not run: {first['error']} (and 1 more)"
    ]


def test_a_check_pinning_both_a_version_and_a_tag_is_refused_before_anything_runs(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    path = golden(
        tmp_path,
        [
            {"db_name": kb.name, "query": PASSWORD, "expect": ["pw-reset"]},
            {"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "version": 1, "tag": "release"},
        ],
    )
    done = cli("check", "--registry", str(kb.registry_dir), str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert f"{path}, line 1, check 2: pins both a version and a tag" in done.stderr
    zero = golden(tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "version": 0}])
    refused = cli("check", "--registry", str(kb.registry_dir), str(zero))
    assert refused.returncode == 2 and "check 1, version: 0 is less than the minimum of 1" in refused.stderr


def test_the_same_query_pinned_and_unpinned_are_two_checks_and_keep_their_pins_when_written(
    tmp_path: Path,
) -> None:
    from recall_gui.core.golden import read_golden, write_golden

    path = golden(
        tmp_path,
        [
            {"db_name": "notes", "query": FRANCE, "expect": ["paris"], "tag": "release"},
            {"db_name": "notes", "query": FRANCE, "expect": ["paris"]},
            {"db_name": "notes", "query": FRANCE, "expect": ["paris"], "version": 4},
        ],
    )
    write_golden(path, read_golden(path))
    written = json.loads(path.read_text(encoding="utf-8"))["checks"]
    assert [{k: v for k, v in check.items() if k in ("tag", "version")} for check in written] == [
        {"tag": "release"},
        {},
        {"version": 4},
    ]


def test_versions_runs_a_pinned_check_on_every_version_and_keeps_its_pin_in_the_report(
    kb: KnowledgeBase, tmp_path: Path, embedder: Any
) -> None:
    remove_row(kb, "paris")
    path = golden(
        tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3, "version": 1}]
    )
    done = cli("check", "--registry", str(kb.registry_dir), "--versions", "--json", str(path))
    (check,) = json.loads(done.stdout)["checks"]
    assert check["version"] == 1
    assert [(run["version"], run["passed"]) for run in check["by_version"]] == [
        (version, "paris" in lance_ids(embedder, kb.db_dir, kb.name, FRANCE, 3, version))
        for version in (1, 2)
    ]
