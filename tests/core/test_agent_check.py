"""Verdicts of the Agent view: the served description against the editor, a payload against the window."""

from __future__ import annotations

import hashlib
import json

import pytest

from recall_gui.core.agent_log.agent_check import (
    DescriptionVerdict,
    WindowAnswer,
    compare_payload,
    judge_description,
    result_ids,
)
from recall_gui.core.base.types import RecallEntry, RecallOutput
from recall_gui.core.storage.entry_names import IdRepeats


def payload(*ids: str) -> str:
    return RecallOutput("q", tuple(RecallEntry(i, f"text of {i}") for i in ids)).to_json()


@pytest.mark.parametrize(
    ("served", "shown", "unsaved", "verdict"),
    [
        ("A", "A", False, DescriptionVerdict.SAME),
        ("A", "A", True, DescriptionVerdict.SAME),  # whatever the editor thinks, the texts agree
        ("A", "B", True, DescriptionVerdict.UNSAVED),
        ("A", "B", False, DescriptionVerdict.DIFFERENT),
        ("A\n", "A", False, DescriptionVerdict.DIFFERENT),  # a trailing newline is a difference
    ],
)
def test_judging_the_served_description(
    served: str, shown: str, unsaved: bool, verdict: DescriptionVerdict
) -> None:
    assert judge_description(served, shown, unsaved=unsaved) is verdict


def test_result_ids_read_recall_search_answers_only() -> None:
    assert result_ids(payload("a", "b")) == ("a", "b")
    assert result_ids(payload()) == ()
    assert result_ids("Database 'x' not found. Active databases: notes") is None
    assert result_ids(json.dumps({"query": "q"})) is None
    assert result_ids(json.dumps({"results": [{"content": "no id"}]})) is None
    assert result_ids(json.dumps([1, 2])) is None


def test_the_same_ids_in_the_same_order_match() -> None:
    comparison = compare_payload(payload("a", "b", "c"), False, WindowAnswer(ids=("a", "b", "c")))
    assert comparison.matches
    assert comparison.summary == "Matches the window: the same 3 results, in the same order."
    one = compare_payload(payload("a"), False, WindowAnswer(ids=("a",)))
    assert one.summary == "Matches the window: the same 1 result, in the same order."


def test_another_order_does_not_match() -> None:
    comparison = compare_payload(payload("a", "b"), False, WindowAnswer(ids=("b", "a")))
    assert not comparison.matches
    assert comparison.summary == "Differs from the window: the same results in another order."


def test_other_ids_say_from_which_rank_on() -> None:
    comparison = compare_payload(payload("a", "b", "x"), False, WindowAnswer(ids=("a", "b", "c")))
    assert not comparison.matches
    assert comparison.summary == (
        "Differs from the window from rank 3 on: the agent gets a, b, x; the window shows a, b, c."
    )
    shorter = compare_payload(payload("a"), False, WindowAnswer(ids=("a", "b")))
    assert "from rank 2 on" in shorter.summary and not shorter.matches
    many = compare_payload(payload(*"abcdefg"), False, WindowAnswer(ids=()))
    assert "the agent gets a, b, c, d, e, … (7 in all); the window shows no results." in many.summary


def test_errors_on_either_side() -> None:
    error = "Database 'archive' not found. Active databases: notes"
    agent_only = compare_payload(error, True, WindowAnswer(ids=("a", "b")))
    assert not agent_only.matches
    assert agent_only.summary == "The agent gets an error, while the window finds 2 results."
    both = compare_payload(error, True, WindowAnswer(error=error))
    assert both.matches and both.summary == "Both fail with the same message."
    differently = compare_payload(error, True, WindowAnswer(error="table gone"))
    assert not differently.matches and "the window says “table gone”" in differently.summary
    window_only = compare_payload(payload("a"), False, WindowAnswer(error="table gone"))
    assert not window_only.matches
    assert window_only.summary == "The agent gets 1 result, while the window's search fails: table gone"


def test_a_payload_that_is_not_the_answer_is_said_so() -> None:
    comparison = compare_payload("plain words", False, WindowAnswer(ids=("a",)))
    assert not comparison.matches and "not recall_search's JSON answer" in comparison.summary


def test_a_view_other_than_the_agents_scope_is_named_beside_the_verdict() -> None:
    differs = ("the agent searches without your filter",)
    same = compare_payload(payload("a", "b"), False, WindowAnswer(ids=("a", "b"), view_differences=differs))
    assert same.matches
    assert same.summary == (
        "Matches the window's search as the agent runs it: the same 2 results, in the same order. "
        "The knowledge page shows another view: the agent searches without your filter."
    )
    other = compare_payload(payload("a", "x"), False, WindowAnswer(ids=("a", "b"), view_differences=differs))
    assert not other.matches
    assert other.summary.startswith("Differs from the window's search as the agent runs it from rank 2 on")
    assert other.summary.endswith(
        "The knowledge page shows another view: the agent searches without your filter."
    )


def test_result_ids_name_entries_whose_id_repeats_by_their_contents_sha256() -> None:
    answer = RecallOutput(
        "q", (RecallEntry("content", "first document"), RecallEntry("a", "text of a"))
    ).to_json()
    first = hashlib.sha256(b"first document").hexdigest()
    repeats = IdRepeats(rows=3, shared={"content": 2})
    assert result_ids(answer, repeats) == (f"content\u00b7{first[:8]}", "a")
    assert result_ids(answer) == ("content", "a")  # no repeats known: the ids as they are
