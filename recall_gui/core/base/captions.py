"""Short texts about a result, fit to stand in a one-line caption: counts, and the user's text quoted.

A quoted query is shown on one line, shortened, with control characters as the symbols Unicode has for
them and a direction override kept inside the quotes (a pasted U+202E would otherwise turn the rest of the
caption around). The query box and the results keep the text exactly as typed; only the caption quotes it.
"""

from __future__ import annotations

#: How much of a query (or filter) a caption quotes; the query box holds all of it.
CAPTION_QUOTE_CHARS = 80
#: Characters that change the writing direction of the text after them (embeddings, overrides, isolates).
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def plural(count: int, word: str) -> str:
    """``count`` with thousands separators and ``word``, made plural with an ``s`` unless it is 1."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def one_line(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text`` on one line (runs of whitespace become one space)."""
    head = " ".join(text[: limit * 2].split())
    return head if len(head) <= limit else head[: limit - 1] + "…"


def visible(char: str) -> str:
    """A control character as the symbol Unicode has for it (␀, ␇, ␛ …); any other character as it is."""
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if 0x80 <= code < 0xA0:
        return "\ufffd"
    return char


def quoted(text: str) -> str:
    """``text`` as a caption quotes it: on one line, at most :data:`CAPTION_QUOTE_CHARS` characters,
    control characters shown as symbols, and a direction override in it kept inside the quotes."""
    line = "".join(visible(char) for char in one_line(text, CAPTION_QUOTE_CHARS))
    if any(char in BIDI_CONTROLS for char in line):
        line = f"\u2068{line}\u2069"  # first-strong isolate … pop directional isolate
    return f"“{line}”"
