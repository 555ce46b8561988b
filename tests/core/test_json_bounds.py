"""JSON from outside measured without recursion: depth and numbers too long to read."""

from __future__ import annotations

import json

from recall_gui.core.base.json_bounds import LongNumber, read_integer, recordable, too_deep


def test_the_depth_is_measured_however_deep_and_the_path_names_the_first_level_too_many() -> None:
    shallow = {"a": [1, {"b": [2]}]}  # four levels
    assert too_deep(shallow, 4) is None
    assert too_deep(shallow, 3) == ["a", 1, "b"]
    deep: list = []
    for _ in range(100_000):  # deeper than Python's JSON reader or any recursion could go
        deep = [deep]
    assert too_deep({"x": deep}, 64) == ["x", *[0] * 63]  # the path to level 65


def test_a_number_too_long_to_read_is_kept_as_its_length() -> None:
    value = json.loads('{"limit": ' + "9" * 5000 + ', "ok": ' + "9" * 4000 + "}", parse_int=read_integer)
    assert isinstance(value["limit"], LongNumber) and value["ok"] == int("9" * 4000)
    assert recordable(value)["limit"] == "<a number of 5,000 digits>"
