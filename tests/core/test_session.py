"""A session owns what searches keep (open tables, vectors in memory, loaded models, worker threads):
harnesses share it only when handed the same one, and closing one leaves the others working."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from recall_gui.core.search.harness import Harness
from recall_gui.core.session.session import Session
from tests.kbtools import KnowledgeBase
from tests.waiting import wait_until

QUERY = "What is the capital of France?"


def test_two_harnesses_have_their_own_sessions_and_closing_one_leaves_the_other_working(
    kb: KnowledgeBase,
) -> None:
    async def go() -> tuple[Any, ...]:
        first, second = Harness(kb.registry_dir), Harness(kb.registry_dir)
        assert first.session is not second.session
        one = await first.run({"db_name": kb.name, "query": QUERY, "limit": 1})
        two = await second.run({"db_name": kb.name, "query": QUERY, "limit": 1})
        models = (
            first.session.models.loaded_local(one.database.embedder),
            second.session.models.loaded_local(two.database.embedder),
        )
        cached = (first.session.vectors.used_bytes, second.session.vectors.used_bytes)
        await first.aclose()
        after = await second.run({"db_name": kb.name, "query": "Berlin", "limit": 1})
        await second.aclose()
        return one, two, models, cached, first.session.closed, after

    one, two, models, cached, first_closed, after = asyncio.run(go())
    assert one.to_json() == two.to_json()
    assert models[0] is not None and models[1] is not None and models[0] is not models[1]
    assert cached[0] > 0 and cached[1] > 0  # each read the table's vectors into its own memory
    assert first_closed
    assert after.result.hits[0].id == "berlin"


def test_harnesses_handed_one_session_share_it_and_leave_it_open(kb: KnowledgeBase) -> None:
    async def go() -> tuple[Any, ...]:
        async with Session() as session:
            first = Harness(kb.registry_dir, session=session)
            second = Harness(kb.registry_dir, session=session)
            await first.run({"db_name": kb.name, "query": QUERY, "limit": 1})
            read = session.vectors.cached_versions()
            await first.aclose()  # not its session: it stays open
            report = await second.run({"db_name": kb.name, "query": QUERY, "limit": 1})
            return read, session.closed, report

    read, closed_by_harness, report = asyncio.run(go())
    assert len(read) == 1
    assert not closed_by_harness
    assert report.result.hits[0].id == "paris"


def test_a_closed_session_stops_its_threads_and_forgets_what_it_kept(kb: KnowledgeBase) -> None:
    before = {thread.name for thread in threading.enumerate()}

    async def go() -> Session:
        harness = Harness(kb.registry_dir)
        await harness.run({"db_name": kb.name, "query": QUERY, "limit": 1})
        await harness.aclose()
        return harness.session

    session = asyncio.run(go())
    assert (
        session.vectors.used_bytes == 0
        and session.models.loaded_local(Harness(kb.registry_dir).resolve_active(kb.name).embedder) is None
    )
    for pool in (session.embed_executor, session.compute_executor):
        with pytest.raises(RuntimeError, match="shutdown"):
            pool.submit(print)

    def workers_left() -> set[str]:
        left = {thread.name for thread in threading.enumerate()} - before
        return {name for name in left if name.startswith(("recall-embed", "recall-compute"))}

    wait_until(lambda: not workers_left(), "the session's worker threads have ended", timeout=5)


def test_the_core_keeps_no_state_in_module_globals() -> None:
    """No ``global`` statement in the core: state lives in a session (or, for what belongs to the whole
    process, such as the garbage collector, in an object made for it)."""
    import ast
    from pathlib import Path

    import recall_gui.core

    root = Path(recall_gui.core.__file__).parent
    found = [
        f"{path.relative_to(root)}:{node.lineno}"
        for path in root.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Global)
    ]
    assert found == []


def test_closing_a_session_twice_is_harmless() -> None:
    async def twice() -> bool:
        session = Session()
        await session.aclose()
        await session.aclose()  # a front end closing on two paths (the window's close and its exit)
        return session.closed

    assert asyncio.run(twice()) is True
