"""On a knowledge base written as cosh writes one (every row's id is "content"), every command names an entry
by its content (``content·3f2a9c1e``) and says once that the table's ids repeat, while the agent's JSON stays
exactly ``{"query", "results": [{"id", "content"}]}``; the agent log's coverage and replay match entries
by content."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.agent_log.agent_review import coverage, replay
from recall_gui.core.agent_log.call_record import CallRecord, now_iso
from recall_gui.core.search.harness import Harness
from tests.core.test_cli import cli
from tests.coretools import in_session
from tests.kbtools import PASSAGES, KnowledgeBase, cosh_entry, write_lance_table, write_registry
from tests.logtools import add_row_elsewhere, logged_call

QUERY = "What is the capital of France?"
SAID = 'ids repeat in this table: all {rows} rows share the id "content"'


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def label(text: str) -> str:
    return f"content·{sha(text)[:8]}"


def lance_order(kb: KnowledgeBase, vector: Any, limit: int) -> list[str]:
    import lancedb

    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    return [row["content"] for row in table.search(vector).distance_type("l2").limit(limit).to_list()]


@pytest.mark.process
def test_search_prints_the_agents_json_and_names_the_results_on_stderr(
    cosh_kb: KnowledgeBase, embedder: Any
) -> None:
    done = cli("search", "--registry", str(cosh_kb.registry_dir), "--db", "docs", "--limit", "3", QUERY)
    assert done.returncode == 0, done.stderr
    order = lance_order(cosh_kb, embedder.embed_sync(QUERY), 3)
    assert json.loads(done.stdout) == {
        "query": QUERY,
        "results": [{"id": "content", "content": text} for text in order],
    }
    assert f"note: {SAID.format(rows=len(cosh_kb.ids))}" in done.stderr
    first = PASSAGES["paris"]
    assert order[0] == first
    assert f"  1. {label(first)} “The capital of France is Paris, a city…”" in done.stderr.splitlines()


@pytest.mark.process
def test_similar_and_rank_take_an_entry_by_its_content(cosh_kb: KnowledgeBase) -> None:
    chosen = PASSAGES["tides"]
    done = cli("similar", "--registry", str(cosh_kb.registry_dir), "--db", "docs", "--id", label(chosen))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["query"] == f"more like {label(chosen)}"
    first = data["results"][0]
    assert (first["id"], first["content_sha256"], first["content"]) == ("content", sha(chosen), chosen)
    assert all(result["content_sha256"] == sha(result["content"]) for result in data["results"])
    assert data["ids_repeat"]["shared_ids"] == {"content": len(cosh_kb.ids)}

    done = cli(
        "rank", "--registry", str(cosh_kb.registry_dir), "--db", "docs", "--id", label(chosen), "ocean tides"
    )
    assert done.returncode == 0, done.stderr
    ranked = json.loads(done.stdout)
    assert (ranked["id"], ranked["content_sha256"], ranked["rank"]) == ("content", sha(chosen), 1)


@pytest.mark.process
def test_an_id_alone_takes_the_first_row_and_says_how_to_name_another(cosh_kb: KnowledgeBase) -> None:
    done = cli("similar", "--registry", str(cosh_kb.registry_dir), "--db", "docs", "--id", "content")
    assert done.returncode == 0, done.stderr
    first = cosh_kb.contents[0]
    assert f"searching with the first, {label(first)} “" in done.stderr
    assert "--id ID·<first hex digits of its sha256>" in done.stderr


@pytest.mark.process
def test_context_shows_a_whole_document_as_its_own(cosh_kb: KnowledgeBase) -> None:
    chosen = PASSAGES["coffee"]
    done = cli("context", "--registry", str(cosh_kb.registry_dir), "--db", "docs", "--id", label(chosen))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"document {label(chosen)} (1 chunks)",
        f"> {label(chosen)}: {chosen}",
    ]


@pytest.mark.process
def test_hubs_count_entries_not_the_shared_id(cosh_kb: KnowledgeBase, tmp_path: Path) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("capital of France\nhow to reset a password\nocean tides\n", encoding="utf-8")
    args = [
        "--registry",
        str(cosh_kb.registry_dir),
        "--db",
        "docs",
        "--queries",
        str(queries),
        "--limit",
        "2",
    ]
    done = cli("hubs", *args, "--json")
    assert done.returncode == 0, done.stderr
    hubs = json.loads(done.stdout)["hubs"]
    # Three queries of two results each: six returns, never one "content" returned for every query.
    assert sum(hub["returned_for"] for hub in hubs) == 6
    assert all(hub["id"] == "content" and len(hub["content_sha256"]) == 64 for hub in hubs)
    assert len({hub["content_sha256"] for hub in hubs}) == len(hubs)


@pytest.mark.process
def test_duplicates_and_health_name_copies_by_content(tmp_path: Path, passage_vectors: Any) -> None:
    import numpy as np

    contents = [*PASSAGES.values(), PASSAGES["paris"]]
    vectors = np.vstack([passage_vectors, passage_vectors[list(PASSAGES).index("paris")]])
    write_lance_table(tmp_path / "db", "docs", ["content"] * len(contents), contents, vectors)
    registry = write_registry(tmp_path / "registry", [cosh_entry("docs", tmp_path / "db")])
    done = cli("duplicates", "--registry", str(registry), "--db", "docs", "--json")
    assert done.returncode == 0, done.stderr
    groups = json.loads(done.stdout)["groups"]
    assert [group["ids"] for group in groups] == [[label(PASSAGES["paris"])] * 2]

    done = cli("health", "--registry", str(registry), "--db", "docs", "--fail-on", "none")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    paris = label(PASSAGES["paris"])
    assert f"the same content (2): {paris}, {paris}" in lines
    assert f"{SAID.format(rows=len(contents))}, so entries are named by their content" in "\n".join(lines)


# --- the agent log ---------------------------------------------------------------------------------------


def test_coverage_counts_each_entry_by_its_content(cosh_kb: KnowledgeBase) -> None:
    harness = Harness(cosh_kb.registry_dir)
    try:
        calls = [logged_call(harness, {"db_name": "docs", "query": QUERY, "limit": 2})]
    finally:
        import asyncio

        asyncio.run(harness.aclose())
    returned = {sha for _id, sha in calls[0].results()}
    assert len(returned) == 2
    entry = Harness(cosh_kb.registry_dir).registry.get("docs")
    assert entry is not None
    found = in_session(lambda session: coverage(session, entry, calls))
    assert (found.entries, found.returned) == (len(cosh_kb.ids), 2)
    assert found.never_returned == tuple(
        label(text) for text in cosh_kb.contents if sha(text) not in returned
    )
    assert found.to_dict()["ids_repeat"]["shared_ids"] == {"content": len(cosh_kb.ids)}

    # A call logged without its contents' digests returned no entry in particular.
    bare = CallRecord(
        now_iso(), "agent", "1", "recall_search", {"db_name": "docs", "query": "q"}, ("content",)
    )
    assert in_session(lambda session: coverage(session, entry, [bare])).returned == 0


@pytest.mark.process
def test_replay_matches_results_by_content(cosh_kb: KnowledgeBase, embedder: Any, tmp_path: Path) -> None:
    import asyncio

    harness = Harness(cosh_kb.registry_dir)
    try:
        arguments = {"db_name": "docs", "query": "What is the capital city of France?", "limit": 3}
        before = logged_call(harness, arguments)
        new = "Paris, the capital city of France, lies on the river Seine."
        add_row_elsewhere(cosh_kb.db_dir, cosh_kb.name, "content", new, embedder, tmp_path)
        again = asyncio.run(replay(harness, before))
    finally:
        asyncio.run(harness.aclose())
    assert again.error is None and again.report is not None
    now = [hit.content for hit in again.report.result.hits]
    assert new in now
    changes = {row.id: row.change for row in again.diff.rows}
    assert changes[label(new)] == "gained"
    then, shas_now = set(before.result_sha256), {sha(text) for text in now}
    assert len(again.diff.rows) == len(then | shas_now)
    lost = {row.id for row in again.diff.rows if row.change == "lost"}
    assert lost == {f"content·{digest[:8]}" for digest in then - shas_now} and len(lost) == 1


@pytest.mark.process
def test_shadowing_reach_and_the_map_name_entries_by_content(cosh_kb: KnowledgeBase) -> None:
    registry = str(cosh_kb.registry_dir)
    done = cli("shadowing", "--registry", registry, "--db", "docs", "--json", "--limit", "3", QUERY)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert all(
        result["id"] == "content" and len(result["content_sha256"]) == 64 for result in found["results"]
    )
    assert found["ids_repeat"]["shared_ids"] == {"content": len(cosh_kb.ids)}

    done = cli("reach", "--registry", registry, "--db", "docs", "--json")
    assert done.returncode in (0, 1), done.stderr
    reach = json.loads(done.stdout)
    assert {entry["content_sha256"] for entry in reach["retrievability"]} == {
        sha(t) for t in cosh_kb.contents
    }

    from recall_gui.core.inspect.table_map import point_labels

    def labels(session: Any) -> Any:
        return point_labels(session, cosh_kb.target, list(range(len(cosh_kb.ids))))

    shown = in_session(labels)
    assert sorted(name for name, _first in shown.values()) == sorted(label(t) for t in cosh_kb.contents)
