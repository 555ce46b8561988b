""" "Would the agent see this?": where one entry ranks for a query, and how far it is from the limit's cut.

The agent's own search answers whether the entry is among the ``limit`` results and where the cut is
(the distance of the last result). Where the entry is outside the results, its rank among all rows comes
from the vectors in memory, ordered exactly as exact search orders them (:mod:`recall_gui.core.exact_rank`).
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from typing import Any

from recall_gui.core.errors import InvalidInputError
from recall_gui.core.exact_rank import rank_of
from recall_gui.core.harness import Harness
from recall_gui.core.nearest import INLINE_RANK_BYTES
from recall_gui.core.registry import DatabaseEntry
from recall_gui.core.types import SearchHit, SearchResult
from recall_gui.core.vector_cache import NotCached


@dataclass(frozen=True)
class Visibility:
    """One entry's place for one query and limit."""

    entry_id: str
    query: str
    limit: int
    metric: str
    #: Its rank among every row (1 is nearest), ``None`` when it cannot be known (see ``note``).
    rank: int | None
    #: Its distance to the query, ``None`` when it has none (a vector of zero length, for cosine).
    distance: float | None
    #: Whether the agent gets it, and at which place.
    in_results: bool
    result_rank: int | None
    #: The distance of the last of ``limit`` results: an entry farther than this is cut; ``None`` when the
    #: agent gets fewer than ``limit`` results (every row makes it).
    cutoff: float | None
    #: How the agent's search ran ("exact", "flat", "index:<type>"), and anything that qualifies the rank.
    method: str
    note: str | None = None
    #: Rows ranked (the table's searchable rows), when known.
    rows: int | None = None

    @property
    def margin(self) -> float | None:
        """How much farther the entry could be and still make the cut (negative: how much nearer it must
        come to make it)."""
        if self.cutoff is None or self.distance is None:
            return None
        return self.cutoff - self.distance

    @property
    def places_behind(self) -> int | None:
        """How many places it must rise to make the cut (0 when it makes it)."""
        if self.in_results:
            return 0
        return None if self.rank is None else max(0, self.rank - self.limit)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.entry_id,
            "query": self.query,
            "limit": self.limit,
            "in_results": self.in_results,
            "rank": self.rank,
            "distance": self.distance,
            "cutoff_distance": self.cutoff,
            "margin": self.margin,
            "metric": self.metric,
            "method": self.method,
            "rows": self.rows,
            "note": self.note,
        }


def in_result(result: SearchResult, hit: SearchHit, limit: int) -> Visibility:
    """The place of ``hit`` among the results it came with (no search needed)."""
    rank = result.hits.index(hit) + 1
    cutoff = result.hits[-1].distance if limit > 0 and len(result.hits) >= limit else None
    note = _approximate_note(result.method)
    return Visibility(
        hit.id,
        result.query,
        limit,
        result.metric,
        rank if note is None else None,
        hit.distance,
        True,
        rank,
        cutoff,
        result.method,
        note,
    )


def _approximate_note(method: str) -> str | None:
    if not method.startswith("index:"):
        return None
    return (
        f"the agent's search goes through the index {method.removeprefix('index:')}, which is approximate; "
        "a rank among all rows is the one an exact search would give"
    )


async def would_agent_see(
    harness: Harness,
    entry: DatabaseEntry,
    query: str,
    limit: int,
    row_id: int,
    *,
    entry_id: str,
    where: str | None = None,
    version: int | None = None,
) -> Visibility:
    """Where the row ``row_id`` (whose id is ``entry_id``) of ``entry``'s table ranks for ``query``, and
    whether the agent's search with ``limit`` returns it."""
    report = await harness.search_database(entry, query, limit, where=where, version=version)
    result = report.result
    hits = result.hits
    cutoff = hits[-1].distance if limit > 0 and len(hits) >= limit else None
    mine = next((number for number, hit in enumerate(hits) if hit.row_id == row_id), None)
    seen = mine is not None
    result_rank = None if mine is None else mine + 1

    def place(
        rank: int | None, distance: float | None, note: str | None, rows: int | None = None
    ) -> Visibility:
        return Visibility(
            entry_id,
            query,
            limit,
            result.metric,
            rank,
            distance,
            seen,
            result_rank,
            cutoff,
            result.method,
            note,
            rows,
        )

    session = harness.session
    target = entry.target.at(version)
    opened = await session.tables.open(target)
    cached = await session.vectors.get(opened, wait=True)
    if isinstance(cached, NotCached):
        if mine is None:
            return place(None, None, f"its rank among all rows needs the vectors in memory: {cached.reason}")
        return place(result_rank, hits[mine].distance, None)  # its place in what the agent gets
    import numpy as np

    vectors = cached.vectors
    found = np.flatnonzero(vectors.row_ids == row_id)
    if not len(found) or report.vector is None:
        raise InvalidInputError(
            f'the entry "{entry_id}" is no longer in the table',
            hint="Another program changed the table: browse it again.",
        )
    position = int(found[0])
    allowed = None
    rows = vectors.rows - (len(vectors.zero_rows) if result.metric == "cosine" else 0)
    if where is not None:
        allowed = np.isin(vectors.row_ids, await opened.matching_row_ids(where), assume_unique=True)
        rows = int(np.count_nonzero(allowed))
    query_vector = np.asarray(report.vector, dtype=np.float32)
    ranking = functools.partial(rank_of, vectors, query_vector, result.metric, position, allowed)
    if vectors.matrix.nbytes <= INLINE_RANK_BYTES:
        ranked = ranking()
    else:
        ranked = await asyncio.get_running_loop().run_in_executor(session.compute_executor, ranking)
    if ranked is None:
        left_out = allowed is not None and not allowed[position]
        why = "the filter leaves it out" if left_out else "its vector has zero length (no cosine distance)"
        return place(None, None, f"the agent never gets it: {why}", rows)
    rank, distance = ranked
    return place(rank, distance, _approximate_note(result.method), rows)
