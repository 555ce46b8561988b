"""How the ids of a search changed between two runs of it: gained, lost, moved (a replayed logged call)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Change = Literal["same", "moved", "gained", "lost"]


@dataclass(frozen=True)
class RankChange:
    """One id of a replayed call: its rank then and now (1-based; ``None`` where it was not returned)."""

    id: str
    old_rank: int | None
    new_rank: int | None

    @property
    def change(self) -> Change:
        if self.old_rank is None:
            return "gained"
        if self.new_rank is None:
            return "lost"
        return "same" if self.old_rank == self.new_rank else "moved"


@dataclass(frozen=True)
class ReplayDiff:
    """The ids of a call now, in their new order, followed by the ids it no longer returns."""

    rows: tuple[RankChange, ...]

    def _ids(self, change: Change) -> tuple[str, ...]:
        return tuple(row.id for row in self.rows if row.change == change)

    @property
    def gained(self) -> tuple[str, ...]:
        return self._ids("gained")

    @property
    def lost(self) -> tuple[str, ...]:
        return self._ids("lost")

    @property
    def moved(self) -> tuple[str, ...]:
        return self._ids("moved")

    @property
    def changed(self) -> bool:
        return any(row.change != "same" for row in self.rows)

    @property
    def summary(self) -> str:
        if not self.changed:
            return "the same ids in the same order"
        parts = [(len(self.gained), "gained"), (len(self.lost), "lost"), (len(self.moved), "moved")]
        return ", ".join(f"{count} {what}" for count, what in parts if count)


def compare_ids(old: Sequence[str], new: Sequence[str]) -> ReplayDiff:
    """How ``new`` differs from ``old`` (an id listed twice counts at its first rank)."""
    old_ranks: dict[str, int] = {}
    for rank, entry_id in enumerate(old, start=1):
        old_ranks.setdefault(entry_id, rank)
    new_ranks: dict[str, int] = {}
    for rank, entry_id in enumerate(new, start=1):
        new_ranks.setdefault(entry_id, rank)
    rows = [RankChange(entry_id, old_ranks.get(entry_id), rank) for entry_id, rank in new_ranks.items()]
    rows += [
        RankChange(entry_id, rank, None) for entry_id, rank in old_ranks.items() if entry_id not in new_ranks
    ]
    return ReplayDiff(tuple(rows))
