"""What a golden check expects, and where it found it: entries named by id, or by their content.

An element of a check's ``expect`` is an id (``"pw-reset"``) or an entry's content named by its sha256
(``{"content_sha256": "<64 hex digits>"}``, :mod:`recall_gui.core.storage.content_identity`), which tells
apart rows that share an id (cosh's own tables give every row the id ``content``) and survives a new version
of the table. Each expected element is matched to its own result: the results are entries, and one
result never answers two expectations, so recall, MRR and nDCG count entries, not ids.

A check that expects an id several rows of the table share could be passed by any of them: it is refused
(an error, never a verdict) unless the check says ``"ids_may_repeat": true``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recall_gui.core.storage.content_identity import SHORT_HEX, content_sha256, entry_label
from recall_gui.core.storage.entry_names import IdRepeats

#: A content's sha256 as a golden file writes it.
SHA256_PATTERN = "^[0-9a-f]{64}$"
_SHA256 = re.compile(SHA256_PATTERN)
#: How the window's check editor writes an entry named by content among the ids.
CONTENT_PREFIX = "sha256:"


@dataclass(frozen=True)
class ContentRef:
    """An expected entry named by the sha256 of its content (64 lowercase hex digits)."""

    sha256: str

    def __post_init__(self) -> None:
        if not _SHA256.fullmatch(self.sha256):
            raise ValueError(f"not a sha256 in lowercase hex: {self.sha256!r}")

    def to_json(self) -> dict[str, str]:
        return {"content_sha256": self.sha256}

    @property
    def text(self) -> str:
        """How the check editor writes it: ``sha256:`` and the 64 hex digits."""
        return CONTENT_PREFIX + self.sha256

    @property
    def short(self) -> str:
        """How a line names it before it is found: ``sha256 3f2a9c1e…``."""
        return f"sha256 {self.sha256[:SHORT_HEX]}…"


#: One element of a check's ``expect``: an id, or an entry's content.
Expected = str | ContentRef


def expected_of(entry_id: str, content: str, repeats: IdRepeats) -> Expected:
    """How a check names an entry: by its id, or by its content where other rows share the id."""
    return ContentRef(content_sha256(content)) if repeats.is_shared(entry_id) else entry_id


def expected_by_sha(entry_id: str, sha: str | None) -> Expected:
    """:func:`expected_of` of an entry whose content's sha256 is known where its id is shared (``sha``;
    ``None`` where the id tells it apart)."""
    return entry_id if sha is None else ContentRef(sha)


def expected_json(expected: Expected) -> str | dict[str, str]:
    return expected if isinstance(expected, str) else expected.to_json()


def expected_text(expected: Expected) -> str:
    """As the check editor writes it among the ids (comma-separated): the id, or ``sha256:<hex>``."""
    return expected if isinstance(expected, str) else expected.text


def expected_from_text(part: str) -> Expected:
    """One comma-separated part of the check editor's text: ``sha256:<64 hex digits>`` names a content,
    anything else an id."""
    if part.startswith(CONTENT_PREFIX) and _SHA256.fullmatch(part.removeprefix(CONTENT_PREFIX)):
        return ContentRef(part.removeprefix(CONTENT_PREFIX))
    return part


@dataclass(frozen=True)
class ExpectedRank:
    """An expected entry and its rank among the results (1 is first), ``None`` when it is missing."""

    expected: Expected
    rank: int | None
    #: The id and content sha256 of the result that answered it (when it was found).
    found_id: str | None = None
    found_sha256: str | None = None

    @property
    def id(self) -> str:
        """The expected id, or the id of the entry found for a content (empty when it was not found)."""
        return self.expected if isinstance(self.expected, str) else self.found_id or ""

    @property
    def key(self) -> str:
        """The expectation as text, the same in every run: the id, or ``sha256:<hex>``."""
        return expected_text(self.expected)

    @property
    def label(self) -> str:
        """A line's name for it: the id, or for a content its short name (``content·3f2a9c1e``) once
        found, ``sha256 3f2a9c1e…`` before."""
        if isinstance(self.expected, str):
            return self.expected
        if self.found_id is not None:
            return entry_label(self.found_id, self.expected.sha256)
        return self.expected.short

    def to_dict(self) -> dict[str, Any]:
        if isinstance(self.expected, str):
            return {"id": self.expected, "rank": self.rank}
        found = {"id": self.found_id} if self.found_id is not None else {}
        return {"content_sha256": self.expected.sha256, **found, "rank": self.rank}


def expected_ranks(
    expect: Sequence[Expected], ids: Sequence[str], shas: Sequence[str]
) -> tuple[ExpectedRank, ...]:
    """Each expected entry's rank among the results (``ids`` and their contents' ``shas``, nearest first):
    a content is matched first (it names one entry), then each id takes the first result with that id not
    taken already, so one result answers at most one expectation."""
    taken: set[int] = set()
    found: dict[int, int] = {}

    def take(number: int, matches: Sequence[str], wanted: str) -> None:
        for place, value in enumerate(matches):
            if place not in taken and value == wanted:
                taken.add(place)
                found[number] = place
                return

    for number, wanted in enumerate(expect):
        if isinstance(wanted, ContentRef):
            take(number, shas, wanted.sha256)
    for number, wanted in enumerate(expect):
        if isinstance(wanted, str):
            take(number, ids, wanted)
    ranks = []
    for number, wanted in enumerate(expect):
        place = found.get(number)
        if place is None:
            ranks.append(ExpectedRank(wanted, None))
        else:
            sha = shas[place] if place < len(shas) else None
            ranks.append(ExpectedRank(wanted, place + 1, ids[place], sha))
    return tuple(ranks)


#: What a refused check says to do instead.
SHARED_ID_HINT = (
    'Name the entry by its content instead: {"content_sha256": "<64 hex digits>"} in "expect" (the '
    'window\'s "Add as golden check" writes it), or add "ids_may_repeat": true to the check to let any row '
    "with that id pass it."
)


def shared_id_refusal(expect: Sequence[Expected], repeats: IdRepeats, allowed: bool) -> str | None:
    """Why a check cannot be judged on this table: it expects an id that several rows share (any of them
    would pass it); ``None`` when it can, or when the check allows it (``allowed``)."""
    if allowed:
        return None
    shared = [wanted for wanted in expect if isinstance(wanted, str) and repeats.is_shared(wanted)]
    if not shared:
        return None
    instead = '(name the entry by {"content_sha256": …}, or allow that with "ids_may_repeat": true)'
    if len(shared) == 1:
        wanted = shared[0]
        return (
            f'it expects the id "{wanted}", which {repeats.count(wanted):,} rows of its table share: '
            f"any of them would pass it {instead}"
        )
    named = ", ".join(f'"{wanted}" by {repeats.count(wanted):,} rows' for wanted in shared)
    return (
        f"it expects ids that several rows of its table share ({named}): any of them would pass it {instead}"
    )
