"""Golden checks across versions and between knowledge bases: which version broke a check, and A/B.

Every search here is the agent's pipeline (``Harness.search_database``) on a read-only view: an older
version is a checkout, another knowledge base is searched with its own model. Nothing is written.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from recall_gui.core.base.errors import InvalidInputError, RecallError
from recall_gui.core.embedders.base import ModelInfo
from recall_gui.core.golden.check_places import CheckPlace, locate
from recall_gui.core.golden.checks import CheckOutcome, run_check_on
from recall_gui.core.golden.expected import ExpectedRank
from recall_gui.core.golden.golden import CheckDatabase, GoldenCheck, refuse_bad_version
from recall_gui.core.golden.retrieval_metrics import CheckMetrics, MeanMetrics, check_metrics, mean_metrics
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness
from recall_gui.core.storage.content_identity import entry_label
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.versions import latest_version, list_versions, versions_on_disk


def _means(outcomes: Sequence[CheckOutcome | VersionOutcome]) -> dict[str, float] | None:
    means: MeanMetrics | None = mean_metrics([m for m in (o.metrics for o in outcomes) if m is not None])
    return None if means is None else means.to_dict()


def _side(outcome: CheckOutcome) -> dict[str, Any]:
    data: dict[str, Any] = {
        "passed": outcome.passed,
        "expected": [e.to_dict() for e in outcome.expected],
    }
    if outcome.error is not None:
        data["error"] = outcome.error
    if outcome.model is not None:
        data["model"] = outcome.model.to_json()
    return data


# --- which version broke it -----------------------------------------------------------------------------


@dataclass(frozen=True)
class VersionChoice:
    """Which versions of each check's table a run covers: those numbered ``first`` to ``last`` (``None``:
    the latest) still on disk, and of those the ``newest`` last ones (``None``: all)."""

    first: int = 1
    last: int | None = None
    newest: int | None = None

    @classmethod
    def of(cls, first: int | None, last: int | None, newest: int | None) -> VersionChoice:
        """The choice as the user gave it (``--from``, ``--to``, ``--last``), or a clear refusal."""
        refuse_bad_version("--from", first)
        refuse_bad_version("--to", last)
        refuse_bad_version("--last", newest, "a number of versions")
        if first is not None and last is not None and first > last:
            raise InvalidInputError(
                f"--from {first} is after --to {last}: no version lies between them",
                hint="Give the older version to --from, the newer to --to.",
            )
        return cls(first if first is not None else 1, last, newest)

    @property
    def everything(self) -> bool:
        return self == VersionChoice()

    def text(self) -> str:
        """The choice in words, for a message: "versions from 900 to 1000", "the last 50 versions"."""
        span = "versions"
        if self.first > 1:
            span += f" from {self.first}"
        if self.last is not None:
            span += f" to {self.last}"
        return span if self.newest is None else f"the last {self.newest} {span}"


@dataclass(frozen=True)
class VersionOutcome:
    """What a run over versions keeps of one check at one version: the verdict, the expected ids' ranks
    and the metrics, not the results (thousands of versions of many checks must fit in memory)."""

    check: GoldenCheck
    expected: tuple[ExpectedRank, ...]
    error: str | None = None
    #: What embedded its query (exact, or a stand-in: :class:`CheckOutcome`'s).
    model: ModelInfo | None = None

    @classmethod
    def of(cls, outcome: CheckOutcome) -> VersionOutcome:
        return cls(outcome.check, outcome.expected, outcome.error, outcome.model)

    @property
    def passed(self) -> bool:
        return self.error is None and all(expected.rank is not None for expected in self.expected)

    @property
    def metrics(self) -> CheckMetrics | None:
        if self.error is not None:
            return None
        return check_metrics([expected.rank for expected in self.expected], self.check.limit)


@dataclass(frozen=True)
class VersionRun:
    #: The name of the database searched (an unregistered folder's: its table's).
    db_name: str
    version: int
    outcomes: tuple[VersionOutcome, ...]
    #: The database as the checks name it (:attr:`GoldenCheck.database`).
    database: CheckDatabase = ()
    #: Where the checks ran, in words (:func:`recall_gui.core.golden.check_places.place_text`).
    searched: str = ""

    def to_dict(self) -> dict[str, Any]:
        model = next((o.model for o in self.outcomes if o.model is not None), None)
        return {
            "db_name": self.db_name,
            "searched": self.searched or self.db_name,
            "version": self.version,
            "passed": sum(o.passed for o in self.outcomes),
            "failed": sum(not o.passed for o in self.outcomes),
            "metrics": _means(self.outcomes),
            **({"model": model.to_json()} if model is not None else {}),
        }


@dataclass(frozen=True)
class VersionsReport:
    checks: tuple[GoldenCheck, ...]
    runs: tuple[VersionRun, ...]
    #: Checks whose database could not be used at all (by the check's index), with why.
    unusable: dict[int, str]

    @functools.cached_property
    def _by_check(self) -> dict[int, list[tuple[int, VersionOutcome]]]:
        index_of = {id(check): index for index, check in enumerate(self.checks)}
        found: dict[int, list[tuple[int, VersionOutcome]]] = {}
        for run in self.runs:
            for outcome in run.outcomes:
                found.setdefault(index_of[id(outcome.check)], []).append((run.version, outcome))
        return found

    def by_version(self, index: int) -> list[tuple[int, VersionOutcome]]:
        return self._by_check.get(index, [])

    def broke_at(self, index: int) -> int | None:
        """The first version at which the check failed after passing at the version before it."""
        previous: bool | None = None
        broke = None
        for version, outcome in self.by_version(index):
            if previous and not outcome.passed:
                broke = version
            previous = outcome.passed
        return broke

    def to_dict(self) -> dict[str, Any]:
        checks = []
        for index, check in enumerate(self.checks):
            data: dict[str, Any] = {**check.to_dict(), "limit": check.limit}
            data["by_version"] = [
                {
                    "version": version,
                    "passed": outcome.passed,
                    "expected": [e.to_dict() for e in outcome.expected],
                    "metrics": None if outcome.metrics is None else outcome.metrics.to_dict(),
                    **({"error": outcome.error} if outcome.error is not None else {}),
                }
                for version, outcome in self.by_version(index)
            ]
            if index in self.unusable:
                data["error"] = self.unusable[index]
            checks.append(data)
        return {"versions": [run.to_dict() for run in self.runs], "checks": checks}


#: Versions searched through one LanceDB connection: each connection caches every version's manifest
#: it reads (up to 1 GB), so a run over thousands of versions reconnects now and then.
VERSIONS_PER_CONNECTION = 100


class VersionsProgress(Protocol):
    """How a run over versions goes: the listing of a table's history, then each version run."""

    def listing(self, name: str, count: int | None, seconds: float) -> None:
        """``name``'s history is being listed: ``count`` versions (``None``: unknown), for ``seconds``."""

    def ran(self, name: str, done: int, total: int, version: int) -> None:
        """``name``'s checks ran on ``version``, the ``done``-th of the ``total`` versions chosen."""


async def _chosen_versions(
    harness: Harness,
    target: TableTarget,
    name: str,
    choice: VersionChoice,
    progress: VersionsProgress | None,
) -> tuple[int, ...]:
    """The version numbers of ``target``'s table that ``choice`` takes, oldest first."""
    if not choice.everything:
        return await versions_on_disk(harness.session, target, choice.first, choice.last, choice.newest)

    def listing(count: int | None, seconds: float) -> None:
        if progress is not None:
            progress.listing(name, count, seconds)

    versions = await list_versions(harness.session, target, progress=listing)
    return tuple(version.version for version in versions)


async def run_on_versions(
    harness: Harness,
    checks: Sequence[GoldenCheck],
    choice: VersionChoice | None = None,
    progress: VersionsProgress | None = None,
) -> VersionsReport:
    """Every check against every version of its database's table still on disk that ``choice`` takes
    (default: all), oldest first, one version at a time: what a version's search kept in the session is
    dropped before the next, and only the ranks are kept of each outcome."""
    choice = choice if choice is not None else VersionChoice()
    runs: list[VersionRun] = []
    unusable: dict[int, str] = {}
    for database in dict.fromkeys(check.database for check in checks):
        mine = [(i, c) for i, c in enumerate(checks) if c.database == database]
        place = await locate(harness, mine[0][1])
        try:
            if place.entry is None:
                raise RecallError(place.error or "cannot be searched", hint=place.hint)
            entry = place.entry
            numbers = await _chosen_versions(harness, entry.target, entry.name, choice, progress)
            latest = await latest_version(harness.session, entry.target)
        except RecallError as error:
            unusable.update({i: error.message for i, _ in mine})
            continue
        if not numbers:
            latest_text = f"its table's versions end at {latest}"
            unusable.update({i: f"none of {choice.text()} is on disk ({latest_text})" for i, _ in mine})
            continue
        for done, number in enumerate(numbers, start=1):
            at = None if number == latest else number
            try:
                outcomes = [
                    VersionOutcome.of(
                        await run_check_on(harness, check, entry, at, place.text, follow_pin=False)
                    )
                    for _, check in mine
                ]
            finally:
                if at is not None:
                    harness.session.forget_version(entry.target.at(at))
                if done % VERSIONS_PER_CONNECTION == 0:  # its cache of manifests goes with it
                    harness.session.tables.forget(entry.target.uri)
            runs.append(VersionRun(entry.name, number, tuple(outcomes), database, place.text))
            if progress is not None:
                progress.ran(entry.name, done, len(numbers), number)
    return VersionsReport(tuple(checks), tuple(runs), unusable)


# --- A/B ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    a: tuple[CheckOutcome, ...]
    b: tuple[CheckOutcome, ...]

    @property
    def unusable(self) -> tuple[tuple[int, str, CheckOutcome], ...]:
        """The checks a side could not run: (check number from 1, "A", "B" or "A and B" when neither could
        for one reason, that side's outcome)."""
        found: list[tuple[int, str, CheckOutcome]] = []
        for number, (a, b) in enumerate(zip(self.a, self.b, strict=True), start=1):
            if a is b and a.error is not None:  # its database could not be used at all
                found.append((number, "A and B", a))
                continue
            found.extend((number, name, o) for name, o in (("A", a), ("B", b)) if o.error is not None)
        return tuple(found)

    @property
    def regressed(self) -> bool:
        """Whether B misses an expected id that A found (among the checks both sides ran)."""
        for a, b in zip(self.a, self.b, strict=True):
            if a.error is not None or b.error is not None:
                continue
            found_a = {e.key for e in a.expected if e.rank is not None}
            found_b = {e.key for e in b.expected if e.rank is not None}
            if found_a - found_b:
                return True
        return False

    @property
    def shares_ids(self) -> bool:
        """Whether A's and B's results have any id in common (else they are hardly the same entries),
        among the checks both sides ran (none: nothing to say)."""
        ran = [(a, b) for a, b in zip(self.a, self.b, strict=True) if a.error is None and b.error is None]
        return not ran or any(set(_entries(a, b)) & set(_entries(b, a)) for a, b in ran)

    def to_dict(self) -> dict[str, Any]:
        checks = []
        for a, b in zip(self.a, self.b, strict=True):
            check = a.check
            ran = a.error is None and b.error is None  # else nothing was lost or gained: not compared
            checks.append(
                {
                    **check.database_fields(),
                    "searched": a.searched or check.named,
                    "query": check.query,
                    "limit": check.limit,
                    "a": _side(a),
                    "b": _side(b),
                    "lost": _missing_from(a, b) if ran else [],
                    "gained": _missing_from(b, a) if ran else [],
                }
            )
        # Both means over the checks both sides ran: a check one side could not run would tilt one mean.
        both = [(a, b) for a, b in zip(self.a, self.b, strict=True) if a.error is None and b.error is None]
        return {
            "a": {"metrics": _means([a for a, _ in both])},
            "b": {"metrics": _means([b for _, b in both])},
            "checks": checks,
        }


def _entries(side: CheckOutcome, other: CheckOutcome) -> dict[tuple[str, str], str]:
    """``side``'s results by what tells them apart on both sides (an id either side's rows share goes
    with its content's sha256), each with the name a line gives it."""
    shared = side.repeats.shared.keys() | other.repeats.shared.keys()
    shas = side.result_sha256 or ("",) * len(side.results)
    return {
        (found, sha if found in shared else ""): entry_label(found, sha) if found in shared else found
        for found, sha in zip(side.results, shas, strict=True)
    }


def _missing_from(side: CheckOutcome, other: CheckOutcome) -> list[str]:
    """``side``'s results that ``other`` does not have, by name."""
    theirs = _entries(other, side)
    return [name for key, name in _entries(side, other).items() if key not in theirs]


async def compare_checks(
    harness: Harness,
    checks: Sequence[GoldenCheck],
    *,
    version: int | None = None,
    other: DatabaseEntry | None = None,
) -> Comparison:
    """A/B over the checks: A is each check's database at ``version`` (or, comparing with ``other``, where
    the check runs: its pinned version or the latest), B where the check runs (or ``other``'s latest,
    searched with its own model)."""
    a: list[CheckOutcome] = []
    b: list[CheckOutcome] = []
    places: dict[CheckDatabase, CheckPlace] = {}
    for check in checks:
        if check.database not in places:
            places[check.database] = await locate(harness, check)
        place = places[check.database]
        entry = place.entry
        if entry is None:
            failed = CheckOutcome(check, error=place.error, hint=place.hint, searched=place.text)
            a.append(failed)
            b.append(failed)
            continue
        if other is None:
            a.append(await run_check_on(harness, check, entry, version, place.text))
            b.append(await run_check_on(harness, check, entry, searched=place.text))
        else:
            a.append(await run_check_on(harness, check, entry, searched=place.text))
            b.append(await run_check_on(harness, check, other, searched=other.name, follow_pin=False))
    return Comparison(tuple(a), tuple(b))
