"""Text from outside as a terminal or a log line shows it: control characters written as escapes.

A registry name, an agent's query, a client's name or a table's id, content or document name can hold
ESC sequences (which recolour, clear, move or retitle a terminal), a carriage return (which hides what
came before it on the line), a line break (which forges another line), C1 controls (U+009B is a CSI on
its own), bidirectional overrides (which reorder what is read) or lone surrogates (which no UTF-8 writer
can take). Every place that prints or logs such text passes it through :func:`printable`, the one
escape: a field before its line is joined to others (so a line break in it cannot forge a line), and
the whole output again at the end (:func:`printable_lines`).

What JSON leaves as it is (DEL, C1 controls, bidirectional controls, lone surrogates) is written as JSON
writes it (``\\u009b``), so JSON text passed through :func:`printable_lines` stays JSON, with the same
values; C0 controls, which JSON always escapes itself, are written ``\\x1b``.
"""

from __future__ import annotations

import re

#: C0 and C1 controls and DEL, the bidirectional embeddings, overrides and isolates, lone surrogates.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with each control character, bidirectional control and lone surrogate written as its
    escape (``\\x1b``, ``\\n``, ``\\u009b``, ``\\u202e``, ``\\ud800``); other text, emoji and accents as
    they are."""
    return _UNPRINTABLE.sub(_escape, text)


_LINE_BREAK = re.compile(r"(\r\n|\n)")


def printable_lines(text: str) -> str:
    """``text`` as :func:`printable` writes it, but for the line breaks it was given (``\\n``, and
    ``\\r\\n`` as CSV ends its records): what a command prints, as a last guard (each field was escaped
    before its line was made). A lone ``\\r`` is escaped: it would overwrite the line."""
    parts = _LINE_BREAK.split(text)
    return "".join(part if index % 2 else printable(part) for index, part in enumerate(parts))
