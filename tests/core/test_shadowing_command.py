"""`recall-gui shadowing`: near-copies among the agent's results, on a table where two passages were stored
three times with small edits (embedded with the real model); LanceDB's search is the oracle of the
results, the copies are known by construction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pytest

from tests.core.test_cli import cli
from tests.kbtools import PASSAGES, write_lance_table

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

QUERY = "How do I change my password?"


def with_copies(tmp_path: Path, embedder: Any) -> Path:
    texts = dict(PASSAGES)
    texts["pw-reset-copy"] = PASSAGES["pw-reset"] + " "
    texts["pw-reset-edit"] = PASSAGES["pw-reset"].replace("then", "and then")
    texts["pw-rules-copy"] = PASSAGES["pw-rules"]
    folder = tmp_path / "db"
    vectors = [embedder.embed_sync(text) for text in texts.values()]
    write_lance_table(folder, "kb", list(texts), list(texts.values()), vectors)
    return folder


def test_near_copies_among_the_results_are_grouped_and_counted_once(tmp_path: Path, embedder: Any) -> None:
    folder = with_copies(tmp_path, embedder)
    oracle = (
        lancedb.connect(str(folder))
        .open_table("kb")
        .search(embedder.embed_sync(QUERY))
        .distance_type("l2")
        .limit(6)
    ).to_list()
    order = [row["id"] for row in oracle]
    assert {"pw-reset", "pw-reset-copy", "pw-reset-edit", "pw-rules", "pw-rules-copy"} <= set(order)
    done = cli("shadowing", "--path", str(folder), "--table", "kb", "--limit", "6", "--json", QUERY)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert [r["id"] for r in found["results"]] == order
    reset = [i for i in order if i.startswith("pw-reset")]
    rules = [i for i in order if i.startswith("pw-rules")]
    groups = sorted([reset, rules], key=lambda group: order.index(group[0]))
    assert found["groups"] == groups
    assert found["distinct"] == 6 - (len(reset) - 1) - (len(rules) - 1)
    plain = cli("shadowing", "--path", str(folder), "--table", "kb", "--limit", "6", QUERY)
    assert plain.stdout.splitlines()[0] == f"6 results, {found['distinct']} distinct entries"


def test_a_threshold_of_zero_groups_only_identical_vectors(tmp_path: Path, embedder: Any) -> None:
    folder = with_copies(tmp_path, embedder)
    table = lancedb.connect(str(folder)).open_table("kb")
    oracle = table.search(embedder.embed_sync(QUERY)).distance_type("l2").limit(6).to_list()
    identical: dict[bytes, list[str]] = {}
    for row in oracle:
        identical.setdefault(np.asarray(row["vector"], np.float32).tobytes(), []).append(row["id"])
    expected = [group for group in identical.values() if len(group) > 1]
    assert ["pw-rules", "pw-rules-copy"] in [sorted(group) for group in expected]
    done = cli(
        "shadowing",
        "--path",
        str(folder),
        "--table",
        "kb",
        "--limit",
        "6",
        "--threshold",
        "0",
        "--json",
        QUERY,
    )
    assert json.loads(done.stdout)["groups"] == expected


def test_a_failing_check_names_the_near_copies_that_took_its_places(tmp_path: Path, embedder: Any) -> None:
    from tests.kbtools import cosh_entry, write_registry

    folder = with_copies(tmp_path, embedder)
    registry = write_registry(tmp_path / "registry", [cosh_entry("kb", folder)])
    golden = tmp_path / "golden.json"
    golden.write_text(
        json.dumps({"checks": [{"db_name": "kb", "query": QUERY, "expect": ["paris"], "limit": 3}]}),
        encoding="utf-8",
    )
    done = cli("check", "--registry", str(registry), "--json", str(golden))
    assert done.returncode == 1
    (check,) = json.loads(done.stdout)["checks"]
    shadow = cli("shadowing", "--registry", str(registry), "--db", "kb", "--limit", "3", "--json", QUERY)
    assert check["near_copies"] == json.loads(shadow.stdout)["groups"] != []
    plain = cli("check", "--registry", str(registry), str(golden))
    assert any(line.strip().startswith("near-copies take ") for line in plain.stdout.splitlines())
