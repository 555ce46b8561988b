"""Three answers to one query side by side — the agent's vector search, full-text and hybrid — with each
entry's rank in the others, so a user sees what words would have found and what the agent missed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ComparedEntry:
    id: str
    rank: int
    #: Its rank in each other list, ``None`` where it is not among that list's results.
    elsewhere: Mapping[str, int | None]

    def movement(self, other: str) -> str:
        """Where it is in ``other`` relative to here: "same", "↑ 2" (higher there), "↓ 1", or "only here"."""
        there = self.elsewhere.get(other)
        if there is None:
            return "only here"
        if there == self.rank:
            return "same"
        return f"↑ {self.rank - there}" if there < self.rank else f"↓ {there - self.rank}"


def compare_lists(lists: Mapping[str, Sequence[str]]) -> dict[str, tuple[ComparedEntry, ...]]:
    """Each list's entries with their ranks (1 is first) in every other list."""
    first_rank = {
        name: {entry_id: rank for rank, entry_id in reversed(list(enumerate(ids, start=1)))}
        for name, ids in lists.items()
    }
    return {
        name: tuple(
            ComparedEntry(
                entry_id,
                rank,
                {other: first_rank[other].get(entry_id) for other in lists if other != name},
            )
            for rank, entry_id in enumerate(ids, start=1)
        )
        for name, ids in lists.items()
    }
