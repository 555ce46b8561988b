"""Agents and verdicts meet in the window: the real MCP server answers 50 questions (its agent log written as
it writes one) of a table written as cosh writes one (every id "content"); entries are marked wrong on the
Review page from the keyboard; the Agent log page then says how many of this week's calls were given them,
names them, flags them in the table and marks the selected call's results; the order "most often given to
agents" and the progress follow the log. The Agent view marks the results the agent got, and its answer is
what it was before the verdict."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from recall_gui.core.agent_log.agent_log import LogFiles
from recall_gui.core.agent_log.call_log import CallLog, LogSwitch
from recall_gui.core.base.app_settings import SettingsStore
from recall_gui.core.review.reviewing import open_review
from recall_gui.core.session.session import Session
from recall_gui.mcp.server import RecallMcpServer
from recall_gui.qt.models.calls_model import QUERY, RESULTS
from tests.kbtools import PASSAGES, KnowledgeBase, snapshot_tree
from tests.qt.conftest import WindowFactory, run, until, waiting_for
from tests.qt.test_agent_view import open_agent_view, run_through_server, search_in_window
from tests.qt.test_review_page import page_shown, press, settle
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


def ask_server(registry_dir: Path, config: Path) -> list[list[str]]:
    """The 50 questions through the real server, its calls logged in the app's agent log; the contents each
    answer gave, in order (on a thread of its own: its own event loop)."""
    log = CallLog(LogFiles(), LogSwitch(SettingsStore(config)))
    app = RecallMcpServer(registry_dir, call_log=log)

    async def ask() -> list[list[str]]:
        answers = []
        async with Client(app.server, mode="legacy") as client:
            for question in ASKED:
                result = await client.call_tool(
                    "recall_search", {"db_name": "notes", "query": question, "limit": 2}
                )
                assert isinstance(result.content[0], types.TextContent) and not result.is_error
                answers.append([entry["content"] for entry in json.loads(result.content[0].text)["results"]])
        await app.harness.aclose()
        return answers

    with ThreadPoolExecutor(1) as thread:
        answers = thread.submit(asyncio.run, ask()).result()
    log.close()
    return answers


def test_the_log_page_names_the_calls_given_entries_marked_wrong_on_the_review_page(
    open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path, passage_vectors: Any
) -> None:
    table = write_table(
        tmp_path / "kb", ("content",) * len(PASSAGES), tuple(PASSAGES.values()), vectors=passage_vectors
    )
    before = snapshot_tree(tmp_path / "kb")
    answers = ask_server(table.registry_dir, tmp_path / "server-config")
    flagged = [number for number, given in enumerate(answers) if set(given) & set(WRONG)]
    given = {text for texts in answers for text in texts}
    assert flagged and set(WRONG) <= given  # the questions reach the entries marked wrong

    window = open_window(table.registry_dir)
    page = page_shown(window, loop)
    # Most often given first: the log's order, by this test's count of the answers.
    most = page.order_combo.findText("most often given to agents")
    page.order_combo.setCurrentIndex(most)
    page.order_combo.activated.emit(most)
    settle(page, loop)
    counts = {text: sum(text in texts for texts in answers) for text in given}
    walked = []
    for _ in range(len(given)):
        text = page.entry_view.content.toPlainText()
        walked.append(text)
        press(page, loop, Qt.Key.Key_W if text in WRONG else Qt.Key.Key_J)
    assert sorted(walked) == sorted(given)
    assert [counts[text] for text in walked] == sorted(counts.values(), reverse=True)
    share = len(set(WRONG)) / len(given)
    assert page.progress_label.text() == (
        f"reviewed 2 of {len(PASSAGES)} · 2 wrong · covers {share:.0%} of what agents were given this month"
    )

    log = window.log
    with waiting_for(loop, log.verdicts.joined):
        window.pages.setCurrentWidget(log)
    run(loop, until(lambda: log.calls.calls_model.rowCount() == len(ASKED), "the calls were read"))
    note = log.verdicts_note.message.splitlines()
    assert note[0] == f"notes — this week: {len(flagged)} of 50 calls were given 2 entries marked wrong"
    newest = [ASKED[number] for number in reversed(flagged)][:5]
    assert [line.split("“")[1].split("”")[0] for line in note[1:6]] == newest
    assert all(line.endswith("(wrong)") for line in note[1:6])
    model = log.calls.calls_model
    marked = {
        str(model.index(row, QUERY).data())
        for row in range(model.rowCount())
        if str(model.index(row, RESULTS).data()).startswith("⚑")
    }
    assert marked == {ASKED[number] for number in flagged}
    # The selected call's results: those marked wrong carry the mark, in the order the agent got them.
    first = next(
        row for row in range(model.rowCount()) if str(model.index(row, QUERY).data()) == ASKED[flagged[0]]
    )
    with waiting_for(loop, log.contentsShown):
        log.calls.select_row(first)
    results = log.calls.results_model
    expected = [text in WRONG for text in answers[flagged[0]]]
    run(loop, until(lambda: any(results.verdict_mark(row) for row in range(results.rowCount())), "marked"))
    assert [results.verdict_mark(row) is not None for row in range(results.rowCount())] == expected
    assert snapshot_tree(tmp_path / "kb") == before


@pytest.mark.process
def test_the_agent_view_marks_the_results_the_agent_got_and_its_answer_stays_the_same(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    search_in_window(window, qtbot, loop, "ocean tides and the Moon")
    agent = open_agent_view(window, loop)
    run_through_server(window, loop)
    answer = agent.payload_raw.toPlainText()
    assert not agent.verdicts_note.isVisible()  # no review yet: nothing to say
    session = Session(keep_vectors=False)
    entry = window.services.registry.get(kb.name)
    assert entry is not None
    review = run(loop, open_review(session, entry))
    (position,) = review.snapshot.positions_of_sha(sha(PASSAGES["tides"])).tolist()
    review.mark(int(position), "wrong", "the Moon is not the only cause")
    run(loop, session.aclose())
    run_through_server(window, loop)
    assert agent.payload_raw.toPlainText() == answer  # a verdict never changes what the agent gets
    rank = [result["id"] for result in json.loads(answer)["results"]].index("tides") + 1
    results = len(json.loads(answer)["results"])
    run(loop, until(agent.verdicts_note.isVisible, "the verdicts were looked up"))
    assert agent.verdicts_note.message.startswith(
        f"1 of the {results} results the agent got has a verdict in the review, 1 marked wrong or outdated: "
        f"{rank}. tides·{sha(PASSAGES['tides'])[:8]} wrong ("
    )
    assert agent.verdicts_note.tone == "bad"
