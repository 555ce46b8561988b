"""Text from outside as a terminal or a log line shows it: control characters written as escapes.

A registry name, an agent's query or a client's name can hold ESC sequences (which recolour, move or
retitle a terminal), a carriage return (which hides what came before it on the line), a line break
(which forges another log line), bidirectional overrides (which reorder what is read) or lone
surrogates (which no UTF-8 writer can take). Every place that prints or logs such text passes it through
:func:`printable`; JSON output needs nothing, as JSON escapes them itself.
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
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with each control character, bidirectional control and lone surrogate written as its
    escape (``\\x1b``, ``\\n``, ``\\u202e``, ``\\ud800``); other text, emoji and accents as they are."""
    return _UNPRINTABLE.sub(_escape, text)
