"""One bad logged call never poisons ``hubs --log`` and ``reach --log``: the server refuses a query holding
a lone surrogate (``"x\\ud800y"``) but logs the call; the commands skip such queries (as they skip calls
without a query), count them and say so, and search the rest. The model is never blamed for one bad
input."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from recall_gui.core.agent_log.agent_log import LogFiles
from recall_gui.core.agent_log.call_record import CallRecord, now_iso
from recall_gui.core.base.errors import EmbedderError
from recall_gui.core.search.harness import Harness
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase
from tests.logtools import logged_call, write_records

GOOD = ["How do I change my password?", "What is the capital of France?"]
SKIPPED_NOTES = [
    "note: 2 logged calls to notes without a query to search: skipped",
    "note: 1 logged call to notes whose query is not valid text (it holds an unpaired surrogate; the server "
    "refused it): skipped",
]


def log_with_a_bad_call(kb: KnowledgeBase) -> list[CallRecord]:
    """Good calls around a call whose query holds a lone surrogate, and two without a query of text, as
    the server records them (through the line written to the log and read back)."""
    harness = Harness(kb.registry_dir)
    try:
        good = [logged_call(harness, {"db_name": kb.name, "query": q, "limit": 2}) for q in GOOD]
    finally:
        asyncio.run(harness.aclose())
    bad: list[dict[str, Any]] = [
        {"db_name": kb.name, "query": "x\ud800y"},
        {"db_name": kb.name, "query": None},
        {"db_name": kb.name, "query": 42},
    ]
    refused = [CallRecord(now_iso(), "agent", "1.0", "recall_search", a, error="refused") for a in bad]
    write_records(LogFiles(), [good[0], *refused, good[1]])
    read = LogFiles().read()
    assert read.records[1].arguments == {"db_name": kb.name, "query": "x\ud800y"}  # as the log keeps it
    return good


@pytest.mark.process
def test_hubs_of_the_log_skips_a_query_that_is_not_text_and_says_so(kb: KnowledgeBase) -> None:
    log_with_a_bad_call(kb)
    done = cli("hubs", "--registry", str(kb.registry_dir), "--db", kb.name, "--log", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["queries"] == len(GOOD)
    assert done.stderr.splitlines() == SKIPPED_NOTES
    assert "damaged" not in done.stderr


@pytest.mark.process
def test_reach_of_the_log_skips_a_query_that_is_not_text_and_says_so(kb: KnowledgeBase) -> None:
    good = log_with_a_bad_call(kb)
    done = cli("reach", "--registry", str(kb.registry_dir), "--db", kb.name, "--log", "--json")
    assert done.returncode in (0, 1), done.stderr  # every entry reachable, or some not: it ran
    data = json.loads(done.stdout)
    returned = {item["id"]: item["returned_for_queries"] for item in data["retrievability"]}
    expected = {entry_id: 0 for entry_id in kb.ids}
    for record in good:
        for entry_id in set(record.result_ids):
            expected[entry_id] += 1
    assert data["queries"] == len(GOOD) and returned == expected
    assert [line for line in done.stderr.splitlines() if line.startswith("note:")] == SKIPPED_NOTES


@pytest.mark.parametrize("many", [False, True])
def test_a_query_that_is_not_text_is_said_to_be_so_never_a_damaged_model(embedder: Any, many: bool) -> None:
    with pytest.raises(EmbedderError) as refused:
        if many:
            embedder.embed_queries(["fine", "x\ud800y"])
        else:
            embedder.embed_checked("x\ud800y")
    name = embedder.model_info.name
    assert (
        refused.value.message
        == f"{name}: the query is not valid text: it holds the unpaired surrogate \\ud800"
    )
    assert refused.value.hint == "Take the odd character out of the query."
