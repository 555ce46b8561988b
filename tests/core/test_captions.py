"""Caption texts: counts, and the user's text quoted on one line, safely."""

from __future__ import annotations

import pytest

from recall_gui.core.base.captions import CAPTION_QUOTE_CHARS, one_line, plural, quoted, visible


def test_plural_counts_with_separators_and_a_singular_for_one() -> None:
    assert plural(1, "result") == "1 result"
    assert plural(0, "row") == "0 rows"
    assert plural(12345, "row") == "12,345 rows"


def test_one_line_joins_whitespace_and_cuts_with_an_ellipsis() -> None:
    assert one_line("a\n\tb   c", 10) == "a b c"
    assert one_line("abcdefghij", 5) == "abcd…"
    assert one_line("abcde", 5) == "abcde"


@pytest.mark.parametrize(
    ("char", "shown"),
    [("\x00", "␀"), ("\x07", "␇"), ("\x1b", "␛"), ("\x7f", "␡"), ("\x85", "\ufffd"), ("a", "a"), ("ش", "ش")],
)
def test_control_characters_become_their_symbols(char: str, shown: str) -> None:
    assert visible(char) == shown


@pytest.mark.parametrize(
    ("text", "caption"),
    [
        ("capital\x00 of\x07 France\x1b[31m\r\n\tplease\x7f", "“capital␀ of␇ France␛[31m please␡”"),
        ("ما هي عاصمة فرنسا؟", "“ما هي عاصمة فرنسا؟”"),
        ("\u202eOcean tides", "“\u2068\u202eOcean tides\u2069”"),
        ("\u200b\u200f", "“\u200b\u200f”"),
    ],
)
def test_quoted_text_stays_on_one_line_and_keeps_direction_overrides_inside(text: str, caption: str) -> None:
    assert quoted(text) == caption


def test_a_long_query_is_quoted_up_to_the_caption_limit() -> None:
    shown = quoted("word " * 100)
    assert len(shown) == CAPTION_QUOTE_CHARS + 2
    assert shown.endswith("…”")
