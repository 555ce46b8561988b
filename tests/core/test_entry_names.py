"""Which ids a table's rows share, the one sentence that says so, and how an entry is named there."""

from __future__ import annotations

import hashlib

import pyarrow as pa

from recall_gui.core.storage.entry_names import IdRepeats, count_ids

HOW = "so entries are named by their content: the id and the first 8 hex digits of the content's sha256"


def test_ids_are_counted_as_the_app_shows_them() -> None:
    ids = pa.chunked_array([["content", "content", "a", None], ["b", "a", None, "content"]])
    assert count_ids(ids) == IdRepeats(8, {"content": 3, "": 2, "a": 2})
    assert count_ids(pa.array([1, 2, 2, 3])) == IdRepeats(4, {"2": 2})
    assert not count_ids(pa.array(["x", "y"])) and count_ids(pa.array([], pa.string())) == IdRepeats(0)


def test_the_sentence_says_how_many_rows_share_which_id() -> None:
    assert IdRepeats(5).sentence() is None
    assert IdRepeats(2000, {"content": 2000}).sentence() == (
        f'ids repeat in this table: all 2,000 rows share the id "content", {HOW}'
    )
    assert IdRepeats(10, {"content": 4}).sentence() == (
        f'ids repeat in this table: 4 of 10 rows share the id "content", {HOW}'
    )
    several = IdRepeats(100, {"a": 5, "b": 4, "c": 3, "d": 2})
    assert several.sentence() == (
        'ids repeat in this table: 14 of 100 rows share 4 ids ("a" by 5, "b" by 4, "c" by 3 and 1 more), '
        + HOW
    )


def test_an_entry_is_named_by_content_only_where_its_id_is_shared() -> None:
    repeats = IdRepeats(3, {"content": 2})
    text = "NAME ls - list directory contents SYNOPSIS ls [OPTION]... [FILE]..."
    digest = hashlib.sha256(text.encode()).hexdigest()
    assert repeats.label("content", digest) == f"content·{digest[:8]}"
    assert (
        repeats.name("content", text)
        == f"content·{digest[:8]} “NAME ls - list directory contents SYNOPSIS ls…”"
    )
    assert repeats.label("other", digest) == "other" and repeats.name("other", text) == "other"
    assert repeats.key("content", digest) == ("content", digest) and repeats.key("other", digest) == (
        "other",
        "",
    )
