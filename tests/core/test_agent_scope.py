"""Claims about the agent are made in the agent's scope (the registered, active database, its latest
version, no filter, the agent's limit), whatever the user looks at; the view's own answer comes beside
them, and the differences in words. LanceDB's flat search, unfiltered on the latest version, is the
oracle for the agent's rank."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_types import DatabaseEntry, EmbedderSpec
from recall_gui.core.search.agent_scope import ViewScope, agent_scope_of, differences, same_search
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.visibility import AgentVerdict, would_agent_see
from recall_gui.core.session.session import Session
from tests.kbtools import PASSAGES, KnowledgeBase, cosh_entry, write_lance_table, write_registry

QUERY = "coffee"
FILTER = "id LIKE 'pw%'"


def lancedb_ranking(
    db_dir: Path, name: str, query_vector: Any, *, where: str | None = None, version: int | None = None
) -> list[str]:
    """Every row's id in LanceDB's own flat order for the query (the whole table, or as filtered)."""
    import lancedb

    table = lancedb.connect(str(db_dir)).open_table(name)
    if version is not None:
        table.checkout(version)
    search = table.search(query_vector).distance_type("l2").bypass_vector_index().limit(1000)
    if where is not None:
        search = search.where(where, prefilter=True)
    return [str(value) for value in search.to_arrow().column("id").to_pylist()]


def row_id_of(db_dir: Path, name: str, entry_id: str, version: int | None = None) -> int:
    import lancedb

    table = lancedb.connect(str(db_dir)).open_table(name)
    if version is not None:
        table.checkout(version)
    rows = table.search().where(f"id = '{entry_id}'").with_row_id(True).to_arrow()
    return int(rows.column("_rowid")[0].as_py())


def verdict_for(
    registry_dir: Path, session: Session, view: ViewScope, row_id: int, entry_id: str, **options: Any
) -> AgentVerdict:
    async def go() -> AgentVerdict:
        harness = Harness(registry_dir, session=session)
        return await would_agent_see(harness, view, QUERY, row_id, entry_id=entry_id, **options)

    return asyncio.run(go())


def opened(db_dir: Path | str, name: str = "notes") -> DatabaseEntry:
    """The folder's table as File ▸ Open Folder makes it (not from the registry)."""
    spec = EmbedderSpec("local", "AllMiniLML6V2")
    return DatabaseEntry(name, str(db_dir), "", spec, table=name, origin="opened")


@pytest.mark.process
def test_a_filtered_view_gets_the_agents_unfiltered_rank_and_its_own_beside_it(
    kb: KnowledgeBase, session: Session, embedder: Any
) -> None:
    q = embedder.embed_sync(QUERY)
    agent_order = lancedb_ranking(kb.db_dir, kb.name, q)
    view_order = lancedb_ranking(kb.db_dir, kb.name, q, where=FILTER)
    entry_id = view_order[0]  # first in the filtered view, far down in the agent's ranking
    assert agent_order.index(entry_id) + 1 > 2
    entry = load_registry(kb.registry_dir).get(kb.name)
    assert entry is not None
    view = ViewScope(entry, where=FILTER, limit=2)
    verdict = verdict_for(kb.registry_dir, session, view, row_id_of(kb.db_dir, kb.name, entry_id), entry_id)

    assert verdict.agent is not None and verdict.view is not None
    assert verdict.agent.rank == agent_order.index(entry_id) + 1
    assert not verdict.agent.in_results and not verdict.agent_sees
    assert verdict.agent.rows == len(PASSAGES)
    assert verdict.view.in_results and verdict.view.result_rank == 1
    assert verdict.view.rows == len(view_order)
    assert verdict.differences == ("the agent searches without your filter",)
    assert verdict.to_dict()["rank"] == agent_order.index(entry_id) + 1
    assert verdict.to_dict()["view"]["rank"] == 1


def test_the_agents_scope_needs_no_view_rank_and_says_nothing_differs(
    kb: KnowledgeBase, session: Session, embedder: Any
) -> None:
    agent_order = lancedb_ranking(kb.db_dir, kb.name, embedder.embed_sync(QUERY))
    entry = load_registry(kb.registry_dir).get(kb.name)
    assert entry is not None
    for entry_id in (agent_order[0], agent_order[6]):
        verdict = verdict_for(
            kb.registry_dir,
            session,
            ViewScope(entry, limit=5),
            row_id_of(kb.db_dir, kb.name, entry_id),
            entry_id,
        )
        assert verdict.agent is not None
        assert verdict.agent.rank == agent_order.index(entry_id) + 1
        assert verdict.agent_sees == (verdict.agent.rank <= 5)
        assert (verdict.differences, verdict.view) == ((), None)
    # Another limit for the agent than the view's is a difference, and the agent's limit decides.
    verdict = verdict_for(
        kb.registry_dir,
        session,
        ViewScope(entry, limit=10),
        row_id_of(kb.db_dir, kb.name, agent_order[3]),
        agent_order[3],
        agent_limit=3,
    )
    assert verdict.agent is not None and verdict.view is not None
    assert (verdict.agent.limit, verdict.agent.in_results) == (3, False)
    assert (verdict.view.limit, verdict.view.in_results) == (10, True)
    assert verdict.differences == ("the agent's limit is 3, not 10",)


@pytest.fixture
def history_kb(tmp_path: Path, passage_vectors: Any) -> KnowledgeBase:
    """Version 1: every passage but "berlin"; version 2: "berlin" added; version 3: "tides" deleted."""
    import lancedb
    import pyarrow as pa

    ids, texts = list(PASSAGES), list(PASSAGES.values())
    berlin = ids.index("berlin")
    keep = [n for n in range(len(ids)) if n != berlin]
    db_dir = tmp_path / "db"
    write_lance_table(
        db_dir, "notes", [ids[n] for n in keep], [texts[n] for n in keep], passage_vectors[keep]
    )
    table = lancedb.connect(str(db_dir)).open_table("notes")
    vector = passage_vectors[berlin].astype("float32")
    table.add(
        pa.table(
            {
                "id": pa.array(["berlin"], pa.utf8()),
                "content": pa.array([texts[berlin]], pa.utf8()),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vector), len(vector)),
            }
        )
    )
    table.delete("id = 'tides'")
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", db_dir)])
    return KnowledgeBase("notes", db_dir, registry, tuple(ids), tuple(texts), passage_vectors)


def test_an_older_version_gets_the_latest_versions_rank_and_an_entry_gone_says_so(
    history_kb: KnowledgeBase, session: Session, embedder: Any
) -> None:
    import lancedb

    kb = history_kb
    latest = lancedb.connect(str(kb.db_dir)).open_table(kb.name).version
    assert latest == 3
    q = embedder.embed_sync(QUERY)
    agent_order = lancedb_ranking(kb.db_dir, kb.name, q)
    old_order = lancedb_ranking(kb.db_dir, kb.name, q, version=1)
    # An entry whose rank moved between version 1 and the latest (berlin came in between).
    moved = next(i for i in agent_order if i in old_order and agent_order.index(i) != old_order.index(i))
    entry = load_registry(kb.registry_dir).get(kb.name)
    assert entry is not None
    view = ViewScope(entry, version=1, limit=5)
    old_row = row_id_of(kb.db_dir, kb.name, moved, version=1)
    verdict = verdict_for(kb.registry_dir, session, view, old_row, moved)
    assert verdict.agent is not None and verdict.view is not None
    assert verdict.agent.rank == agent_order.index(moved) + 1
    assert verdict.view.rank == old_order.index(moved) + 1
    assert verdict.differences == ("the agent searches the latest version (3), not version 1",)

    gone = verdict_for(kb.registry_dir, session, view, row_id_of(kb.db_dir, kb.name, "tides", 1), "tides")
    assert gone.agent is None and not gone.agent_sees
    assert gone.missing == "the latest version (3) has no entry with the id 'tides': the agent cannot get it"
    assert gone.view is not None and gone.view.rank == old_order.index("tides") + 1


@pytest.mark.process
def test_an_opened_folder_is_the_registered_database_of_its_table_or_searched_by_no_agent(
    kb: KnowledgeBase, session: Session, embedder: Any, tmp_path: Path
) -> None:
    q = embedder.embed_sync(QUERY)
    agent_order = lancedb_ranking(kb.db_dir, kb.name, q)
    entry_id = agent_order[4]
    row_id = row_id_of(kb.db_dir, kb.name, entry_id)
    # The folder spelled otherwise than the registry spells it (a trailing slash); read with another
    # metric than the registered database's, so the opened table's own search is not the agent's.
    view = ViewScope(replace(opened(f"{kb.db_dir}/"), metric="cosine"), where=FILTER, limit=5)

    registered = verdict_for(kb.registry_dir, session, view, row_id, entry_id)
    assert registered.scope.searched and registered.scope.entry.origin == "registry"
    assert registered.scope.entry.name == kb.name and registered.scope.entry.metric is None
    assert registered.agent is not None and registered.agent.rank == agent_order.index(entry_id) + 1
    assert registered.agent.metric == "l2"
    assert registered.view is not None and registered.view.metric == "cosine"
    assert registered.differences == (
        f"agents search this folder's table as the registered database {kb.name}",
        "the agent searches without your filter",
    )

    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir)], active=[])
    inactive = verdict_for(kb.registry_dir, session, view, row_id, entry_id)
    assert not inactive.scope.searched and not inactive.agent_sees
    assert inactive.agent is not None and inactive.agent.rank == agent_order.index(entry_id) + 1
    assert inactive.differences[0] == (
        f"no agent searches this folder: it is registered as “{kb.name}”, which is not active"
    )

    elsewhere = write_registry(tmp_path / "other-registry", [cosh_entry("other", tmp_path / "other")])
    unregistered = verdict_for(elsewhere, session, ViewScope(opened(kb.db_dir)), row_id, entry_id)
    assert not unregistered.scope.searched and unregistered.scope.entry.origin == "opened"
    assert unregistered.differences == ("no agent searches this folder: it is not registered",)
    # What an agent would get if it were registered: the opened table's own search, unfiltered.
    assert unregistered.agent is not None and unregistered.agent.rank == agent_order.index(entry_id) + 1
    assert unregistered.view is None


def test_the_scope_follows_the_registry_by_name_and_activity(kb: KnowledgeBase) -> None:
    registry = load_registry(kb.registry_dir)
    entry = registry.get(kb.name)
    assert entry is not None
    assert agent_scope_of(ViewScope(entry, limit=7), registry).limit == 7
    assert agent_scope_of(ViewScope(entry, limit=7), registry, 5).limit == 5
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir)], active=[])
    inactive = agent_scope_of(ViewScope(entry), load_registry(kb.registry_dir))
    assert (inactive.searched, inactive.why_not) == (False, "it is not active")
    write_registry(kb.registry_dir, [cosh_entry("renamed", kb.db_dir)])
    gone = agent_scope_of(ViewScope(entry), load_registry(kb.registry_dir))
    assert (gone.searched, gone.why_not) == (False, "it is not registered")
    assert ViewScope(entry, where="  ").where is None  # a blank filter is no filter


def test_a_view_searched_with_another_limit_says_the_agents(kb: KnowledgeBase) -> None:
    registry = load_registry(kb.registry_dir)
    entry = registry.get(kb.name)
    assert entry is not None
    view = ViewScope(entry, limit=10)
    agent = agent_scope_of(view, registry, 5)
    assert not same_search(view, agent)
    assert differences(view, agent) == ("the agent's limit is 5, not 10",)
    assert same_search(view, agent_scope_of(view, registry, 10))
    assert differences(view, agent_scope_of(view, registry, 10)) == ()


def test_rows_chosen_on_the_map_narrow_browsing_and_the_agent_still_searches_every_row(
    kb: KnowledgeBase,
) -> None:
    registry = load_registry(kb.registry_dir)
    entry = registry.get(kb.name)
    assert entry is not None
    view = ViewScope(entry, selection="chosen on the map")
    agent = agent_scope_of(view, registry)
    assert same_search(view, agent)  # a selection is not a search of its own
    assert differences(view, agent) == ("the agent searches every row, not only the rows chosen on the map",)


@pytest.mark.process
def test_rank_answers_for_the_agent_and_puts_the_view_of_where_and_version_beside_it(
    history_kb: KnowledgeBase, embedder: Any
) -> None:
    import json

    from tests.core.test_cli import cli

    kb, where = history_kb, "id LIKE 'p%'"
    q = embedder.embed_sync(QUERY)
    agent_order = lancedb_ranking(kb.db_dir, kb.name, q)
    view_order = lancedb_ranking(kb.db_dir, kb.name, q, where=where, version=1)
    entry_id = view_order[0]
    common = ("rank", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", "2")
    done = cli(*common, "--id", entry_id, "--version", "1", "--where", where, QUERY)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["rank"] == agent_order.index(entry_id) + 1
    assert answer["in_results"] is (answer["rank"] <= 2)
    assert (answer["db_name"], answer["agent_searches"], answer["active"]) == (kb.name, True, True)
    assert answer["view"]["rank"] == 1 and answer["view"]["in_results"] is True
    assert answer["differences"] == [
        "the agent searches the latest version (3), not version 1",
        "the agent searches without your filter",
    ]
    plain = json.loads(cli(*common, "--id", entry_id, QUERY).stdout)
    assert (plain["rank"], plain["differences"], plain["view"]) == (answer["rank"], [], None)

    gone = json.loads(cli(*common, "--id", "tides", "--version", "1", QUERY).stdout)
    assert (
        gone["missing"] == "the latest version (3) has no entry with the id 'tides': the agent cannot get it"
    )
    assert gone["view"]["rank"] == lancedb_ranking(kb.db_dir, kb.name, q, version=1).index("tides") + 1
    assert (gone["rank"], gone["in_results"]) == (None, False)
    refused = cli(*common, "--id", entry_id, "--where", " ", QUERY)
    assert refused.returncode != 0 and "--where was given an empty filter" in refused.stderr


def test_a_registered_folder_that_is_a_symlink_loop_is_compared_as_written(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "back")
    (tmp_path / "back").symlink_to(loop)
    # Both read a table "notes": the looped folder's place is worked out before the right one is found.
    also = {**cosh_entry("notes-too", kb.db_dir), "table": kb.name}
    write_registry(kb.registry_dir, [cosh_entry(kb.name, loop), also])
    registry = load_registry(kb.registry_dir)
    scope = agent_scope_of(ViewScope(opened(kb.db_dir)), registry)
    assert scope.searched and scope.entry.name == "notes-too"
    as_written = agent_scope_of(ViewScope(opened(loop)), registry)
    assert as_written.searched and as_written.entry.name == kb.name
