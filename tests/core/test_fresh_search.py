"""A fresh `recall-gui search` searches once: it reads no table's vectors into memory for exact search
(that read costs more than the one flat scan it would replace), and prints the very bytes a session
that keeps vectors (the window, the MCP server) returns."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recall_gui.core.search.harness import Harness
from recall_gui.core.session.session import Session
from tests.kbtools import KnowledgeBase

ROOT = Path(__file__).resolve().parents[2]
QUERY = "How do I change my password?"


def test_a_one_search_session_keeps_no_vectors_and_answers_the_same(kb: KnowledgeBase) -> None:
    async def go(keep_vectors: bool) -> tuple[str, str, int]:
        async with Session(keep_vectors=keep_vectors) as session:
            harness = Harness(kb.registry_dir, session=session)
            report = await harness.run({"db_name": kb.name, "query": QUERY, "limit": 3})
            return report.to_json(), report.result.method, len(session.vectors.cached_tables())

    one_off, kept = asyncio.run(go(False)), asyncio.run(go(True))
    assert one_off[1:] == ("flat", 0)
    assert kept[1:] == ("exact", 1)
    assert one_off[0] == kept[0]


@pytest.mark.process
def test_recall_gui_search_scans_once_and_prints_what_the_harness_returns(kb: KnowledgeBase) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "recall_gui",
            "search",
            "--registry",
            str(kb.registry_dir),
            "--db",
            kb.name,
            "--limit",
            "3",
            "--verbose",
            QUERY,
        ],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert "results by LanceDB's flat scan" in done.stderr
    assert "note: a single search" in done.stderr

    async def kept() -> str:
        harness = Harness(kb.registry_dir)
        try:
            return await harness.recall_search({"db_name": kb.name, "query": QUERY, "limit": 3})
        finally:
            await harness.aclose()

    assert done.stdout == asyncio.run(kept()) + "\n"
