"""Text that is not Unicode: lone surrogates.

A JSON escape such as ``"\\ud800"`` (which Python's JSON reader accepts) or a file name that is not UTF-8
puts them into a Python string, and no UTF-8 writer — a terminal, a JSON answer, a file — can take them.
Text from outside is checked where it enters; messages about it show it escaped.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")

#: What a lone surrogate becomes where the text is still used (the Unicode replacement character).
REPLACEMENT = "\ufffd"


def is_unicode(text: str) -> bool:
    """False when ``text`` holds a lone surrogate."""
    return text.isascii() or _SURROGATE.search(text) is None


def shown(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\ud800``), for messages."""
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def replaced(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD."""
    return _SURROGATE.sub(REPLACEMENT, text)


def first_surrogate(text: str) -> str:
    """The escape of the first lone surrogate in ``text`` (``"\\ud800"``), or ``""`` when there is none."""
    match = _SURROGATE.search(text)
    return f"\\u{ord(match.group()):04x}" if match else ""
