"""Every JSON the app writes is JSON as RFC 8259 defines it: a number that is not finite (a LanceDB distance
of -inf, a NaN in a metadata column, ``1e999`` from an agent) is written as a string, never as the bare
``NaN``/``Infinity`` Python writes by default."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from recall_gui.core.base import json_text
from recall_gui.core.tables.export import ExportTable, plain_value, to_json


def strict(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_numbers_that_are_not_finite_become_strings_wherever_they_are() -> None:
    value = {
        "distance": float("-inf"),
        "cutoff": np.float64("inf"),
        "results": [{"distance": math.nan, "rank": 3}, (1.5, -math.inf)],
        "finite": 0.25,
    }
    assert strict(json_text(value, indent=2)) == {
        "distance": "-Infinity",
        "cutoff": "Infinity",
        "results": [{"distance": "NaN", "rank": 3}, [1.5, "-Infinity"]],
        "finite": 0.25,
    }
    # what has none is written as json.dumps writes it
    plain = {"query": "q", "results": [{"id": "a", "distance": 0.5}], "n": 2}
    assert json_text(plain, separators=(",", ":")) == json.dumps(plain, separators=(",", ":"))


def test_an_export_of_rows_with_infinite_distances_and_nan_metadata_is_json() -> None:
    table = ExportTable(("id", "distance", "score"), [("a", float("-inf"), math.nan), ("b", 0.5, 1.0)])
    assert strict(to_json(table)) == [
        {"id": "a", "distance": "-Infinity", "score": "NaN"},
        {"id": "b", "distance": 0.5, "score": 1.0},
    ]
    assert strict(plain_value({"weights": [1.0, math.inf]})) == {"weights": [1.0, "Infinity"]}
