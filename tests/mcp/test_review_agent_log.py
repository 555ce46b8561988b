"""Agents and verdicts meet: the MCP server asked 50 questions of a table written as cosh writes one (every
id "content"), entries marked wrong, and the calls that were given them named — against what the agent
received; the agent's answer is the same before and after a verdict."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client

from recall_gui.core.agent_log.agent_log import LogFiles
from recall_gui.core.agent_log.call_log import CallLog, LogSwitch
from recall_gui.core.base.app_settings import SettingsStore
from recall_gui.core.review.agent_join import Period, served_report
from recall_gui.core.review.queue import most_given_order
from recall_gui.core.review.reviewing import open_review
from recall_gui.core.session.session import Session
from recall_gui.mcp.server import RecallMcpServer
from tests.kbtools import PASSAGES
from tests.reviewtools import sha, write_table

TOPICS = (
    "tides",
    "coffee",
    "passwords",
    "Paris",
    "generators",
    "asyncio",
    "git rebase",
    "plants",
    "Berlin",
    "emoji",
)
ASKED = tuple(
    f"{how} {topic}"
    for how in ("what about", "explain", "tell me of", "how do", "facts on")
    for topic in TOPICS
)
WRONG = (PASSAGES["tides"], PASSAGES["coffee"])


def test_the_calls_given_entries_marked_wrong_are_named(tmp_path: Path, passage_vectors: Any) -> None:
    assert len(ASKED) == 50
    table = write_table(
        tmp_path / "kb", ("content",) * len(PASSAGES), tuple(PASSAGES.values()), vectors=passage_vectors
    )
    files = LogFiles(tmp_path / "log")
    log = CallLog(files, LogSwitch(SettingsStore(tmp_path / "config")))
    app = RecallMcpServer(table.registry_dir, call_log=log)

    async def ask(questions: tuple[str, ...]) -> list[str]:
        answers = []
        async with Client(app.server, mode="legacy") as client:
            for question in questions:
                result = await client.call_tool(
                    "recall_search", {"db_name": "notes", "query": question, "limit": 2}
                )
                assert isinstance(result.content[0], types.TextContent) and not result.is_error
                answers.append(result.content[0].text)
        return answers

    received = asyncio.run(ask(ASKED))
    session = Session(keep_vectors=False)
    review = asyncio.run(open_review(session, table.entry()))
    for text in WRONG:
        (position,) = review.snapshot.positions_of_sha(sha(text)).tolist()
        review.mark(int(position), "wrong")
    after = asyncio.run(ask(ASKED[:5]))
    log.close()
    asyncio.run(app.harness.aclose())
    assert after == received[:5]  # a verdict never changes what the agent is given

    records = files.read().records[: len(ASKED)]
    contents = [[entry["content"] for entry in json.loads(text)["results"]] for text in received]
    for record, given in zip(records, contents, strict=True):
        assert record.result_ids == ("content",) * len(given)
        assert record.result_sha256 == tuple(sha(text) for text in given)

    report = served_report(records, "notes", review.state, Period("in the test"))
    expected = [number for number, given in enumerate(contents) if set(given) & set(WRONG)]
    assert expected, "the questions reach the entries marked wrong"
    assert [records.index(call.record) for call in report.flagged_calls] == expected
    for call in report.flagged_calls:
        assert {entry.content_sha256 for entry in call.entries} <= {sha(text) for text in WRONG}
    given = {text for texts in contents for text in texts}
    assert report.calls == 50 and report.served == len(given) and report.reviewed == len(given & set(WRONG))
    marked = len(set(WRONG) & given)
    entries = f"{marked} {'entry' if marked == 1 else 'entries'}"
    assert report.text() == f"in the test: {len(expected)} of 50 calls were given {entries} marked wrong"
    share = report.share()
    assert share.share == len(given & set(WRONG)) / len(given)
    assert f"covers {share.share:.0%} of what agents were given in the test" in review.progress(share).text()
    # The order "most often given to agents": every entry given, the most often given first.
    counts = {sha(text): sum(text in texts for texts in contents) for text in given}
    queue = most_given_order(review.state, report.given)
    most = [review.snapshot.sha_at(position) for position in queue.positions]
    assert sorted(most) == sorted(counts)
    assert [counts[digest] for digest in most] == sorted(counts.values(), reverse=True)
    asyncio.run(session.aclose())
