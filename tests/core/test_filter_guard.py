"""A user's filter that needs more memory than there is cannot end the process: it is first evaluated in
a worker process with a memory bound, and refused with what happened (``core.filter_guard``)."""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys

import pytest

from recall_gui.core.base.errors import FilterError
from recall_gui.core.session.session import Session
from recall_gui.core.storage.filter_guard import FILTER_MEMORY_ENV
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.browse import fetch_page
from tests.core.test_cli import ROOT, cli
from tests.kbtools import PASSAGES, KnowledgeBase
from tests.waiting import spawned_children, wait_until

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

#: Each row's content repeated into ~1.7 GB: LanceDB's engine aborts its process when that fails.
HUGE = "length(repeat(content, 20000000)) > 0"
#: The address space the CLI gets in the test, so that the allocation fails there as it would on a
#: smaller machine (the worker gets its own, lower bound: RECALL_GUI_FILTER_MEMORY_MB).
CLI_MEMORY = 8 * 1024**3


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CLI_MEMORY, CLI_MEMORY))


def test_the_cli_refuses_a_filter_that_needs_too_much_memory_instead_of_aborting(
    kb: KnowledgeBase,
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), FILTER_MEMORY_ENV: "1024"}
    done = subprocess.run(
        [sys.executable, "-m", "recall_gui", "search", "--registry", str(kb.registry_dir), "--db", kb.name,
         "--where", HUGE, "capital of France"],
        capture_output=True, text=True, env=env, preexec_fn=_bounded, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    assert f"error: the filter '{HUGE}' needed more memory than allowed (1,024 MB)" in done.stderr
    assert "hint: Simplify the filter" in done.stderr
    assert "memory allocation of" not in done.stderr  # LanceDB's own report stays in the worker

    # A filter that fits is answered as before, with the rows it keeps.
    fine = cli(
        "search", "--registry", str(kb.registry_dir), "--db", kb.name, "--where", "id = 'paris'",
        "capital of France", env={FILTER_MEMORY_ENV: "1024"},
    )  # fmt: skip
    assert fine.returncode == 0, fine.stderr
    assert '"id":"paris"' in fine.stdout and '"id":"berlin"' not in fine.stdout


def test_the_windows_page_reading_refuses_it_and_goes_on(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the knowledge page calls with the Where box's text: the process is still here after the
    refusal, and the next filter (on a new worker) is answered."""
    monkeypatch.setenv(FILTER_MEMORY_ENV, "1024")
    target = TableTarget(str(kb.db_dir), kb.name)

    async def go() -> tuple[str, list[str]]:
        async with Session() as session:
            with pytest.raises(FilterError) as refused:
                await fetch_page(session, target, offset=0, limit=50, where=HUGE)
            page = await fetch_page(session, target, offset=0, limit=50, where="id IN ('tides', 'coffee')")
            return refused.value.message, sorted(page.ids)

    message, kept = asyncio.run(go())
    assert message.startswith(f"the filter '{HUGE}' needed more memory than allowed (1,024 MB)")
    assert kept == sorted(["tides", "coffee"])
    assert set(kept) <= set(PASSAGES)


def test_a_filter_lancedb_refuses_is_said_in_plain_words(kb: KnowledgeBase) -> None:
    async def go() -> str:
        async with Session() as session:
            with pytest.raises(FilterError) as refused:
                await fetch_page(
                    session, TableTarget(str(kb.db_dir), kb.name), offset=0, limit=5, where="nope = 1"
                )
            return refused.value.message

    assert asyncio.run(go()) == "the filter 'nope = 1' cannot be used: there is no column named nope"


def test_the_worker_starts_when_warmed_and_loads_lancedbs_engine_without_pyarrow(kb: KnowledgeBase) -> None:
    """Warmed when a filter is likely (the window: the user types one; the CLI: --where), the worker is
    running before the filter comes; it loads LanceDB's compiled engine only, so it is ready at once."""
    import psutil

    async def go() -> tuple[int, list[str]]:
        async with Session() as session:
            before = spawned_children()
            session.filters.warm()
            wait_until(lambda: spawned_children() - before, "the filter worker started")
            (worker,) = spawned_children() - before
            page = await fetch_page(session, kb.target, offset=0, limit=50, where="id = 'paris'")
            assert page.ids == ("paris",)
            assert spawned_children() - before == {worker}  # the filter was counted by the warmed worker
            return worker, [m.path for m in psutil.Process(worker).memory_maps()]

    worker, mapped = asyncio.run(go())
    assert any("_lancedb" in path for path in mapped)
    assert not [path for path in mapped if "pyarrow" in path]
    assert not psutil.pid_exists(worker)  # closing the session ended it
