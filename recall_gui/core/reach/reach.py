"""Which entries can the agent reach? Each entry asked for by its own pseudo-query, as the agent asks.

For every entry a query is made from its own text (:mod:`recall_gui.core.reach.pseudo_queries`),
embedded with the agent's model in bulk (the session's model pool: each vector the one a single query
gets), and searched as the agent's ``recall_search`` searches: the registered database an agent names for
the table (:func:`recall_gui.core.search.agent_scope.agent_scope_of`), its latest version, no filter, the
agent's limit (:mod:`recall_gui.core.reach.reach_search`). An entry is reachable when it is among the
results of its own query. The report (:mod:`recall_gui.core.reach.reach_report`) gives each unreachable
entry's place, the entries that took its places and why (:mod:`recall_gui.core.reach.reach_causes`), and
for the whole table the retrievability of every entry (how many queries return it: the pseudo-queries,
and the given queries of a golden file or the agent log), hubs, antihubs and the Gini coefficient.
Nothing is written.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.types import DEFAULT_LIMIT, effective_limit
from recall_gui.core.embedders.base import ModelInfo
from recall_gui.core.reach.hubs import HubQuery
from recall_gui.core.reach.pseudo_queries import Entries, QueryRule, read_entries
from recall_gui.core.reach.reach_causes import Facts, boilerplate_key, cause_of, hub_minimum
from recall_gui.core.reach.reach_report import ReachReport, Retrievability, Unreachable, gini
from recall_gui.core.reach.reach_search import Ranking, RowIds, rank_queries
from recall_gui.core.reach.reach_vectors import stored_vectors
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.agent_scope import ViewScope, agent_scope_of
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.nearest import require_width
from recall_gui.core.session.session import Session
from recall_gui.core.storage.open_table import OpenTable
from recall_gui.core.storage.target import TableOptions
from recall_gui.core.tables.model_detection import no_model_error

#: How deep each entry's own place is looked for (at least the limit).
DEFAULT_DEPTH = 100
#: The stages ``on_progress`` names.
READING, EMBEDDING, SEARCHING, ASKED = "reading entries", "embedding queries", "searching", "given queries"
#: Entries asked for at a time: each part is embedded, then searched, and the entries it finds out of
#: reach are handed to ``on_unreachable`` at once, so a long report grows as it goes.
PART_QUERIES = 256
#: The cause of an entry found out of reach before every entry was asked (hubs need every query).
PENDING = "pending"
PENDING_WHY = "found so far: why is said when every entry has been asked"

Progress = Callable[[str, int, int], None]
Step = Callable[[int, int], None]
#: Handed the entries found out of reach by each part, as they are found (cause :data:`PENDING`).
Found = Callable[[tuple[Unreachable, ...]], None]


class Ranker(Protocol):
    """How the queries are searched: :func:`~recall_gui.core.reach.reach_search.rank_queries`, or on Ray."""

    async def __call__(
        self,
        session: Session,
        opened: OpenTable,
        queries: npt.NDArray[np.float32],
        owners: RowIds | None,
        *,
        limit: int,
        depth: int,
        options: TableOptions | None,
        on_progress: Step | None = None,
    ) -> Ranking: ...


@dataclass(frozen=True)
class _Run:
    """One report under way: the agent's table, its model and how it is searched."""

    session: Session
    opened: OpenTable
    agent: DatabaseEntry
    ranker: Ranker
    limit: int
    depth: int

    async def embedded(
        self, texts: Sequence[str], step: Step, known: dict[str, npt.NDArray[np.float32]] | None = None
    ) -> tuple[npt.NDArray[np.float32], ModelInfo | None]:
        """``texts`` embedded with the agent's model (each distinct text once), one row per text;
        ``known``: vectors of texts embedded before (added to)."""
        width = self.opened.columns.vector_dim
        known = {} if known is None else known
        distinct = [text for text in dict.fromkeys(texts) if text not in known]
        embedded = await self.session.models.embed_queries(self.agent.embedder, distinct, width, step)
        vectors = embedded.vectors
        if distinct:
            require_width(
                int(vectors.shape[1]),
                width,
                f"{embedded.used} returned {vectors.shape[1]}-dimensional vectors; the table was built "
                "with another model. Fix the embedder in the registry.",
            )
            if not np.all(np.isfinite(vectors)):
                raise InvalidInputError("a query's vector contains NaN or infinite values")
        known.update(zip(distinct, vectors, strict=True))
        if not texts:
            return np.zeros((0, width), np.float32), embedded.model
        return np.vstack([known[text] for text in texts]).astype(np.float32, copy=False), embedded.model

    async def rank(
        self,
        vectors: npt.NDArray[np.float32],
        owners: RowIds | None,
        limit: int,
        depth: int,
        step: Step | None,
    ) -> Ranking:
        return await self.ranker(
            self.session,
            self.opened,
            vectors,
            owners,
            limit=limit,
            depth=depth,
            options=self.agent.target.options,
            on_progress=step,
        )


def _counts(
    results: Sequence[RowIds], entries: Entries, by_row: npt.NDArray[np.intp]
) -> npt.NDArray[np.int64]:
    """How many of ``results`` return each entry (``by_row``: the entries in row-id order; a search
    returns a row at most once)."""
    counts = np.zeros(len(entries), np.int64)
    if not results or not len(entries):
        return counts
    returned = np.concatenate(results)
    ordered = entries.row_ids[by_row]
    spots = np.clip(np.searchsorted(ordered, returned), 0, len(ordered) - 1)
    known = ordered[spots] == returned  # a row added after the entries were read is not counted
    np.add.at(counts, by_row[spots[known]], 1)
    return counts


def _check_model(agent: DatabaseEntry, width: int) -> None:
    if agent.embedder.kind == "unknown":
        raise no_model_error(agent, width)
    if agent.embedder.dim is not None:
        require_width(
            agent.embedder.dim,
            width,
            f"The registry says {agent.name} uses {agent.embedder.label}, but its table holds "
            f"{width}-dimensional vectors: fix the embedder in the registry.",
        )


async def find_reach(
    harness: Harness,
    entry: DatabaseEntry,
    *,
    limit: int = DEFAULT_LIMIT,
    depth: int | None = None,
    rule: QueryRule | None = None,
    queries: Sequence[HubQuery] = (),
    ranker: Ranker = rank_queries,
    on_progress: Progress | None = None,
    on_unreachable: Found | None = None,
    part: int | None = None,
) -> ReachReport:
    """The reach report of the table ``entry`` reads, in the agent's scope (see the module's text);
    ``depth``: how deep each entry's own place is looked for (default :data:`DEFAULT_DEPTH`, at least
    ``limit``); ``queries``: more queries to count retrievability by, each at its own limit;
    ``on_progress(stage, done, total)``; ``on_unreachable``: the entries found out of reach so far, as
    each ``part`` of the entries has been asked for (default :data:`PART_QUERIES`; their causes come with
    the report)."""
    started = time.perf_counter()
    rule = rule or QueryRule()
    if limit < 1:
        raise InvalidInputError(f"the limit must be at least 1, not {limit}")
    depth = max(limit, DEFAULT_DEPTH if depth is None else depth)

    def stage(name: str) -> Step:
        return lambda done, total: None if on_progress is None else on_progress(name, done, total)

    scope = agent_scope_of(ViewScope(entry, limit=limit), harness.registry, limit)
    opened = await harness.session.tables.open(scope.entry.target)
    _check_model(scope.entry, opened.columns.vector_dim)
    run = _Run(harness.session, opened, scope.entry, ranker, limit, depth)
    stage(READING)(0, 0)
    entries = await read_entries(opened, rule)
    asked = np.array([number for number, query in enumerate(entries.queries) if query], dtype=np.intp)
    found = _Finds(entries, on_unreachable)
    found.blank()
    ranking, used, embed_s, search_s = await _ask(
        run, asked, found, on_progress, max(part or PART_QUERIES, 1)
    )
    by_row = np.argsort(entries.row_ids, kind="stable")
    returned_for = _counts(ranking.results, entries, by_row)
    given = await _given(run, queries, entries, by_row, stage(ASKED))
    places = _places(ranking, asked)
    missed = found.missed
    unreachable = await _unreachable(
        run, entries, ranking, returned_for=returned_for, rule=rule, places=places, missed=missed
    )
    retrievability = tuple(
        Retrievability(
            entries.ids[number],
            int(entries.row_ids[number]),
            int(returned_for[number]),
            None if given is None else int(given[number]),
            places.get(number),
            entries.name(number),
            entries.shas.get(number),
        )
        for number in range(len(entries))
    )
    return ReachReport(
        db_name=scope.entry.name,
        agent_searches=scope.searched,
        why_not=scope.why_not,
        version=opened.version,
        model=used,
        metric=ranking.metric,
        method=ranking.method,
        exact_places=ranking.exact_places,
        note=ranking.note,
        limit=limit,
        depth=depth,
        query_from=rule.label,
        searched=len(asked),
        reachable=len(asked) - len(missed),
        gini=gini(returned_for),
        hub_min=hub_minimum(limit),
        unreachable=unreachable,
        retrievability=retrievability,
        queries=None if given is None else len(queries),
        gini_queries=None if given is None else gini(given),
        embed_s=embed_s,
        search_s=search_s,
        total_s=time.perf_counter() - started,
        repeats=entries.repeats,
    )


class _Finds:
    """The entries found out of reach so far (entry and query numbers), told as they are found."""

    def __init__(self, entries: Entries, on_unreachable: Found | None) -> None:
        self.entries = entries
        self.on_unreachable = on_unreachable
        self.missed: list[tuple[int, int]] = []
        self._id_of: dict[int, str] | None = None

    def blank(self) -> None:
        """The entries with no query to ask: out of reach before anything is searched."""
        entries = self.entries
        self._tell([(number, None) for number in range(len(entries)) if not entries.queries[number]], None)

    def part(self, numbers: npt.NDArray[np.intp], ranking: Ranking, first: int) -> None:
        """A part of the queries searched: ``numbers`` their entries, ``first`` the number of its first
        query among all."""
        owners = self.entries.row_ids[numbers]
        missed = [
            (number, at)
            for at, number in enumerate(numbers.tolist())
            if not np.any(ranking.results[at] == owners[at])
        ]
        self.missed += [(number, first + at) for number, at in missed]
        self._tell(missed, ranking)

    def _tell(self, found: Sequence[tuple[int, int | None]], ranking: Ranking | None) -> None:
        if self.on_unreachable is None or not found:
            return
        entries = self.entries
        if self._id_of is None:
            self._id_of = dict(zip(entries.row_ids.tolist(), entries.ids, strict=True))
        told = []
        for number, at in found:
            rank, rows = None, []
            if ranking is not None and at is not None:
                rank, rows = int(ranking.own_rank[at]) or None, ranking.results[at].tolist()
            by = tuple(self._id_of.get(row, str(row)) for row in rows)
            query = entries.queries[number]
            told.append(
                Unreachable(
                    entries.ids[number], int(entries.row_ids[number]), query, rank, by, PENDING, PENDING_WHY
                )
            )
        self.on_unreachable(tuple(told))


async def _ask(
    run: _Run, asked: npt.NDArray[np.intp], found: _Finds, on_progress: Progress | None, part: int
) -> tuple[Ranking, ModelInfo | None, float, float]:
    """Every entry of ``asked`` asked for by its own query, ``part`` entries at a time (embedded, then
    searched); each part's entries out of reach told to ``found``. Returns the ranking of all the queries,
    the model that embedded them and the seconds spent embedding and searching."""
    entries, total = found.entries, len(asked)
    known: dict[str, npt.NDArray[np.float32]] = {}
    parts: list[Ranking] = []
    used: ModelInfo | None = None
    embed_s = search_s = 0.0
    for first in range(0, total, part) if total else [0]:
        numbers = asked[first : first + part]

        def step(name: str, offset: int = first) -> Step:
            return lambda done, _all: None if on_progress is None else on_progress(name, offset + done, total)

        started = time.perf_counter()
        vectors, model = await run.embedded([entries.queries[n] for n in numbers], step(EMBEDDING), known)
        used = model or used
        searched = time.perf_counter()
        ranking = await run.rank(vectors, entries.row_ids[numbers], run.limit, run.depth, step(SEARCHING))
        embed_s, search_s = embed_s + searched - started, search_s + time.perf_counter() - searched
        parts.append(ranking)
        found.part(numbers, ranking, first)
    return _joined(parts), used, embed_s, search_s


def _joined(parts: list[Ranking]) -> Ranking:
    """The rankings of consecutive parts of the queries as one."""
    first = parts[0]
    if len(parts) == 1:
        return first
    return replace(
        first,
        results=[rows for ranking in parts for rows in ranking.results],
        own_rank=np.concatenate([ranking.own_rank for ranking in parts]),
        exact_places=all(ranking.exact_places for ranking in parts),
        note=next((ranking.note for ranking in parts if ranking.note), None),
    )


def _places(ranking: Ranking, asked: npt.NDArray[np.intp]) -> dict[int, int]:
    """Each searched entry's place for its own query, where it is within the depth."""
    return {
        number: int(place)
        for number, place in zip(asked.tolist(), ranking.own_rank.tolist(), strict=True)
        if place
    }


async def _given(
    run: _Run, queries: Sequence[HubQuery], entries: Entries, by_row: npt.NDArray[np.intp], step: Step
) -> npt.NDArray[np.int64] | None:
    """How many of the given queries (each at its own limit) return each entry."""
    if not queries:
        return None
    vectors, _used = await run.embedded([query.text for query in queries], step)
    counts = np.zeros(len(entries), np.int64)
    limits = [effective_limit(query.limit) for query in queries]  # as the agent's harness reads them
    for own_limit in sorted(set(limits) - {0}):  # a limit of 0 returns nothing
        chosen = [number for number, limit in enumerate(limits) if limit == own_limit]
        ranking = await run.rank(vectors[chosen], None, own_limit, own_limit, None)
        counts += _counts(ranking.results, entries, by_row)
    return counts


async def _unreachable(
    run: _Run,
    entries: Entries,
    ranking: Ranking,
    *,
    returned_for: npt.NDArray[np.int64],
    rule: QueryRule,
    places: dict[int, int],
    missed: list[tuple[int, int]],
) -> tuple[Unreachable, ...]:
    """The entries their own query does not reach (``missed``: entry and query numbers) and those with no
    query to ask, in table order, each with what took its places and why."""
    blank = [(number, -1) for number in range(len(entries)) if not entries.queries[number]]
    chosen = sorted([*missed, *blank])
    row_ids = entries.row_ids.tolist()
    id_of = {row: entries.name(number) for number, row in enumerate(row_ids)}
    count_of = dict(zip(row_ids, returned_for.tolist(), strict=True))
    taken = {at: [int(row) for row in ranking.results[at]] for _number, at in missed}
    wanted = {row_ids[number] for number, _at in chosen} | {row for rows in taken.values() for row in rows}
    vectors = await stored_vectors(run.opened, sorted(wanted), ranking.held)
    sharing: dict[str, int] = {}
    for query in entries.queries:
        if query:
            sharing[boilerplate_key(query)] = sharing.get(boilerplate_key(query), 0) + 1
    words = f"column {rule.column}" if rule.kind == "column" else rule.kind.replace("-", " ")
    found = []
    for number, at in chosen:
        rows = taken.get(at, [])
        query = entries.queries[number]
        facts = Facts(
            query=query,
            query_from="text" if entries.blank[number] and rule.kind != "column" else words,
            vector=vectors.get(row_ids[number]),
            sharing_query=sharing.get(boilerplate_key(query), 0),
            rank=places.get(number),
            depth=run.depth,
            limit=run.limit,
            metric=ranking.metric,
            method=ranking.method,
            taken_by=[(id_of.get(row, str(row)), vectors.get(row), count_of.get(row, 0)) for row in rows],
            hub_min=hub_minimum(run.limit),
        )
        cause, why = cause_of(facts)
        by = tuple(id_of.get(row, str(row)) for row in rows)
        found.append(
            Unreachable(
                entries.ids[number],
                row_ids[number],
                query,
                places.get(number),
                by,
                cause,
                why,
                entries.name(number),
                entries.shas.get(number),
            )
        )
    return tuple(found)
