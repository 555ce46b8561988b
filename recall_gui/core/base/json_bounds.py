"""JSON from outside read within bounds: how deeply it nests, and integers too long to read.

Python's JSON reader recurses once per level, and so does everything that walks the value afterwards
(a JSON writer, a schema validator): a few kilobytes of ``[[[[…`` end in ``RecursionError`` far from
where the text came in. Text from an agent, a golden file or the agent log is measured here first, by a
walk that does not recurse, and refused when it nests deeper than anything this app reads needs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

#: Longer integers exceed what Python reads from text (``sys.get_int_max_str_digits()`` is 4300).
MAX_INTEGER_DIGITS = 4000
#: The tool's arguments, a golden file and a log record are two or three levels deep; 64 leaves room for
#: arguments an agent adds, and far below the ~1000 levels at which the reader and writers recurse out.
MAX_NESTING = 64


class LongNumber:
    """An integer in the text with more digits than can be read."""

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"<a number of {self.digits:,} digits>"


def read_integer(text: str) -> int | LongNumber:
    """``parse_int`` for :func:`json.loads`: a number too long to read becomes a :class:`LongNumber`."""
    digits = len(text.lstrip("-"))
    return LongNumber(digits) if digits > MAX_INTEGER_DIGITS else int(text)


def _children(value: Any) -> Iterator[tuple[str | int, Any]]:
    if isinstance(value, dict):
        return iter(value.items())
    if isinstance(value, list):
        return iter(enumerate(value))
    return iter(())


def json_path(path: list[str | int], root: str = "") -> str:
    """``checks[2].limit`` for ``["checks", 2, "limit"]`` (after ``root`` when given)."""
    text = root
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def too_deep(value: Any, limit: int = MAX_NESTING) -> list[str | int] | None:
    """The path to the first array or object nested more than ``limit`` levels inside ``value`` (which
    is level 1), or ``None``. Walks without recursion, so any depth Python could read is measured."""
    stack: list[tuple[Iterator[tuple[str | int, Any]], list[str | int]]] = [(_children(value), [])]
    while stack:
        children, path = stack[-1]
        step = next(children, None)
        if step is None:
            stack.pop()
            continue
        key, child = step
        if isinstance(child, dict | list):
            child_path = [*path, key]
            if len(stack) + 1 > limit:
                return child_path
            stack.append((_children(child), child_path))
    return None


def first_long_number(value: Any) -> tuple[list[str | int], int] | None:
    """Where the first :class:`LongNumber` in ``value`` is and its digits (``value`` within bounds of
    nesting: this one recurses)."""
    if isinstance(value, LongNumber):
        return [], value.digits
    for key, child in _children(value):
        found = first_long_number(child)
        if found is not None:
            return [key, *found[0]], found[1]
    return None


def recordable(value: Any, depth: int = 1) -> Any:
    """``value`` as a log can write and read back: a :class:`LongNumber` becomes a text saying so, and an
    array or object nested deeper than :data:`MAX_NESTING` a text saying that (``value`` as Python read
    it, so this recursion stays within Python's)."""
    if isinstance(value, LongNumber):
        return repr(value)
    if isinstance(value, list | dict) and depth > MAX_NESTING:
        return f"<nested more than {MAX_NESTING} levels deep>"
    if isinstance(value, list):
        return [recordable(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {key: recordable(item, depth + 1) for key, item in value.items()}
    return value
