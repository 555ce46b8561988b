"""Pseudo-queries: the question each rule makes of an entry's text, spelled out by hand."""

from __future__ import annotations

import pytest

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.types import MAX_QUERY_CHARS
from recall_gui.core.reach.pseudo_queries import MAX_QUERY_WORDS, QueryRule, parse_rule, query_of

SENTENCE, LINE, WHOLE = QueryRule("first-sentence"), QueryRule("first-line"), QueryRule("whole-text")


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("To reset it, open Settings. Then choose Account.", "To reset it, open Settings."),
        ("## Installing on Linux\n\nRun the installer. It asks for a folder.", "Installing on Linux"),
        ("---\n\n```python\nx = 1\n```\nEnd of file. Nothing more.", "x = 1 End of file."),
        ("Use e.g. pip or uv to install it. Then run it.", "Use e.g. pip or uv to install it."),
        ("Version 3.2 is out! 4 fixes landed.", "Version 3.2 is out!"),
        ('It asks: "why?" Nobody knows.', 'It asks: "why?" Nobody knows.'),
        ("no end mark at all\nsecond line", "no end mark at all second line"),
        ("日本語の文です。次の文です。", "日本語の文です。"),
        ("   \n\t ", ""),
        ("", ""),
    ],
)
def test_the_first_sentence_or_the_heading_of_a_chunk(text: str, query: str) -> None:
    assert query_of(text, SENTENCE) == query


def test_a_sentence_without_an_end_keeps_at_most_forty_words() -> None:
    words = [f"w{n}" for n in range(100)]
    assert query_of(" ".join(words) + ".", SENTENCE) == " ".join(words[:MAX_QUERY_WORDS])
    assert MAX_QUERY_WORDS == 40


def test_the_first_line_and_the_whole_text() -> None:
    text = "# Title here #\nBody line one.\nBody line two."
    assert query_of(text, LINE) == "Title here"
    assert query_of("\n\nplain first line\nsecond", LINE) == "plain first line"
    assert query_of(text, WHOLE) == "# Title here # Body line one. Body line two."
    long = "word " * (MAX_QUERY_CHARS // 5 + 10)
    cut = query_of(long, WHOLE)
    assert len(cut) <= MAX_QUERY_CHARS and cut.endswith("word") and cut.count("word") == MAX_QUERY_CHARS // 5


@pytest.mark.parametrize(
    ("typed", "rule"),
    [
        (None, QueryRule("first-sentence")),
        ("first-line", QueryRule("first-line")),
        (" whole-text ", QueryRule("whole-text")),
        ("column:title", QueryRule("column", "title")),
        ("column:metadata.title", QueryRule("column", "metadata.title")),
    ],
)
def test_rules_as_typed(typed: str | None, rule: QueryRule) -> None:
    assert parse_rule(typed) == rule
    assert parse_rule(rule.label) == rule


@pytest.mark.parametrize("typed", ["second-sentence", "column:", "column: ", "Column:title"])
def test_other_rules_are_refused_with_the_ones_there_are(typed: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        parse_rule(typed)
    assert "first-sentence" in (refused.value.hint or "")
