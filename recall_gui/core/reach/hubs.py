"""Hubs: entries the agent's search returns for a large share of all queries — boilerplate chunks that
crowd out the answers. Each query is searched exactly as the agent's ``recall_search`` searches it, and
every entry counts once per query it is returned for (entries that share an id are told apart by their
content).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from recall_gui.core.agent_log.call_record import CallRecord
from recall_gui.core.base.errors import RecallError
from recall_gui.core.base.tool import TOOL_NAME
from recall_gui.core.base.types import DEFAULT_LIMIT
from recall_gui.core.golden.golden import GoldenCheck
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness
from recall_gui.core.storage.content_identity import content_sha256
from recall_gui.core.storage.entry_names import UNIQUE, IdRepeats

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
    #: The sha256 of its content where its id is shared by other rows (what tells it apart), else empty.
    content_sha256: str = UNIQUE
    #: Its name in a line: the id, or ``content·3f2a9c1e`` and the first words of its content.
    name: str = ""

    @property
    def named(self) -> str:
        return self.name or self.id

    def to_dict(self) -> dict[str, Any]:
        told = {"content_sha256": self.content_sha256} if self.content_sha256 else {}
        return {"id": self.id, **told, "returned_for": self.returned_for, "share": self.share}


@dataclass(frozen=True)
class HubReport:
    queries: int
    #: The limit every query was searched with; ``None`` when the queries had their own (golden checks).
    limit: int | None
    #: Every returned entry, most returned first (ties by id, then content).
    returned: tuple[Returned, ...]
    #: The ids several rows of the table share (those entries are counted by their content).
    repeats: IdRepeats = field(default_factory=IdRepeats)

    def hubs(self, share: float) -> tuple[Returned, ...]:
        return tuple(entry for entry in self.returned if entry.share > share)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "queries": self.queries,
            "limit": self.limit,
            "hubs": [entry.to_dict() for entry in self.returned],
        }
        if self.repeats:
            data["ids_repeat"] = self.repeats.to_dict()
        return data


class _Counts:
    """How many queries (or calls) returned each entry, by what tells entries apart (:class:`IdRepeats`)."""

    def __init__(self, repeats: IdRepeats) -> None:
        self.repeats = repeats
        self.counts: Counter[tuple[str, str]] = Counter()
        self.names: dict[tuple[str, str], str] = {}

    def add(self, found: Iterable[tuple[str, str, str | None]]) -> None:
        """One query's results: each id, its content's sha256, and its content when at hand."""
        keys = set()
        for entry_id, sha, content in found:
            key = self.repeats.key(entry_id, sha)
            keys.add(key)
            if key not in self.names:
                shared = key[1] != UNIQUE
                named = self.repeats.name(entry_id, content) if content is not None else None
                self.names[key] = named or (self.repeats.label(entry_id, sha) if shared else entry_id)
        self.counts.update(keys)

    def report(self, queries: int, limits: set[int]) -> HubReport:
        ranked = sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))
        return HubReport(
            queries,
            limits.pop() if len(limits) == 1 else None,
            tuple(Returned(key[0], count, count / queries, key[1], self.names[key]) for key, count in ranked),
            self.repeats,
        )


def hubs_from_log(records: Iterable[CallRecord], db_name: str, repeats: IdRepeats | None = None) -> HubReport:
    """Hubs among what agents got: the successful logged calls to ``db_name``, each returned entry counted
    once per call (no search is run; the log holds the ids each call returned, and their contents'
    sha256). An id ``repeats`` shares is told apart by that sha256. The window's own Agent-view calls are
    left out."""
    counts = _Counts(repeats or IdRepeats())
    calls = 0
    limits: set[int] = set()
    for record in records:
        if record.tool != TOOL_NAME or record.error is not None or record.db_name != db_name:
            continue
        if record.from_window:
            continue
        calls += 1
        counts.add((entry_id, sha, None) for entry_id, sha in record.results())
        asked = record.arguments.get("limit") if isinstance(record.arguments, dict) else None
        limits.add(asked if isinstance(asked, int) and not isinstance(asked, bool) else DEFAULT_LIMIT)
    return counts.report(calls, limits)


async def find_hubs(
    harness: Harness,
    entry: DatabaseEntry,
    queries: Sequence[HubQuery],
    on_progress: Callable[[int, int], None] | None = None,
) -> HubReport:
    """Search ``entry`` for each query as the agent would and count, per entry, the queries returning it
    (where ids repeat, entries are told apart by their content)."""
    counts = _Counts(await harness.session.tables.id_repeats(entry.target))
    for done, query in enumerate(queries, start=1):
        report = await harness.search_database(entry, query.text, query.limit)
        counts.add((hit.id, content_sha256(hit.content), hit.content) for hit in report.result.hits)
        if on_progress is not None:
            on_progress(done, len(queries))
    return counts.report(len(queries), {query.limit for query in queries})


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
