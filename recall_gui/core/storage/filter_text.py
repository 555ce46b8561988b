"""A user's filter as text: whether it is one read-only expression, LanceDB's reason for refusing it in
plain words, and the names it can use."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa


def _unquoted(text: str) -> str:
    """``text`` with its SQL string literals ('...' with '' for a quote) left out."""
    kept, quoted = [], False
    for found in text:
        if found == "'":
            quoted = not quoted
        elif not quoted:
            kept.append(found)
    return "".join(kept)


def filter_problem(where: str) -> str | None:
    """Why ``where`` is not one read-only expression, or ``None``: a filter may not end a statement and
    start another (``;``), hide text in a comment, or close a bracket it did not open (which would let it
    break out of the brackets it is combined in)."""
    bare = _unquoted(where)
    if where.count("'") % 2:
        return "a text value is not closed (a ' is missing)"
    if ";" in bare:
        return "it holds a ';': a filter is one expression, never a statement"
    if "--" in bare or "/*" in bare:
        return "it holds a comment (-- or /*)"
    depth = 0
    for char in bare:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return "it closes a bracket it did not open"
    return "a bracket is not closed" if depth else None


_PARSE_ERROR = re.compile(r"Error parsing statement: .*\(sql parser error: (.*)\)\s*$", re.S)
_NO_FIELD = re.compile(
    r"No field named (\S+?)\.(?: Valid fields are .*| Did you mean '([^']+)'\?\.?)?\s*$", re.S
)


def plain_filter_reason(reason: str) -> str:
    """LanceDB's reason for refusing a filter, in one line without the SQL it wrapped the filter in."""
    reason = " ".join(reason.split()).removeprefix("Invalid input, ")
    parsed = _PARSE_ERROR.search(reason)
    if parsed:
        return "it cannot be parsed: " + parsed.group(1).replace("Expected: ", "expected ").replace(
            "found: EOF", "but the filter ends there"
        )
    missing = _NO_FIELD.search(reason)
    if missing:
        guess = f" (did you mean {missing.group(2)}?)" if missing.group(2) else ""
        return f"there is no column named {missing.group(1)}{guess}"
    return reason.removeprefix("Error during planning: ")


def column_names(schema: pa.Schema) -> list[str]:
    """Every name a filter can use: the columns, and the fields of struct columns as ``parent.field``."""
    import pyarrow as pa

    names: list[str] = []

    def add(column: pa.Field, prefix: str) -> None:
        names.append(prefix + column.name)
        if pa.types.is_struct(column.type):
            for child in column.type:
                add(child, f"{prefix}{column.name}.")

    for column in schema:
        add(column, "")
    return names
