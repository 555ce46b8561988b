"""LanceDB's threads run below the app's priority once its runtime was started by
:mod:`recall_gui.core.base.lance_priority`: checked in fresh interpreters (the runtime is one per process)."""

from __future__ import annotations

import sys
from typing import TypedDict

import pytest

from tests.kbtools import KnowledgeBase
from tests.probes import run_probe

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

PROBE = """
import asyncio, glob, json, os, sys
from recall_gui.core.tables.browse import fetch_page
from recall_gui.core.session.session import Session
from recall_gui.core.storage.target import TableTarget
if sys.argv[1] == "lowered":
    from recall_gui.core.base.lance_priority import start_lance_runtime_at_low_priority
    start_lance_runtime_at_low_priority()
async def first_page():
    async with Session() as session:
        return await fetch_page(session, TableTarget(sys.argv[2], sys.argv[3]), offset=0, limit=3)
page = asyncio.run(first_page())

def nice_of(stat: str) -> int:
    return int(stat[stat.rindex(")") + 2 :].split()[16])

lance = []
for task in glob.glob("/proc/self/task/*"):
    stat = open(task + "/stat").read()
    if stat[stat.index("(") + 1 : stat.rindex(")")].startswith("lancedb"):
        lance.append(nice_of(stat))
main = nice_of(open(f"/proc/self/task/{os.getpid()}/stat").read())
print(json.dumps({"rows": len(page.rows), "main": main, "lance": lance}))
"""


class Priorities(TypedDict):
    rows: int
    main: int
    lance: list[int]


def thread_priorities(kb: KnowledgeBase, mode: str) -> Priorities:
    found: Priorities = run_probe(PROBE, mode, str(kb.db_dir), kb.name)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")
def test_lancedb_threads_run_below_the_callers_priority_and_still_read(kb: KnowledgeBase) -> None:
    from recall_gui.core.base.lance_priority import LANCE_NICE_INCREMENT

    normal = thread_priorities(kb, "normal")
    lowered = thread_priorities(kb, "lowered")
    assert normal["rows"] == lowered["rows"] == 3
    assert normal["lance"] and set(normal["lance"]) == {normal["main"]}
    assert lowered["main"] == normal["main"]  # the caller's own priority is untouched
    expected = min(19, normal["main"] + LANCE_NICE_INCREMENT)
    assert lowered["lance"] and set(lowered["lance"]) == {expected}
