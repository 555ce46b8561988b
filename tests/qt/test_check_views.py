"""The Checks page's metrics, versions chart and A/B view, against LanceDB's answers on each version (a row
deleted by another program makes version 2) and metrics computed here by hand."""

from __future__ import annotations

import asyncio
import json
import math
import os
from pathlib import Path
from typing import Any

import lancedb
import pytest
from PySide6.QtWidgets import QTableWidget

from recall_gui.core.base import RecallError
from tests.kbtools import KnowledgeBase, snapshot_tree
from tests.qt.conftest import WindowFactory, run, waiting_for

FRANCE = "What is the capital of France?"


def golden_file(kb: KnowledgeBase) -> Path:
    path = Path(os.environ["RECALL_GUI_DATA_DIR"]) / "checks" / "golden.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    check = {"db_name": kb.name, "query": FRANCE, "expect": ["paris", "berlin"], "limit": 3}
    path.write_text(json.dumps({"checks": [check]}), encoding="utf-8")
    return path


def lance_ids(embedder: Any, kb: KnowledgeBase, version: int | None = None) -> list[str]:
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    if version is not None:
        table.checkout(version)
    return [r["id"] for r in table.search(embedder.embed_sync(FRANCE)).distance_type("l2").limit(3).to_list()]


def by_hand(ids: list[str]) -> tuple[float, float, float]:
    ranks = [ids.index(e) + 1 for e in ("paris", "berlin") if e in ids]
    ideal = 1 + 1 / math.log2(3)
    return (
        len(ranks) / 2,
        1 / min(ranks) if ranks else 0.0,
        sum(1 / math.log2(r + 1) for r in ranks) / ideal,
    )


def test_metrics_versions_and_compare_on_the_checks_page(
    kb: KnowledgeBase, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    golden_file(kb)
    lancedb.connect(str(kb.db_dir)).open_table(kb.name).delete("id = 'paris'")
    before = snapshot_tree(kb.db_dir)
    window = open_window(kb.registry_dir)
    page = window.checks
    window.pages.setCurrentWidget(page)
    run(loop, page.load_file())
    run(loop, page.run_checks())
    recall, reciprocal, ndcg = by_hand(lance_ids(embedder, kb))
    assert f"Means: recall {recall:.3f}, MRR {reciprocal:.3f}, nDCG {ndcg:.3f}" in page.note.message
    page.table.selectRow(0)
    assert (
        f"Recall {recall:.3f} · reciprocal rank {reciprocal:.3f} · nDCG {ndcg:.3f}"
        in page.detail.toPlainText()
    )

    run(loop, page.run_on_versions())
    series = page.versions_view.series
    expected = {1: by_hand(lance_ids(embedder, kb, 1)), 2: by_hand(lance_ids(embedder, kb, 2))}
    assert series["recall"] == [(v, expected[v][0]) for v in (1, 2)]
    assert series["mrr"] == [(v, expected[v][1]) for v in (1, 2)]
    axis = page.versions_view.chart.getAxis("bottom")
    ticks = [value for _spacing, values in axis.tickValues(0.95, 2.05, 1000) for value in values]
    assert ticks and all(value == int(value) for value in ticks)  # whole versions, never 1.5, at any width
    assert f"“{FRANCE}” at version 2" in page.versions_view.note.text()

    run(loop, page.compare(version=1))
    table = page.findChild(QTableWidget, "checksCompareTable")
    a_ids, b_ids = lance_ids(embedder, kb, 1), lance_ids(embedder, kb)
    assert [table.item(0, c).text() for c in (1, 2)] == ["pass", "FAIL"]
    assert table.item(0, 3).text() == ", ".join(i for i in a_ids if i not in b_ids)
    assert table.item(0, 4).text() == ", ".join(i for i in b_ids if i not in a_ids)
    assert "B lost an expected id that A found." in page.compare_view.note.text()
    assert snapshot_tree(kb.db_dir) == before


def test_hubs_of_a_golden_file_are_counted_from_the_agents_answers(
    kb: KnowledgeBase, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    from collections import Counter

    queries = [FRANCE, "How do I change my password?", "Which city is Germany's capital?", "tides"]
    path = Path(os.environ["RECALL_GUI_DATA_DIR"]) / "checks" / "golden.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    checks = [{"db_name": kb.name, "query": q, "expect": ["paris"], "limit": 4} for q in queries]
    path.write_text(json.dumps({"checks": checks}), encoding="utf-8")
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    counts: Counter[str] = Counter()
    for query in queries:  # the oracle: LanceDB's own answers, counted here
        counts.update(
            r["id"] for r in table.search(embedder.embed_sync(query)).distance_type("l2").limit(4).to_list()
        )
    window = open_window(kb.registry_dir)
    page = window.checks
    window.pages.setCurrentWidget(page)
    run(loop, page.load_file())
    run(loop, page.find_hubs())
    shown = page.findChild(QTableWidget, "checksHubsTable")
    rows = [tuple(shown.item(row, column).text() for column in range(3)) for row in range(shown.rowCount())]
    expected = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    assert rows == [(kb.name, entry, f"{n} of 4 ({n / 4:.0%})") for entry, n in expected]
    hubs = sum(1 for _entry, n in expected if n / 4 > 0.25)
    note = page.hubs_view.note.text()
    assert note.startswith(f"{kb.name}, latest version, 4 queries at limit 4: ")
    assert (f"{hubs} hub(s) returned for more than 25% of them" if hubs else "no hub") in note


def test_a_failed_or_cancelled_run_beside_the_checks_says_so_in_its_view(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recall_gui import core

    async def cannot_list(*_args: Any, **_kwargs: Any) -> Any:
        raise RecallError("the versions could not be listed", hint="Try again later.")

    searching = asyncio.Event()

    async def endless_hubs(*_args: Any) -> Any:
        searching.set()
        await asyncio.Event().wait()  # until cancelled

    monkeypatch.setattr(core.golden, "run_on_versions", cannot_list)
    monkeypatch.setattr(core.reach, "hubs_of_checks", endless_hubs)
    golden_file(kb)
    window = open_window(kb.registry_dir)
    page = window.checks
    window.pages.setCurrentWidget(page)
    run(loop, page.load_file())
    with waiting_for(loop, page.runFinished):
        page.views.versions_button.click()
    assert page.versions_view.note.text() == (
        "The run on every version failed: the versions could not be listed\nTry again later."
    )
    page.views.hubs_button.click()
    run(loop, searching.wait())
    with waiting_for(loop, page.runFinished):
        window.menus.cancel_action.trigger()
    assert page.hubs_view.note.text() == "The search for hubs was cancelled before it finished."
