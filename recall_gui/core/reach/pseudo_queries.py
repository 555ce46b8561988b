"""Pseudo-queries: for each entry, the question a user would ask to get it, made from its own text.

A rule says where the query comes from (``--query-from``):

- ``first-sentence`` (the default): the chunk's title when its first line is a Markdown heading (chunked
  documents often start with one), else its first sentence; at most :data:`MAX_QUERY_WORDS` words;
- ``first-line``: its first line of text (heading marks taken off), at most as many words;
- ``whole-text``: all of it (whitespace collapsed), at most :data:`MAX_QUERY_CHARS` characters, as an agent
  may send;
- ``column:NAME``: the value of a column (``title``, or a struct's field such as ``metadata.title``).

Lines of mere markup (blank, ``---``, a code fence) are skipped first. A sentence ends at ``.``, ``!``
or ``?`` followed by a space and a capital letter, a digit or a quote, or at the end of the text ("e.g.
this" is no end), and at a full-width ``。``, ``！`` or ``？``. Entries are read as the agent's results
name them: their id, or for a table without an id column the row id (as a search shows it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.types import MAX_QUERY_CHARS
from recall_gui.core.storage.content_identity import content_sha256, entry_label
from recall_gui.core.storage.entry_names import IdRepeats
from recall_gui.core.storage.filter_text import column_names
from recall_gui.core.storage.lance_calls import read_batches
from recall_gui.core.storage.open_table import OpenTable
from recall_gui.core.storage.rows import columns_from_arrow, entry_name

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RuleKind = Literal["first-sentence", "first-line", "whole-text", "column"]
RULES: tuple[RuleKind, ...] = ("first-sentence", "first-line", "whole-text")
DEFAULT_RULE = "first-sentence"
#: The most words a sentence or line rule keeps: a question, not a paragraph.
MAX_QUERY_WORDS = 40

_MARKUP_LINE = re.compile(r"^\s*(?:[-*_=]{3,}|```.*|~~~.*)\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_SENTENCE_END = re.compile(
    r"[.!?](?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9\u00c0-\u00de]|\s*$)|[\u3002\uff01\uff1f]"
)


@dataclass(frozen=True)
class QueryRule:
    """Where an entry's pseudo-query comes from: a rule, or a column (``column`` names it)."""

    kind: RuleKind = "first-sentence"
    column: str | None = None

    @property
    def label(self) -> str:
        return f"column:{self.column}" if self.kind == "column" else self.kind


def parse_rule(text: str | None) -> QueryRule:
    """``first-sentence``, ``first-line``, ``whole-text`` or ``column:NAME``; refuses anything else."""
    chosen = (text or DEFAULT_RULE).strip()
    if chosen.startswith("column:") and chosen.removeprefix("column:").strip():
        return QueryRule("column", chosen.removeprefix("column:").strip())
    for kind in RULES:
        if chosen == kind:
            return QueryRule(kind)
    raise InvalidInputError(
        f"{chosen!r} is no way to make a query from an entry",
        hint="Use first-sentence (the default), first-line, whole-text or column:NAME.",
    )


def _text_lines(text: str) -> list[str]:
    """The lines that hold text: blank lines and lines of mere markup left out."""
    return [line for line in text.splitlines() if line.strip() and not _MARKUP_LINE.match(line)]


def _words(text: str, most: int) -> str:
    words = text.split()
    return " ".join(words[:most])


def first_sentence(text: str) -> str:
    """The chunk's heading when it starts with one, else its first sentence (whitespace collapsed)."""
    lines = _text_lines(text)
    if not lines:
        return ""
    heading = _HEADING.match(lines[0])
    if heading is not None and heading.group(1).strip():
        return _words(heading.group(1), MAX_QUERY_WORDS)
    flat = " ".join(" ".join(lines).split())
    end = _SENTENCE_END.search(flat)
    sentence = flat[: end.end()] if end is not None else flat
    return _words(sentence, MAX_QUERY_WORDS)


def first_line(text: str) -> str:
    lines = _text_lines(text)
    if not lines:
        return ""
    heading = _HEADING.match(lines[0])
    line = heading.group(1) if heading is not None else lines[0]
    return _words(line, MAX_QUERY_WORDS)


def whole_text(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= MAX_QUERY_CHARS:
        return flat
    cut = flat[:MAX_QUERY_CHARS]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut


def query_of(text: str, rule: QueryRule) -> str:
    """The pseudo-query ``rule`` makes of ``text`` (an entry's content, or its column's value)."""
    if rule.kind == "first-sentence":
        return first_sentence(text)
    if rule.kind == "first-line":
        return first_line(text)
    return whole_text(text)


@dataclass(frozen=True)
class Entries:
    """A table's entries in scan order: row ids, how the report names them, and their pseudo-queries."""

    row_ids: npt.NDArray[np.uint64]
    #: Ids as the agent gets them; an entry without one named by its content's hash (:func:`entry_name`).
    ids: tuple[str, ...]
    queries: tuple[str, ...]
    #: Whether the entry's content is blank (nothing to ask for).
    blank: npt.NDArray[np.bool_]
    #: The ids several rows share, and the sha256 of the content of each entry whose id is one of them
    #: (by the entry's number): what tells those entries apart.
    repeats: IdRepeats = field(default_factory=IdRepeats)
    shas: Mapping[int, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def name(self, number: int) -> str:
        """Entry ``number``'s name: its id, or ``content·3f2a9c1e`` where its id is shared."""
        sha = self.shas.get(number)
        return self.ids[number] if sha is None else entry_label(self.ids[number], sha)


async def read_entries(opened: OpenTable, rule: QueryRule) -> Entries:
    """Every entry of ``opened`` (at its version) with its pseudo-query; the vector column is not read."""
    import numpy as np

    mapping = opened.columns
    names = [name for name in (mapping.id, mapping.content) if name]
    if rule.kind == "column":
        assert rule.column is not None
        available = [name for name in column_names(opened.schema) if name != mapping.vector]
        if rule.column not in available:
            raise InvalidInputError(
                f'"{opened.name}" has no column {rule.column!r} to make queries from',
                hint=f"Its columns: {', '.join(available)}.",
            )
        names.append(rule.column)
    query = opened.table.query().select(list(dict.fromkeys(names))).with_row_id()
    repeats = await opened.id_repeats()
    row_ids: list[npt.NDArray[np.uint64]] = []
    ids: list[str] = []
    shas: dict[int, str] = {}
    queries: list[str] = []
    blank: list[bool] = []
    import pyarrow as pa

    async for batch in read_batches(query, f'reading the entries of "{opened.name}"'):
        rows = pa.Table.from_batches([batch])
        found = columns_from_arrow(rows, mapping)
        row_ids.append(rows.column("_rowid").to_numpy())
        if repeats:
            for number, (entry_id, content) in enumerate(zip(found.ids, found.contents, strict=True)):
                if entry_id and repeats.is_shared(entry_id):
                    shas[len(ids) + number] = content_sha256(content)
        ids.extend(
            entry_name(entry_id, content) for entry_id, content in zip(found.ids, found.contents, strict=True)
        )
        blank.extend(not content.strip() for content in found.contents)
        if rule.kind == "column":
            assert rule.column is not None
            values = rows.column(rule.column).to_pylist()
            queries.extend(whole_text("" if value is None else str(value)) for value in values)
        else:
            queries.extend(query_of(content, rule) for content in found.contents)
    return Entries(
        np.concatenate(row_ids).astype(np.uint64) if row_ids else np.empty(0, np.uint64),
        tuple(ids),
        tuple(queries),
        np.array(blank, dtype=bool),
        repeats,
        shas,
    )
