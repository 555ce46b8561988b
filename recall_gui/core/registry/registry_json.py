"""The registry files' JSON: read as ``json.loads`` reads it, but a large file an element at a time, and
written back pretty as cosh writes it.

``json.loads`` holds Python's lock for the whole text: the window's thread, waiting for that lock while
a worker reads a registry of 50,000 databases, would stall as long
(docs/PERFORMANCE_LOG.md#bounds-behind-constants). So a file above :data:`PIECEWISE_BYTES` is decoded one
top-level member or array element per call of the standard library's decoder, which also gives the text
of each element of the "dbs" array (a later read reuses the entries written as before). The decoding is
``json``'s own throughout; only the commas, colons and brackets between elements are read here, and any
text that is not plain JSON there falls back to ``json.loads`` of the whole text, for its result or its
own error (``tests/core/test_registry_json.py`` checks both against ``json.loads``).
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

from recall_gui.core.base.regular_files import read_regular_text
from recall_gui.core.registry.registry_types import RegistryProblem

#: Above this size a registry file is parsed element by element (see :func:`parse`).
PIECEWISE_BYTES = 256 * 1024
#: The most of a registry file read: far above a registry of 50,000 databases (about 20 MB).
REGISTRY_MAX_BYTES = 256 << 20


class ParseFailure(Exception):
    """A file that could not be read as JSON (why: in the problems given to :func:`read_json`)."""


class LongNumber:
    """An integer with more digits than Python reads from text (``sys.get_int_max_str_digits()``), kept
    as written: it is no value this app uses, and a save writes it back unchanged."""

    def __init__(self, text: str) -> None:
        self.text = text


def read_integer(text: str) -> int | LongNumber:
    """A JSON integer as Python's ``int``, or as a :class:`LongNumber` when it has too many digits."""
    try:
        return int(text)
    except ValueError:
        return LongNumber(text)


_DECODER = json.JSONDecoder(parse_int=read_integer)
#: JSON's white space, as the standard library's decoder skips it.
_SPACE = re.compile(r"[ \t\n\r]*")


def read_json(path: Path, problems: list[RegistryProblem], sources: list[str] | None = None) -> Any:
    """The parsed file, ``None`` when it does not exist; raises :class:`ParseFailure` after recording why
    in ``problems``. ``sources``: see :func:`parse`."""
    try:
        text = read_regular_text(path, REGISTRY_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        problems.append(RegistryProblem(path, f"cannot be read: {reason}"))
        raise ParseFailure from error
    if not text.strip():
        problems.append(RegistryProblem(path, "is empty (expected JSON); fix or delete the file"))
        raise ParseFailure
    try:
        data = parse(text, sources)
    except json.JSONDecodeError as error:
        reason = error.msg.removesuffix(" at")  # "Unterminated string starting at" + " at line ..."
        problems.append(
            RegistryProblem(path, f"is not valid JSON: {reason} at line {error.lineno} column {error.colno}")
        )
        raise ParseFailure from error
    except RecursionError as error:
        problems.append(RegistryProblem(path, "is not a registry: its JSON is nested too deeply"))
        raise ParseFailure from error
    if data is None:  # ``null`` is JSON, but no registry: treat it like a file that does not parse
        problems.append(RegistryProblem(path, "holds only JSON null (expected a registry); fix or delete it"))
        raise ParseFailure
    return data


def parse(text: str, sources: list[str] | None = None, *, piecewise_bytes: int = PIECEWISE_BYTES) -> Any:
    """``json.loads(text)`` (integers too long to read kept as :class:`LongNumber`); a text longer than
    ``piecewise_bytes`` is decoded a top-level member or array element at a time.

    ``sources``: filled, for a text decoded in pieces, with the text of each element of its "dbs" array
    (of the last "dbs", as ``json.loads`` keeps the last of a repeated name); emptied otherwise."""
    if sources is not None:
        sources.clear()
    if len(text) > piecewise_bytes:
        try:
            return _parse_in_pieces(text, sources)
        except (ValueError, IndexError):
            if sources is not None:
                sources.clear()
    return json.loads(text, parse_int=read_integer)


def _parse_in_pieces(text: str, sources: list[str] | None = None) -> Any:
    """A top-level object or array, one member or element per decoder call; raises ``ValueError`` or
    ``IndexError`` for anything else (the caller then parses it whole)."""
    position = _next(text, 0)
    value: Any
    if text[position] == "[":
        value, position = _array_in_pieces(text, position)
    elif text[position] == "{":
        value, position = _object_in_pieces(text, position, sources)
    else:
        raise ValueError("not an object or array")
    if _next(text, position) != len(text):
        raise ValueError("extra data")
    return value


def _next(text: str, position: int) -> int:
    return _SPACE.match(text, position).end()  # type: ignore[union-attr]


def _array_in_pieces(text: str, position: int, sources: list[str] | None = None) -> tuple[list[Any], int]:
    items: list[Any] = []
    position = _next(text, position + 1)
    if text[position] == "]":
        return items, position + 1
    while True:
        start = position
        item, position = _DECODER.raw_decode(text, position)
        items.append(item)
        if sources is not None:
            sources.append(text[start:position])
        position = _next(text, position)
        if text[position] == "]":
            return items, position + 1
        if text[position] != ",":
            raise ValueError("expected , or ]")
        position = _next(text, position + 1)


def _object_in_pieces(
    text: str, position: int, sources: list[str] | None = None
) -> tuple[dict[str, Any], int]:
    members: dict[str, Any] = {}
    position = _next(text, position + 1)
    if text[position] == "}":
        return members, position + 1
    while True:
        if text[position] != '"':
            raise ValueError("expected a name")
        key, position = _DECODER.raw_decode(text, position)
        position = _next(text, position)
        if text[position] != ":":
            raise ValueError("expected :")
        position = _next(text, position + 1)
        dbs = sources if key == "dbs" else None
        if dbs is not None:
            dbs.clear()  # a later "dbs" wins, as in json.loads
        if text[position] == "[":
            members[key], position = _array_in_pieces(text, position, dbs)
        else:
            members[key], position = _DECODER.raw_decode(text, position)
        position = _next(text, position)
        if text[position] == "}":
            return members, position + 1
        if text[position] != ",":
            raise ValueError("expected , or }")
        position = _next(text, position + 1)


def dumps(data: Any) -> str:
    """Pretty JSON like cosh's, with integers too long to read written back as they were."""
    marker = f"recall-gui-long-number-{uuid.uuid4().hex}"
    long_numbers: list[str] = []

    def placeholder(value: Any) -> str:
        if not isinstance(value, LongNumber):
            raise TypeError(f"{type(value).__name__} is not JSON")
        long_numbers.append(value.text)
        return f"{marker}-{len(long_numbers) - 1}"

    text = json.dumps(data, ensure_ascii=False, indent=2, default=placeholder)
    for index, digits in enumerate(long_numbers):
        text = text.replace(f'"{marker}-{index}"', digits)
    return text
