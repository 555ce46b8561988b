"""A review file's verdicts joined to one version of a table: each row's verdict (by its content), the
counts, and the rows **changed since reviewed**.

A row's verdict is the standing verdict on its content, so a verdict follows its entry to another version,
another row id or another id. A row is *changed since reviewed* when its content has no verdict, its id
is held by no other row, and a verdict other than *skip* stands on a content that id held before: its
text changed under the same id. Rows whose id repeats (cosh's own tables name every row "content") are
matched by content alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from recall_gui.core.review.ledger import Ledger
from recall_gui.core.review.records import CODES, JUDGED_CODES, VERDICTS, ReviewRecord
from recall_gui.core.review.snapshot import Positions, TableSnapshot
from recall_gui.core.storage.content_identity import content_sha256

#: A row without a verdict (verdicts are CODES, from 1).
NOT_REVIEWED = 0
_JUDGED_CODES = np.array(JUDGED_CODES, np.int8)


@dataclass(frozen=True)
class ChangedEntry:
    """A row whose text changed under its id since a verdict on the text it held then."""

    position: int
    row_id: int
    entry_id: str
    content_sha256: str
    #: The verdict on the text it held before (its ``table_version`` says where that text was).
    reviewed: ReviewRecord


class ReviewState:
    """Each row's verdict for one snapshot, kept up to date as records are added."""

    def __init__(self, snapshot: TableSnapshot, ledger: Ledger) -> None:
        self.snapshot = snapshot
        self.ledger = ledger
        self.codes = np.zeros(len(snapshot), np.int8)
        digests, codes = ledger.standing_digests_and_codes()
        given, positions = snapshot.match_digests(digests)
        self.codes[positions] = codes[given]

    def __len__(self) -> int:
        return len(self.codes)

    def apply(self, record: ReviewRecord) -> Positions:
        """Take a record just written; returns the positions of the rows whose verdict it set."""
        sha = self.ledger.add(record)
        if sha is None:
            return np.empty(0, np.intp)
        standing = self.ledger.standing.get(sha)
        positions = self.snapshot.positions_of_sha(sha)
        self.codes[positions] = CODES[standing.verdict or ""] if standing is not None else NOT_REVIEWED
        self.__dict__.pop("changed_mask", None)
        return positions

    # --- one row ---------------------------------------------------------------------------------------

    def verdict_at(self, position: int) -> str | None:
        code = int(self.codes[position])
        return VERDICTS[code - 1] if code else None

    def record_at(self, position: int) -> ReviewRecord | None:
        """The standing verdict record on the row's content."""
        return self.ledger.standing.get(self.snapshot.sha_at(position))

    def verdicts_of(self, shas: list[str]) -> list[ReviewRecord | None]:
        """The standing verdict record on each content (a logged call's results, by their digests)."""
        return [self.ledger.standing.get(sha) for sha in shas]

    def verdicts_of_texts(self, texts: list[str]) -> list[ReviewRecord | None]:
        """The standing verdict record on each text (a search's results, the Agent view's)."""
        return self.verdicts_of([content_sha256(text) for text in texts])

    # --- the whole table -------------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Rows per verdict (every verdict named, zero included)."""
        found = np.bincount(self.codes.astype(np.intp), minlength=len(VERDICTS) + 1)
        return {verdict: int(found[code]) for verdict, code in CODES.items()}

    @property
    def not_reviewed(self) -> int:
        return int(np.count_nonzero(self.codes == NOT_REVIEWED))

    @property
    def reviewed(self) -> int:
        """Rows with a verdict other than *skip*."""
        return int(np.count_nonzero(np.isin(self.codes, _JUDGED_CODES)))

    def judged_mask(self) -> npt.NDArray[np.bool_]:
        return np.isin(self.codes, _JUDGED_CODES)

    def flagged_positions(self, verdicts: frozenset[str]) -> Positions:
        """The rows whose verdict is one of ``verdicts``, in table order."""
        wanted = np.array([CODES[verdict] for verdict in verdicts], np.int8)
        return np.flatnonzero(np.isin(self.codes, wanted))

    @cached_property
    def changed_mask(self) -> npt.NDArray[np.bool_]:
        """The rows changed since reviewed (see the module's text)."""
        by_id = self.ledger.judged_by_id()
        if not by_id or not len(self):
            return np.zeros(len(self), bool)
        candidates = (self.codes == NOT_REVIEWED) & (self.snapshot.id_counts == 1)
        changed: npt.NDArray[np.bool_] = candidates & self.snapshot.positions_with_ids(list(by_id))
        return changed

    @property
    def changed(self) -> int:
        return int(np.count_nonzero(self.changed_mask))

    def changed_entries(self) -> tuple[ChangedEntry, ...]:
        by_id = self.ledger.judged_by_id()
        return tuple(
            self._changed(position, by_id) for position in np.flatnonzero(self.changed_mask).tolist()
        )

    def _changed(self, position: int, by_id: dict[str, int]) -> ChangedEntry:
        snapshot = self.snapshot
        entry_id = snapshot.id_at(position)
        reviewed = self.ledger.row(by_id[entry_id])
        return ChangedEntry(
            position, int(snapshot.row_ids[position]), entry_id, snapshot.sha_at(position), reviewed
        )

    def changed_entry(self, position: int) -> ChangedEntry | None:
        """The row at ``position`` as a changed entry, or ``None`` when it is not one."""
        if not self.changed_mask[position]:
            return None
        return self._changed(position, self.ledger.judged_by_id())

    def gone(self) -> int:
        """Contents with a standing verdict that no row of this version holds."""
        digests, _codes = self.ledger.standing_digests_and_codes()
        given, _positions = self.snapshot.match_digests(digests)
        return len(digests) - len(np.unique(given))
