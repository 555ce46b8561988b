"""A line diff of two texts for people to read: unified order, context around changes, changed characters.

The window compares the tool description an MCP server serves with the one its editor shows. Those are
long paragraphs where one edited word matters, so besides whole lines (removed, then added, as in a
unified diff) each changed line carries the character ranges that differ from its counterpart, and long
unchanged stretches fold into one "n unchanged lines" marker. Changes inside a line are marked by whole
words, which is how people read a description.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import accumulate
from typing import Literal

DiffKind = Literal["same", "removed", "added", "folded"]

#: Below this similarity two paired lines count as rewritten: marking words in them would be noise.
_SIMILAR_ENOUGH = 0.4
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass(frozen=True)
class DiffLine:
    """One line of the diff: unchanged, only in the old text, only in the new one, or a fold marker."""

    kind: DiffKind
    text: str = ""
    #: 1-based line numbers in the old and the new text (``None`` where the line is absent).
    old_number: int | None = None
    new_number: int | None = None
    #: ``(start, end)`` ranges of ``text`` that differ from the counterpart line, when there is one.
    changed: tuple[tuple[int, int], ...] = ()
    #: For a ``"folded"`` marker: how many unchanged lines it stands for.
    folded: int = 0


def split_lines(text: str) -> list[str]:
    """Lines as the text has them: ``"a\\n"`` is ``["a", ""]``, so a trailing newline is a difference too."""
    return text.split("\n")


def _tokens(line: str) -> list[str]:
    """Words, runs of spaces, and single other characters: the units a reader sees change."""
    return _TOKEN.findall(line)


def _merge(ranges: list[tuple[int, int]], text: str) -> tuple[tuple[int, int], ...]:
    """Join ranges separated only by spaces, so "and travel" reads as one change, not two."""
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if merged and not text[merged[-1][1] : start].strip():
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return tuple(merged)


def changed_ranges(old: str, new: str) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """The character ranges of whole words that differ, in ``old`` and in ``new``; empty when the lines
    are too unlike for that to help."""
    a, b = _tokens(old), _tokens(new)
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    if matcher.ratio() < _SIMILAR_ENOUGH:
        return (), ()
    offsets_a = [0, *accumulate(len(token) for token in a)]
    offsets_b = [0, *accumulate(len(token) for token in b)]
    in_old: list[tuple[int, int]] = []
    in_new: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            in_old.append((offsets_a[i1], offsets_a[i2]))
        if j2 > j1:
            in_new.append((offsets_b[j1], offsets_b[j2]))
    return _merge(in_old, old), _merge(in_new, new)


def diff_lines(old: str, new: str, *, context: int = 3) -> tuple[DiffLine, ...]:
    """The diff from ``old`` to ``new``; empty when they are equal.

    Unchanged lines more than ``context`` lines away from a change fold into ``"folded"`` markers.
    """
    if old == new:
        return ()
    a, b = split_lines(old), split_lines(new)
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    lines: list[DiffLine] = []
    shown_up_to = 0  # old-text lines before this index are shown or folded already
    for group in matcher.get_grouped_opcodes(context):
        first_old = group[0][1]
        if first_old > shown_up_to:
            lines.append(DiffLine("folded", folded=first_old - shown_up_to))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(
                    DiffLine("same", a[i], i + 1, j + 1)
                    for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
                )
            else:
                lines.extend(_changed_block(a[i1:i2], b[j1:j2], i1, j1))
        shown_up_to = group[-1][2]
    if shown_up_to < len(a):
        lines.append(DiffLine("folded", folded=len(a) - shown_up_to))
    return tuple(lines)


def _changed_block(old: list[str], new: list[str], old_start: int, new_start: int) -> list[DiffLine]:
    """Removed lines, then added ones; the n-th removed and n-th added line are compared by character."""
    removed = [DiffLine("removed", text, old_number=old_start + n + 1) for n, text in enumerate(old)]
    added = [DiffLine("added", text, new_number=new_start + n + 1) for n, text in enumerate(new)]
    for n in range(min(len(removed), len(added))):
        in_old, in_new = changed_ranges(removed[n].text, added[n].text)
        removed[n] = DiffLine("removed", removed[n].text, old_number=removed[n].old_number, changed=in_old)
        added[n] = DiffLine("added", added[n].text, new_number=added[n].new_number, changed=in_new)
    return removed + added


def unified_text(lines: tuple[DiffLine, ...]) -> str:
    """The diff as plain text (``-``/``+``/space prefixes), for copying or a terminal."""
    out = []
    for line in lines:
        if line.kind == "folded":
            out.append(f"@@ {line.folded} unchanged line{'' if line.folded == 1 else 's'} @@")
        else:
            prefix = {"same": " ", "removed": "-", "added": "+"}[line.kind]
            out.append(f"{prefix} {line.text}")
    return "\n".join(out)
