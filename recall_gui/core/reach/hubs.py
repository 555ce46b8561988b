"""Hubs: entries the agent's search returns for a large share of all queries — boilerplate chunks that
crowd out the answers. Each query is searched exactly as the agent's ``recall_search`` searches it, and
every id counts once per query it is returned for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from recall_gui.core.agent_log.call_record import CallRecord
from recall_gui.core.base.errors import RecallError
from recall_gui.core.base.tool import TOOL_NAME
from recall_gui.core.base.types import DEFAULT_LIMIT
from recall_gui.core.golden.golden import GoldenCheck
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness

#: The share of queries above which the plain output names an entry as a hub, unless the user sets one.
DEFAULT_HUB_SHARE = 0.25


@dataclass(frozen=True)
class HubQuery:
    text: str
    limit: int


@dataclass(frozen=True)
class Returned:
    id: str
    returned_for: int
    share: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "returned_for": self.returned_for, "share": self.share}


@dataclass(frozen=True)
class HubReport:
    queries: int
    #: The limit every query was searched with; ``None`` when the queries had their own (golden checks).
    limit: int | None
    #: Every returned id, most returned first (ties by id).
    returned: tuple[Returned, ...]

    def hubs(self, share: float) -> tuple[Returned, ...]:
        return tuple(entry for entry in self.returned if entry.share > share)

    def to_dict(self) -> dict[str, Any]:
        return {
            "queries": self.queries,
            "limit": self.limit,
            "hubs": [entry.to_dict() for entry in self.returned],
        }


def hubs_from_log(records: Iterable[CallRecord], db_name: str) -> HubReport:
    """Hubs among what agents got: the successful logged calls to ``db_name``, each returned id counted
    once per call (no search is run; the log holds the ids each call returned). The window's own
    Agent-view calls are left out."""
    counts: Counter[str] = Counter()
    calls = 0
    limits: set[int] = set()
    for record in records:
        if record.tool != TOOL_NAME or record.error is not None or record.db_name != db_name:
            continue
        if record.from_window:
            continue
        calls += 1
        counts.update(set(record.result_ids))
        asked = record.arguments.get("limit") if isinstance(record.arguments, dict) else None
        limits.add(asked if isinstance(asked, int) and not isinstance(asked, bool) else DEFAULT_LIMIT)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return HubReport(
        calls,
        limits.pop() if len(limits) == 1 else None,
        tuple(Returned(found, count, count / calls) for found, count in ranked),
    )


async def find_hubs(
    harness: Harness,
    entry: DatabaseEntry,
    queries: Sequence[HubQuery],
    on_progress: Callable[[int, int], None] | None = None,
) -> HubReport:
    """Search ``entry`` for each query as the agent would and count, per id, the queries returning it."""
    counts: Counter[str] = Counter()
    for done, query in enumerate(queries, start=1):
        report = await harness.search_database(entry, query.text, query.limit)
        counts.update({hit.id for hit in report.result.hits})
        if on_progress is not None:
            on_progress(done, len(queries))
    total = len(queries)
    limits = {query.limit for query in queries}
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return HubReport(
        total,
        limits.pop() if len(limits) == 1 else None,
        tuple(Returned(found, count, count / total) for found, count in ranked),
    )


@dataclass(frozen=True)
class CheckHubs:
    """The hubs among a golden file's checks of one database: where they ran, on what, and the counts (or
    why that database could not be searched)."""

    #: Where the checks ran, in words (:func:`recall_gui.core.golden.check_places.place_text`).
    searched: str
    report: HubReport | None = None
    error: str | None = None


async def hubs_of_checks(
    harness: Harness,
    checks: Sequence[GoldenCheck],
    on_progress: Callable[[int, int], None] | None = None,
) -> tuple[CheckHubs, ...]:
    """Hubs among the agent's answers to a golden file's queries, one report per database the checks run on
    (each query at its check's limit, on the latest version, as the agent searches; pinned checks too: a
    hub is about the queries, not a version)."""
    from recall_gui.core.golden.check_places import locate

    groups: dict[tuple[str, ...], list[GoldenCheck]] = {}
    for check in checks:
        groups.setdefault(check.database, []).append(check)
    found: list[CheckHubs] = []
    done = 0
    for mine in groups.values():
        place = await locate(harness, mine[0])
        if place.entry is None:
            found.append(CheckHubs(place.text, error=place.error))
        else:
            queries = [HubQuery(check.query, check.limit) for check in mine]
            base = done

            def progress(searched: int, _total: int, base: int = base) -> None:
                if on_progress is not None:
                    on_progress(base + searched, len(checks))

            try:
                found.append(CheckHubs(place.text, await find_hubs(harness, place.entry, queries, progress)))
            except RecallError as error:
                found.append(CheckHubs(place.text, error=error.message))
        done += len(mine)
        if on_progress is not None:
            on_progress(done, len(checks))
    return tuple(found)
