"""Under the entry detail: "More like this" from a search result and from a browsed row, and "Would the
agent see this?" for a result and for a browsed row outside the results."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from recall_gui.core.search.harness import Harness
from tests.kbtools import PASSAGES, KnowledgeBase, cosh_entry, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for
from tests.qt.test_search import column, select_rows

QUERY = "How do I change my password?"


def search(window: object, loop: asyncio.AbstractEventLoop, query: str, limit: int) -> None:
    knowledge = window.knowledge  # type: ignore[attr-defined]
    knowledge.query_bar.query_edit.setText(query)
    knowledge.query_bar.limit_spin.setValue(limit)
    run(loop, knowledge.searching.search(knowledge.read_inputs()))


def full_ranking(loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, query: str) -> list[str]:
    async def go() -> list[str]:
        harness = Harness(kb.registry_dir)
        try:
            report = await harness.search_database(harness.resolve_active(kb.name), query, 100)
        finally:
            await harness.aclose()
        return [hit.id for hit in report.result.hits]

    ranking: list[str] = run(loop, go())
    return ranking


def test_more_like_this_from_a_result_and_from_a_browsed_row(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    knowledge = window.knowledge
    search(window, loop, QUERY, 4)
    table = knowledge.results.results_table
    select_rows(table, 1)
    picked = column(table, 1)[1]
    with waiting_for(loop, knowledge.searchFinished):
        knowledge.findChild(QPushButton, "moreLikeButton").click()
    ids = column(table, 1)
    assert ids[0] == picked
    assert float(column(table, 3)[0]) == 0.0
    assert len(ids) == 4
    assert (
        knowledge.results.caption.text()
        == f"4 entries most like “{picked}” in {kb.name} (searched with its stored vector)"
    )
    assert not knowledge.entry_tools.add_golden_action.isEnabled()  # not a question the agent asks

    run(loop, knowledge.browser.browse())
    browse = knowledge.results.browse_table
    row = list(PASSAGES).index("tides")
    select_rows(browse, row)
    with waiting_for(loop, knowledge.searchFinished):
        knowledge.entry_tools.more_like_action.trigger()
    assert knowledge.results.mode == "results"
    assert column(table, 1)[0] == "tides"


def test_would_the_agent_see_a_result_and_a_browsed_row_outside_the_results(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    knowledge = window.knowledge
    note = knowledge.entry_tools.note
    search(window, loop, QUERY, 3)
    ranking = full_ranking(loop, kb, QUERY)
    select_rows(knowledge.results.results_table, 1)
    assert note.tone == "good"
    assert note.message.startswith(
        f"Would the agent see this? Yes: for “{QUERY}” (limit 3) it is 2nd of the results, at distance "
    )
    assert "; the last result is at " in note.message and " to spare." in note.message

    outside = ranking[7]
    run(loop, knowledge.browser.browse())  # the query box still holds the question
    with waiting_for(loop, knowledge.visibilityShown):
        select_rows(knowledge.results.browse_table, list(PASSAGES).index(outside))
    assert note.tone == "bad"
    assert note.message.startswith(
        f"Would the agent see this? No: for “{QUERY}” (limit 3) it ranks 8th of 12, "
    )
    assert "nearer, 5 places up, to make it." in note.message

    # Browse all (Ctrl+B): the last query searched is the one asked about.
    knowledge.browse_all()
    run(loop, window.operations.wait_idle())
    first = ranking[0]
    with waiting_for(loop, knowledge.visibilityShown):
        select_rows(knowledge.results.browse_table, list(PASSAGES).index(first))
    assert note.message.startswith(
        f"Would the agent see this? Yes: for “{QUERY}” (limit 3) it is 1st of the results"
    )


def test_an_inactive_database_is_never_seen_by_the_agent(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir)], active=[])
    window = open_window(kb.registry_dir)
    search(window, loop, QUERY, 3)
    select_rows(window.knowledge.results.results_table, 0)
    note = window.knowledge.entry_tools.note
    assert note.tone == "bad"
    assert note.message.startswith(
        f"Would the agent see this? No: no agent searches {kb.name}: it is not active. If one did, "
        f"for “{QUERY}” (limit 3) it is 1st of the results"
    )


def test_a_filtered_view_shows_the_agents_unfiltered_verdict_and_how_the_view_differs(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    qtbot: QtBot,
    embedder: Any,
) -> None:
    import lancedb

    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    q = embedder.embed_sync("coffee")
    agent_order = table.search(q).distance_type("l2").bypass_vector_index().limit(100).to_arrow()
    agent_ids = agent_order.column("id").to_pylist()
    filtered = table.search(q).distance_type("l2").where("id LIKE 'pw%'", prefilter=True).limit(100)
    first = filtered.to_arrow().column("id")[0].as_py()
    rank = agent_ids.index(first) + 1
    assert rank > 2  # first with the filter, outside the agent's 2 results without it

    window = open_window(kb.registry_dir)
    knowledge = window.knowledge
    note = knowledge.entry_tools.note
    where_edit = knowledge.filter_bar.where_edit
    where_edit.setText("id LIKE 'pw%'")
    with waiting_for(loop, knowledge.browseReady):
        qtbot.keyClick(where_edit, Qt.Key.Key_Return)
    search(window, loop, "coffee", 2)
    assert column(knowledge.results.results_table, 1)[0] == first
    with waiting_for(loop, knowledge.visibilityShown):
        select_rows(knowledge.results.results_table, 0)
    assert note.tone == "bad"  # never the green of the view's own "1st"
    first_line, second_line = note.message.split("\n")
    assert first_line.startswith(
        f"Would the agent see this? No: for “coffee” (limit 2) it ranks {ordinal(rank)} of {len(PASSAGES)}, "
    )
    assert second_line == (
        f"The agent searches without your filter: rank {rank}, not among its 2. "
        "In your view: 1st of the results (limit 2)."
    )


def ordinal(number: int) -> str:
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number if number < 20 else number % 10, 'th') }"
