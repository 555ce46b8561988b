"""Near-copies among the agent's results: results within the near-duplicate threshold of each other take
several of the agent's ``limit`` places for one piece of knowledge, and can push the answer out.

The agent's own search gives the results; their stored vectors are compared pair by pair with the metric
and threshold ``recall-gui duplicates`` uses, and linked pairs make groups (as near-duplicates are grouped).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.types import SearchHit
from recall_gui.core.golden.check_places import locate
from recall_gui.core.golden.checks import CheckRun
from recall_gui.core.golden.golden import GoldenCheck
from recall_gui.core.inspect.duplicate_threshold import DEFAULT_THRESHOLDS, check_threshold
from recall_gui.core.inspect.near_duplicates import pair_distances
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness
from recall_gui.core.storage.content_identity import content_sha256
from recall_gui.core.storage.entry_names import IdRepeats


@dataclass(frozen=True)
class Shadowing:
    hits: tuple[SearchHit, ...]
    #: Results that are near-copies of each other, each group in the agent's order (by their names:
    #: ids, or ``content·3f2a9c1e`` where ids repeat).
    groups: tuple[tuple[str, ...], ...]
    threshold: float
    metric: str
    #: The ids several rows of the table share.
    repeats: IdRepeats = field(default_factory=IdRepeats)

    @property
    def distinct(self) -> int:
        """Different entries the agent really got: a group of near-copies counts once."""
        return len(self.hits) - sum(len(group) - 1 for group in self.groups)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "results": [self._result(hit) for hit in self.hits],
            "groups": [list(group) for group in self.groups],
            "distinct": self.distinct,
        }
        if self.repeats:
            data["ids_repeat"] = self.repeats.to_dict()
        return data

    def _result(self, hit: SearchHit) -> dict[str, Any]:
        if not self.repeats.is_shared(hit.id):
            return {"id": hit.id, "distance": hit.distance}
        return {"id": hit.id, "content_sha256": content_sha256(hit.content), "distance": hit.distance}


def near_copy_positions(
    hits: Sequence[SearchHit], threshold: float, metric: str
) -> tuple[tuple[int, ...], ...]:
    """Groups of positions of ``hits`` linked by pairs within ``threshold``, each in the agent's order;
    hits without a vector are left out."""
    import numpy as np

    usable = [number for number, hit in enumerate(hits) if hit.vector is not None]
    if len(usable) < 2:
        return ()
    matrix = np.stack([np.asarray(hits[number].vector, np.float32) for number in usable])
    first, second = np.triu_indices(len(usable), k=1)
    distances = pair_distances(matrix, first.astype(np.intp), second.astype(np.intp), metric)
    parent = list(range(len(usable)))

    def root(node: int) -> int:
        while parent[node] != node:
            node = parent[node]
        return node

    for a, b, distance in zip(first, second, distances, strict=True):
        if distance <= threshold:  # NaN (a cosine of a zero vector) never links
            low, high = sorted((root(int(a)), root(int(b))))
            parent[high] = low
    members: dict[int, list[int]] = {}
    for node in range(len(usable)):
        members.setdefault(root(node), []).append(usable[node])
    return tuple(tuple(group) for group in members.values() if len(group) > 1)


def near_copy_groups(
    hits: Sequence[SearchHit], threshold: float, metric: str, repeats: IdRepeats | None = None
) -> tuple[tuple[str, ...], ...]:
    """:func:`near_copy_positions` as names: ids, or where ``repeats`` shares an id ``content·3f2a9c1e``."""
    named = repeats or IdRepeats()

    def name(hit: SearchHit) -> str:
        return named.label(hit.id, content_sha256(hit.content)) if named.is_shared(hit.id) else hit.id

    return tuple(
        tuple(name(hits[n]) for n in group) for group in near_copy_positions(hits, threshold, metric)
    )


def copies_of_earlier(hits: Sequence[SearchHit], metric: str = "cosine") -> dict[int, int]:
    """For each result that is a near-copy of an earlier one (default threshold of ``metric``), the
    position of the first of its group: what the window marks "≈ 1"."""
    copies = {}
    for group in near_copy_positions(hits, DEFAULT_THRESHOLDS[metric], metric):
        copies.update({member: group[0] for member in group[1:]})
    return copies


async def find_shadowing(
    harness: Harness,
    entry: DatabaseEntry,
    query: str,
    limit: int,
    *,
    threshold: float | None = None,
    metric: str = "cosine",
) -> Shadowing:
    """The agent's results for ``query`` and which of them are near-copies of each other."""
    chosen = check_threshold(DEFAULT_THRESHOLDS[metric] if threshold is None else threshold, metric)
    report = await harness.search_database(entry, query, limit)
    hits = report.result.hits
    if any(hit.vector is None for hit in hits):
        raise InvalidInputError(
            f'the results of "{entry.name}" came without their vectors, so near-copies cannot be told',
            hint="The table's vector column may hold missing vectors: see `recall-gui health`.",
        )
    repeats = await harness.session.tables.id_repeats(entry.target)
    return Shadowing(hits, near_copy_groups(hits, chosen, metric, repeats), chosen, metric, repeats)


async def with_crowding(harness: Harness, run: CheckRun) -> CheckRun:
    """``run`` with each check that missed an expected id told the near-copies among its results."""
    outcomes = []
    for outcome in run.outcomes:
        told = outcome
        if outcome.error is None and not outcome.passed:
            check = outcome.check
            told = replace(outcome, near_copies=await crowding_copies(harness, check))
        outcomes.append(told)
    return CheckRun(tuple(outcomes))


async def crowding_copies(harness: Harness, check: GoldenCheck) -> tuple[tuple[str, ...], ...]:
    """Near-copies among the agent's results for a check that missed an expected entry: the places they
    take may be why it was pushed out (empty when the results hold none, or the search fails)."""
    from recall_gui.core.base.errors import RecallError

    place = await locate(harness, check)  # where the check ran: its database, or its folder's table
    if place.entry is None:
        return ()
    try:
        found = await find_shadowing(harness, place.entry, check.query, check.limit)
    except RecallError:
        return ()
    return found.groups


def crowding_text(groups: Sequence[Sequence[str]]) -> str | None:
    """What a failing check says about near-copies in its results."""
    if not groups:
        return None
    taken = sum(len(group) - 1 for group in groups)
    named = "; ".join(" ≈ ".join(group) for group in groups)
    return f"near-copies take {taken} of the places: {named}"
