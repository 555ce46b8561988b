"""What a reach report holds, and its JSON (``recall-gui reach --json``, docs/REACH.md): the entries their own
query does not reach, the retrievability of every entry, hubs, antihubs and the Gini coefficient."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.embedders.base import ModelInfo
from recall_gui.core.storage.entry_names import IdRepeats


@dataclass(frozen=True)
class Unreachable:
    """An entry its own query does not reach, what took its places, and why."""

    id: str
    row_id: int
    query: str
    #: Its place for its own query (1 is first), ``None`` when not within the depth searched.
    rank: int | None
    taken_by: tuple[str, ...]
    #: One of :data:`recall_gui.core.reach.reach_causes.CAUSES`.
    cause: str
    why: str
    #: Its name where its id is shared by other rows (``content·3f2a9c1e``), and its content's sha256.
    name: str = ""
    content_sha256: str | None = None

    @property
    def named(self) -> str:
        return self.name or self.id

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            **_told(self.content_sha256),
            "query": self.query,
            "rank": self.rank,
            "taken_by": list(self.taken_by),
            "cause": self.cause,
            "why": self.why,
        }


@dataclass(frozen=True)
class Retrievability:
    """How often one entry is returned, and its place for its own query."""

    id: str
    row_id: int
    #: Pseudo-queries that return it.
    returned_for: int
    #: Given queries (golden file, agent log) that return it; ``None`` when none were given.
    returned_for_queries: int | None
    #: Its place for its own query, ``None`` when not within the depth (or its query is empty).
    rank: int | None
    #: Its name where its id is shared by other rows (``content·3f2a9c1e``), and its content's sha256.
    name: str = ""
    content_sha256: str | None = None

    @property
    def named(self) -> str:
        return self.name or self.id

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            **_told(self.content_sha256),
            "returned_for": self.returned_for,
            "rank": self.rank,
        }
        if self.returned_for_queries is not None:
            data["returned_for_queries"] = self.returned_for_queries
        return data


@dataclass(frozen=True)
class ReachReport:
    """The reach of one table in the agent's scope (see :mod:`recall_gui.core.reach.reach`)."""

    db_name: str
    #: Whether an agent searches this database now (registered and active), and if not, why.
    agent_searches: bool
    why_not: str | None
    version: int
    #: What embedded the queries (exact, or a stand-in), as the session's model pool says.
    model: ModelInfo | None
    metric: str
    method: str
    #: Whether the places are exact (an index's own are approximate when the vectors cannot be held).
    exact_places: bool
    note: str | None
    limit: int
    depth: int
    query_from: str
    #: Pseudo-queries searched (entries with a non-empty query).
    searched: int
    reachable: int
    gini: float
    hub_min: int
    unreachable: tuple[Unreachable, ...]
    retrievability: tuple[Retrievability, ...]
    #: Given queries searched (``None``: none given) and the Gini coefficient of what they return.
    queries: int | None = None
    gini_queries: float | None = None
    embed_s: float = 0.0
    search_s: float = 0.0
    total_s: float = 0.0
    #: The ids several rows of the table share (those entries are named by their content).
    repeats: IdRepeats = field(default_factory=IdRepeats)

    @property
    def entries(self) -> int:
        return len(self.retrievability)

    @property
    def all_reachable(self) -> bool:
        return not self.unreachable

    @property
    def hubs(self) -> tuple[Retrievability, ...]:
        found = [entry for entry in self.retrievability if entry.returned_for >= self.hub_min]
        return tuple(sorted(found, key=lambda entry: (-entry.returned_for, entry.id, entry.named)))

    @property
    def antihubs(self) -> int:
        """Entries no query returns (neither a pseudo-query nor a given one)."""
        return sum(
            1 for entry in self.retrievability if entry.returned_for == 0 and not entry.returned_for_queries
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "db_name": self.db_name,
            "agent_searches": self.agent_searches,
            "why_not": self.why_not,
            "version": self.version,
            "model": None if self.model is None else self.model.to_json(),
            "metric": self.metric,
            "method": self.method,
            "exact_places": self.exact_places,
            "note": self.note,
            "limit": self.limit,
            "depth": self.depth,
            "query_from": self.query_from,
            "entries": self.entries,
            "searched": self.searched,
            "reachable": self.reachable,
            "gini": round(self.gini, 6),
            "hub_min": self.hub_min,
            "hubs": [
                {"id": hub.id, **_told(hub.content_sha256), "returned_for": hub.returned_for}
                for hub in self.hubs
            ],
            "antihubs": self.antihubs,
            "queries": self.queries,
            "gini_queries": None if self.gini_queries is None else round(self.gini_queries, 6),
            "seconds": {
                "embed": round(self.embed_s, 3),
                "search": round(self.search_s, 3),
                "total": round(self.total_s, 3),
            },
            "unreachable": [entry.to_dict() for entry in self.unreachable],
            "retrievability": [entry.to_dict() for entry in self.retrievability],
            **({"ids_repeat": self.repeats.to_dict()} if self.repeats else {}),
        }


def _told(sha: str | None) -> dict[str, str]:
    """``content_sha256`` for an entry whose id is shared (what tells it apart), nothing for another."""
    return {} if sha is None else {"content_sha256": sha}


Counts = Sequence[int] | npt.NDArray[Any]


def gini(values: Counts) -> float:
    """The Gini coefficient of ``values`` (0: every entry returned equally often; near 1: a few entries
    take every place); 0 when nothing was returned."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    count, total = len(ordered), float(ordered.sum())
    if count == 0 or total == 0:
        return 0.0
    weighted = float(np.arange(1, count + 1) @ ordered)
    return 2 * weighted / (count * total) - (count + 1) / count


def lorenz(values: Counts) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The Lorenz curve of ``values``: the share of entries (least returned first) against the share of
    all returns they get, from (0, 0) to (1, 1)."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    total = float(ordered.sum())
    shares = np.concatenate([[0.0], np.cumsum(ordered) / total]) if total else np.zeros(len(ordered) + 1)
    return np.linspace(0.0, 1.0, len(ordered) + 1), shares
