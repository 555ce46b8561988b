"""Naming entries where ids repeat: which ids a table's rows share, and how an entry is named then.

cosh's own tables give every row the id ``content``; other tools repeat ids too. Where an id is shared by
several rows, an entry is named by its content instead (:mod:`recall_gui.core.storage.content_identity`):
``content·3f2a9c1e``, with the first words of its text where there is room. An id no other row has is named
as it is, so a table whose ids are unique reads as it always did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recall_gui.core.base.captions import plural
from recall_gui.core.storage.content_identity import content_sha256, entry_label

if TYPE_CHECKING:
    import pyarrow as pa

#: Words of an entry's text shown after its short name (and at most this many characters of them).
FIRST_WORDS = 8
FIRST_WORDS_CHARS = 60
#: Shared ids a sentence names (the most shared first).
NAMED_IDS = 3
#: Shared ids a report's JSON lists with their counts (the most shared first).
LISTED_IDS = 100
#: What an entry's key holds in place of a digest where its id tells it apart.
UNIQUE = ""


@dataclass(frozen=True)
class IdRepeats:
    """The ids a table's rows share: each shared id and how many rows carry it (ids of one row are not
    listed). Empty (false) where every id is unique."""

    rows: int = 0
    #: Shared id -> rows carrying it, the most shared first.
    shared: Mapping[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.shared)

    def count(self, entry_id: str) -> int:
        """How many rows carry ``entry_id`` (1 for an id that is not shared, or not in the table)."""
        return self.shared.get(entry_id, 1)

    def is_shared(self, entry_id: str) -> bool:
        return entry_id in self.shared

    @property
    def rows_sharing(self) -> int:
        """Rows whose id another row has too."""
        return sum(self.shared.values())

    def key(self, entry_id: str, sha: str) -> tuple[str, str]:
        """What tells an entry apart: its id alone where no other row has it, else its id and the sha256
        of its content."""
        return (entry_id, sha if entry_id in self.shared else UNIQUE)

    def label(self, entry_id: str, sha: str) -> str:
        """An entry's short name: its id, or ``content·3f2a9c1e`` where the id is shared."""
        return entry_label(entry_id, sha) if entry_id in self.shared else entry_id

    def name(self, entry_id: str, content: str) -> str:
        """An entry's name in a line of text: its id, or where the id is shared its short name and the
        first words of its content (``content·3f2a9c1e “NAME ls - list directory contents”``)."""
        if entry_id not in self.shared:
            return entry_id
        return f"{entry_label(entry_id, content_sha256(content))} {quoted_words(content)}"

    def sentence(self) -> str | None:
        """That ids repeat in this table, once, plainly; ``None`` where they do not."""
        if not self.shared:
            return None
        how = "so entries are named by their content: the id and the first 8 hex digits of the content's"
        how += " sha256"
        ranked = list(self.shared.items())
        if len(ranked) == 1:
            [(shared_id, count)] = ranked
            rows = f"all {count:,} rows" if count == self.rows else f"{count:,} of {self.rows:,} rows"
            return f'ids repeat in this table: {rows} share the id "{shared_id}", {how}'
        named = ", ".join(f'"{shared_id}" by {count:,}' for shared_id, count in ranked[:NAMED_IDS])
        more = f" and {len(ranked) - NAMED_IDS:,} more" if len(ranked) > NAMED_IDS else ""
        return (
            f"ids repeat in this table: {self.rows_sharing:,} of {self.rows:,} rows share "
            f"{plural(len(ranked), 'id')} ({named}{more}), {how}"
        )

    def to_dict(self) -> dict[str, Any]:
        """For a report's JSON: the rows, those sharing an id, how many ids are shared, and the counts of
        the :data:`LISTED_IDS` most shared."""
        listed = dict(list(self.shared.items())[:LISTED_IDS])
        return {
            "rows": self.rows,
            "rows_sharing_an_id": self.rows_sharing,
            "ids_shared": len(self.shared),
            "shared_ids": listed,
        }


def count_ids(ids: pa.Array | pa.ChunkedArray, rows: int | None = None) -> IdRepeats:
    """The shared ids of a whole id column (any type: compared as the text the app shows; a missing id as
    the empty one), counted by Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    total = rows if rows is not None else len(ids)
    if not len(ids):
        return IdRepeats(total)
    texts = ids if pa.types.is_string(ids.type) else ids.cast(pa.string())
    counted = pc.value_counts(pc.fill_null(texts, ""))
    values, counts = counted.field("values"), counted.field("counts")
    repeated = pc.greater(counts, 1)
    found = zip(pc.filter(values, repeated).to_pylist(), pc.filter(counts, repeated).to_pylist(), strict=True)
    shared = dict(sorted(found, key=lambda item: (-item[1], item[0])))
    return IdRepeats(total, shared)


def quoted_words(content: str) -> str:
    """The first words of ``content`` on one line, quoted (“…” marks a cut)."""
    words = content.split()
    text = " ".join(words[:FIRST_WORDS])
    cut = len(words) > FIRST_WORDS or len(text) > FIRST_WORDS_CHARS
    text = text[:FIRST_WORDS_CHARS].rstrip()
    return f"“{text}{'…' if cut else ''}”"


def digest_expression(content_column: str) -> str:
    """What a LanceDB query selects to have each row's content sha256 computed as it reads (DataFusion's
    ``sha256`` of the text's UTF-8 bytes: :func:`content_sha256`'s digest), the texts never reaching
    Python."""
    return "sha256(`" + content_column.replace("`", "``") + "`)"


def hex_digests(digests: pa.Array | pa.ChunkedArray) -> list[str]:
    """The digests such a query read, as lowercase hex (a missing text's is the empty text's)."""
    empty = content_sha256("")
    return [empty if digest is None else digest.hex() for digest in digests.to_pylist()]
