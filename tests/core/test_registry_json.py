"""The registry's JSON reader decodes what ``json.loads`` decodes, to the same value, and fails where it
fails with its message; a large text's "dbs" elements are given as they are written. Checked on generated
JSON texts with any of JSON's white space between tokens, repeated names, numbers too long to read, and
on those texts broken by an edit."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recall_gui.core.registry.registry_json import LongNumber, dumps, parse, read_integer

SPACE = st.text(alphabet=" \t\n\r", max_size=3)
#: Few names, so that objects repeat them (the last one counts), "dbs" among them.
NAMES = st.sampled_from(["dbs", "name", "uri", "", "é", "a\\b", "dbs "])


def scalar_texts() -> st.SearchStrategy[str]:
    plain = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
    )
    written = st.builds(
        lambda value, ascii_only: json.dumps(value, ensure_ascii=ascii_only), plain, st.booleans()
    )
    too_long = st.integers(min_value=4_301, max_value=4_400).map(lambda digits: "9" * digits)
    return st.one_of(written, written, written, too_long)


#: The punctuation between tokens: JSON's, or (for texts that must fail as ``json.loads`` fails) often not.
STRICT = {"comma": st.just(","), "colon": st.just(":"), "trailing": st.just("")}
SLOPPY = {
    "comma": st.sampled_from([",", ",", ",", ",,", "", ";"]),
    "colon": st.sampled_from([":", ":", ":", "", "::", "="]),
    "trailing": st.sampled_from(["", "", "", ","]),
}


@st.composite
def array_text(draw: st.DrawFn, items: st.SearchStrategy[str], marks: dict[str, Any]) -> str:
    parts = [draw(SPACE) + item + draw(SPACE) for item in draw(st.lists(items, max_size=5))]
    inside = draw(marks["comma"]).join(parts) + draw(marks["trailing"]) if parts else draw(SPACE)
    return "[" + inside + "]"


@st.composite
def object_text(draw: st.DrawFn, values: st.SearchStrategy[str], marks: dict[str, Any]) -> str:
    members = draw(st.lists(st.tuples(NAMES, values), max_size=5))
    parts = [
        draw(SPACE)
        + json.dumps(name)
        + draw(SPACE)
        + draw(marks["colon"])
        + draw(SPACE)
        + value
        + draw(SPACE)
        for name, value in members
    ]
    inside = draw(marks["comma"]).join(parts) + draw(marks["trailing"]) if parts else draw(SPACE)
    return "{" + inside + "}"


def json_texts(marks: dict[str, Any] = STRICT) -> st.SearchStrategy[str]:
    """JSON texts; ``marks``: the punctuation of the top level and of the arrays in it, which the reader
    reads itself (what lies deeper is decoded by ``json`` alone, and written correctly)."""
    nested = st.recursive(
        scalar_texts(),
        lambda inner: st.one_of(array_text(inner, STRICT), object_text(inner, STRICT)),
        max_leaves=12,
    )
    members = st.one_of(nested, array_text(nested, marks))
    top = st.one_of(object_text(members, marks), array_text(nested, marks), nested)
    return st.builds(lambda before, text, after: before + text + after, SPACE, top, SPACE)


def plain(value: Any) -> Any:
    """``value`` with each :class:`LongNumber` as its digits: comparable with ``==``."""
    if isinstance(value, LongNumber):
        return ("long number", value.text)
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def outcome(text: str, **options: Any) -> tuple[str, Any]:
    """What ``parse`` makes of ``text`` (a value, or json's error as message and place)."""
    try:
        return "value", plain(parse(text, **options))
    except json.JSONDecodeError as error:
        return "error", (error.msg, error.pos)


def standard(text: str) -> tuple[str, Any]:
    try:
        return "value", plain(json.loads(text, parse_int=read_integer))
    except json.JSONDecodeError as error:
        return "error", (error.msg, error.pos)


@settings(max_examples=250, deadline=None)
@given(text=json_texts())
@pytest.mark.slow
def test_a_text_decoded_in_pieces_is_what_json_loads_decodes(text: str) -> None:
    assert outcome(text, piecewise_bytes=0) == standard(text)


@settings(max_examples=250, deadline=None)
@given(
    text=json_texts(SLOPPY),
    place=st.floats(min_value=0, max_value=1),
    cut=st.integers(min_value=0, max_value=3),
    insert=st.sampled_from(["", "{", "}", "[", "]", ",", ":", '"', " ", "0", "x", "\\", "\x00"]),
)
@pytest.mark.slow
def test_a_broken_text_fails_as_in_json_loads_or_decodes_alike(
    text: str, place: float, cut: int, insert: str
) -> None:
    at = int(place * len(text))
    broken = text[:at] + insert + text[at + cut :]
    assert outcome(broken, piecewise_bytes=0) == standard(broken)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(text=json_texts())
def test_the_dbs_elements_are_given_as_written_in_the_text(text: str) -> None:
    sources: list[str] = ["left over from an earlier read"]
    try:
        value = parse(text, sources, piecewise_bytes=0)
    except json.JSONDecodeError:
        return
    dbs = value.get("dbs") if isinstance(value, dict) else None
    if not isinstance(dbs, list):
        assert sources == []
        return
    assert [plain(parse(source)) for source in sources] == plain(dbs)
    at = 0
    for source in sources:  # each element's own text, in the order of the array
        found = text.index(source, at)
        at = found + len(source)


@settings(max_examples=50, deadline=None)
@given(text=json_texts())
def test_a_small_text_is_decoded_whole_and_gives_no_elements(text: str) -> None:
    sources = ["left over"]
    assert outcome(text) == standard(text)  # the default size: these texts are decoded whole
    with contextlib.suppress(json.JSONDecodeError):
        parse(text, sources)
    assert sources == []


def test_numbers_too_long_to_read_are_written_back_as_they_were() -> None:
    digits = "7" * 5_000
    value = parse('{"dbs": [], "x": ' + digits + "}", piecewise_bytes=0)
    assert isinstance(value["x"], LongNumber)
    assert json.loads(dumps(value).replace(digits, "1")) == {"dbs": [], "x": 1}
    assert dumps(value).count(digits) == 1


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1 "b": 2}',  # no comma between members
        "[1 2]",  # no comma between items
        '{"a" 1}',  # no colon
        "{1: 2}",  # a name that is not a string
        '{"dbs": [{"name": "x"} {"name": "y"}]}',  # the registry's array, broken inside
    ],
)
def test_each_way_an_object_or_array_breaks_fails_as_in_json_loads(text: str) -> None:
    assert standard(text)[0] == "error"  # the control: json.loads refuses it too
    assert outcome(text, piecewise_bytes=0) == standard(text)


def test_only_json_values_and_long_numbers_are_written() -> None:
    with pytest.raises(TypeError, match="set is not JSON"):
        dumps({"dbs": {1, 2}})
