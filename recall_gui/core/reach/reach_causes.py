"""Why an entry is out of the agent's reach, in words: the first of these that holds is named.

1. ``no-vector``: its vector is missing or holds a NaN: no search returns it.
2. ``not-finite``: its vector holds an infinite value: LanceDB's distance to every query is infinite (by
   L2: it comes last), not a number (by cosine: never returned) or minus infinity for some queries (by dot).
3. ``zero-vector``: its vector has zero length: no cosine distance (never returned), or as far from every
   query as from any other.
4. ``empty``: its text (or the column its query comes from) is blank: there is nothing to ask for.
5. ``near-copy``: an entry that takes its place has nearly the same vector (cosine distance at most
   :data:`NEAR_COPY`, the near-duplicates' default): a copy answers instead.
6. ``boilerplate``: its query is the query of at least :data:`BOILERPLATE_ENTRIES` entries: it cannot
   single this one out.
7. ``hub``: an entry that takes its place is a hub, returned for at least :data:`HUB_TIMES` times as
   many queries as an entry is on average (the limit).
8. ``taken-by-zero``: an entry with a zero vector takes its place: by L2 it is as near every query
   (distance 1 from a query of length 1) as an entry of cosine similarity 0.5 (by dot, of cosine 0).
9. ``index``: the agent's index misses it although an exact search ranks it within the limit.
10. ``outranked``: other entries lie nearer its own query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recall_gui.core.inspect.duplicate_threshold import DEFAULT_THRESHOLDS

NEAR_COPY = DEFAULT_THRESHOLDS["cosine"]
BOILERPLATE_ENTRIES = 3
HUB_TIMES = 5
CAUSES = (
    "no-vector",
    "not-finite",
    "zero-vector",
    "empty",
    "near-copy",
    "boilerplate",
    "hub",
    "taken-by-zero",
    "index",
    "outranked",
)


#: What LanceDB makes of a vector holding an infinite value, by metric (its own search, measured).
_L2 = "its distance to every query is infinite, so every entry with a finite vector comes first"
_INFINITE = {
    "l2": _L2,
    "cosine": "its cosine distance is not a number, so no search returns it",
    "dot": "its dot distance is infinite, first for some queries and last for the others, whatever its text",
}


def hub_minimum(limit: int) -> int:
    """The fewest queries a hub is returned for: :data:`HUB_TIMES` times the average (the limit, as every
    query returns ``limit`` entries), and at least 2."""
    return max(2, HUB_TIMES * limit)


def boilerplate_key(query: str) -> str:
    """Queries that differ only in case and spacing count as one."""
    return " ".join(query.casefold().split())


@dataclass(frozen=True)
class Facts:
    """What is known of one unreachable entry and of the entries that took its places."""

    query: str
    #: Where its query comes from, in words ("first sentence", "column title").
    query_from: str
    #: Its stored vector (``None``: missing or holding a NaN; an infinite value is kept).
    vector: npt.NDArray[np.float32] | None
    #: Entries sharing its query (itself included).
    sharing_query: int
    #: Its place among every row (1 is first), ``None`` when not within the depth searched.
    rank: int | None
    depth: int
    limit: int
    metric: str
    method: str
    #: The entries that took its places: id, vector (``None``: not known), queries returning it.
    taken_by: Sequence[tuple[str, npt.NDArray[np.float32] | None, int]]
    hub_min: int


def cosine_distance(first: npt.NDArray[np.float32], second: npt.NDArray[np.float32]) -> float | None:
    a, b = first.astype(np.float64), second.astype(np.float64)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return None  # an infinite value: no angle to speak of
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return None if norms == 0 else 1.0 - float(a @ b) / norms


def cause_of(facts: Facts) -> tuple[str, str]:
    """The cause's code and the sentence that tells it."""
    vector = facts.vector
    if vector is None:
        return "no-vector", "its vector is missing or holds a NaN: no search returns it"
    if not np.all(np.isfinite(vector)):
        return "not-finite", "its vector holds an infinite value: " + _INFINITE.get(facts.metric, _L2)
    if not np.any(vector):
        if facts.metric == "cosine":
            return (
                "zero-vector",
                "its vector has zero length: it has no cosine distance, so it is never returned",
            )
        return "zero-vector", "its vector has zero length: it is no nearer its own query than to any other"
    if not facts.query:
        return "empty", f"its {facts.query_from} is empty: there is nothing to ask for"
    for other_id, other, _returned in facts.taken_by:
        distance = None if other is None else cosine_distance(vector, other)
        if distance is not None and distance <= NEAR_COPY:
            return (
                "near-copy",
                f"a near-copy of it takes its place: {other_id} (cosine distance {distance:.4f})",
            )
    if facts.sharing_query >= BOILERPLATE_ENTRIES:
        return "boilerplate", (
            f"its {facts.query_from} is boilerplate, the same for {facts.sharing_query:,} entries: a query "
            "cannot single it out"
        )
    hubs = [
        (other_id, returned) for other_id, _vector, returned in facts.taken_by if returned >= facts.hub_min
    ]
    if hubs:
        other_id, returned = max(hubs, key=lambda hub: hub[1])
        return "hub", f"a hub takes its place: {other_id}, returned for {returned:,} queries"
    zeros = [
        other for other, vector, _returned in facts.taken_by if vector is not None and not np.any(vector)
    ]
    if zeros:
        return "taken-by-zero", (
            f"an entry with a zero vector takes its place: {zeros[0]}, as near every query as any weak match"
        )
    if facts.method.startswith("index:") and facts.rank is not None and facts.rank <= facts.limit:
        index = facts.method.removeprefix("index:")
        return "index", f"the agent's index ({index}) misses it: an exact search ranks it {facts.rank}"
    where = f"it ranks {facts.rank}" if facts.rank is not None else f"it is not in the first {facts.depth}"
    return "outranked", f"other entries lie nearer its own query: {where}"
