"""JSON as RFC 8259 defines it, also when a number is not finite.

Python writes NaN and infinities as ``NaN``, ``Infinity`` and ``-Infinity``, which are not JSON: strict
readers (JavaScript's ``JSON.parse``, jq, serde) refuse the whole text. LanceDB's float32 distances are
-inf or +inf for vectors too short or too long for float32, and a number an agent sends may read as
infinite (``1e999``). Every JSON this app prints or logs is written by :func:`json_text`: a number that is
not finite becomes the string ``"-Infinity"``, ``"Infinity"`` or ``"NaN"`` (the spelling of Protocol
Buffers' JSON mapping; ``float()`` and JavaScript's ``Number()`` read it back).
"""

from __future__ import annotations

import json
import math
from typing import Any

#: What a number that is not finite is written as.
NOT_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def finite_json(value: Any) -> Any:
    """``value`` with each float that is not finite replaced by its string (lists, tuples and dicts are
    copied only where they hold one)."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else NOT_FINITE[value]
    if isinstance(value, list | tuple):
        items = [finite_json(item) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = {key: finite_json(item) for key, item in value.items()}
        return value if all(pairs[key] is item for key, item in value.items()) else pairs
    return value


def json_text(value: Any, **options: Any) -> str:
    """``json.dumps(value, **options)`` with every number finite (see the module's description)."""
    return json.dumps(finite_json(value), allow_nan=False, **options)
