""" "Would the agent see this?": where one entry ranks for a query, and how far it is from the limit's cut.

The answer is always computed in the agent's scope (:mod:`recall_gui.core.search.agent_scope`): the
registered,
active database, its latest version, no filter, the agent's limit. When the user's view differs (an
opened folder, an older version, a filter), the view's own rank comes beside it, labelled as the view's,
with the differences in words.

A search's own answer says whether the entry is among the ``limit`` results and where the cut is (the
distance of the last result). Where the entry is outside the results, its rank among all rows comes from
the vectors in memory, ordered exactly as exact search orders them
(:mod:`recall_gui.core.session.exact_rank`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.types import SearchHit, SearchResult
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.agent_scope import (
    AgentScope,
    ViewScope,
    agent_scope_of,
    differences,
    same_search,
    same_table,
)
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.nearest import INLINE_RANK_BYTES
from recall_gui.core.search.similar import find_entry
from recall_gui.core.session.exact_rank import rank_of, ranked_rows
from recall_gui.core.session.vector_cache import NotCached
from recall_gui.core.storage.content_identity import SEPARATOR


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
    #: The sha256 of its content, where its id is shared by other rows (what tells it apart).
    content_sha256: str | None = None

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
        told = {} if self.content_sha256 is None else {"content_sha256": self.content_sha256}
        return {
            "id": self.entry_id,
            **told,
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


async def rank_in(
    harness: Harness,
    entry: DatabaseEntry,
    query: str,
    limit: int,
    row_id: int,
    *,
    entry_id: str,
    where: str | None = None,
    version: int | None = None,
    content_sha256: str | None = None,
) -> Visibility:
    """Where the row ``row_id`` (whose id is ``entry_id``) of ``entry``'s table ranks for ``query``, and
    whether a search with ``limit`` (``where``, ``version``) returns it: a claim about the agent only
    when that is the agent's scope (see :func:`would_agent_see`)."""
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
            content_sha256,
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
    if where is not None:
        allowed = np.isin(vectors.row_ids, await opened.matching_row_ids(where), assume_unique=True)
    query_vector = np.asarray(report.vector, dtype=np.float32)

    measure = session.arithmetic.measure()

    def ranking() -> tuple[tuple[int, float] | None, int]:
        ranked = rank_of(vectors, query_vector, result.metric, position, allowed, measure=measure)
        return ranked, ranked_rows(vectors, query_vector, result.metric, allowed, measure=measure)

    if vectors.matrix.nbytes <= INLINE_RANK_BYTES:
        ranked, rows = ranking()
    else:
        ranked, rows = await asyncio.get_running_loop().run_in_executor(session.compute_executor, ranking)
    if ranked is None:
        if allowed is not None and not allowed[position]:
            why = "the filter leaves it out"
        elif position in vectors.zero_rows:
            why = "its vector has zero length (no cosine distance)"
        else:
            why = "its vector is too short or too long for float32, and LanceDB's distance to it is undefined"
        return place(None, None, f"it has no place in this search: {why}", rows)
    rank, distance = ranked
    return place(rank, distance, _approximate_note(result.method), rows)


@dataclass(frozen=True)
class AgentVerdict:
    """ "Would the agent see this?" answered in the agent's scope, and, when the user's view differs,
    the view's own answer beside it and the differences in words."""

    scope: AgentScope
    #: The entry's place in the agent's search; ``None`` when the agent's table has no such entry.
    agent: Visibility | None
    #: How the view differs from the agent's scope (empty: it is the agent's scope).
    differences: tuple[str, ...] = ()
    #: The entry's place in the view's own search, when that search is not the agent's.
    view: Visibility | None = None
    #: Why there is no agent answer (the entry is not in the latest version).
    missing: str | None = None

    @property
    def agent_sees(self) -> bool:
        """Whether an agent gets the entry now: it can search the table, and the entry is among its
        results."""
        return self.scope.searched and self.agent is not None and self.agent.in_results

    def to_dict(self) -> dict[str, object]:
        """The agent's answer (its fields at the top), plus ``agent_searches``, ``differences``, ``view``
        (the view's answer) and ``missing``."""
        agent = self.agent.to_dict() if self.agent is not None else {"in_results": False, "rank": None}
        return {
            **agent,
            "db_name": self.scope.entry.name,
            "agent_searches": self.scope.searched,
            "differences": list(self.differences),
            "view": self.view.to_dict() if self.view is not None else None,
            "missing": self.missing,
        }


async def would_agent_see(
    harness: Harness,
    view: ViewScope,
    query: str,
    row_id: int,
    *,
    entry_id: str,
    agent_limit: int | None = None,
    content_sha256: str | None = None,
) -> AgentVerdict:
    """Where the entry ``entry_id`` (row ``row_id`` of the table ``view`` shows) ranks in the agent's
    search for ``query``, and, when ``view`` searches otherwise, where it ranks there.

    The agent's search runs on the registered database an agent names for that table (see
    :func:`~recall_gui.core.search.agent_scope.agent_scope_of`), at its latest version, unfiltered, with
    ``agent_limit`` (``None``: the view's limit). The entry is the same row when the view shows that
    table's latest version; otherwise it is found there by its id, and by ``content_sha256`` where its id
    is shared by other rows (then its answers name that too).
    """
    scope = agent_scope_of(view, harness.registry, agent_limit)
    agent_entry = scope.entry
    opened = await harness.session.tables.open(agent_entry.target)
    texts = differences(view, scope, opened.version)
    agent_row: int | None = row_id
    missing = None
    if view.version is not None or not same_table(view.entry, agent_entry):
        try:
            named = entry_id if content_sha256 is None else f"{entry_id}{SEPARATOR}{content_sha256}"
            found = await find_entry(harness.session, agent_entry.target, named)
        except InvalidInputError:
            agent_row = None
            missing = (
                f"the latest version ({opened.version}) has no entry with the id {entry_id!r}: "
                "the agent cannot get it"
            )
        else:
            agent_row = found.hit.row_id
            if agent_row is None:  # pragma: no cover - fetch_row reads each row with its row id
                missing = f"the agent's table gives the entry {entry_id!r} no row id to rank it by"
    agent = None
    if agent_row is not None:
        agent = await rank_in(
            harness,
            agent_entry,
            query,
            scope.limit,
            agent_row,
            entry_id=entry_id,
            content_sha256=content_sha256,
        )
    view_place = None
    if not same_search(view, scope):
        view_place = await rank_in(
            harness,
            view.entry,
            query,
            view.limit,
            row_id,
            entry_id=entry_id,
            where=view.where,
            version=view.version,
            content_sha256=content_sha256,
        )
    return AgentVerdict(scope, agent, texts, view_place, missing)
