"""Golden checks across versions and between knowledge bases: which version broke a check, and A/B.

Every search here is the agent's pipeline (``Harness.search_database``) on a read-only view: an older
version is a checkout, another knowledge base is searched with its own model. Nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recall_gui.core.agents.check_places import CheckPlace, locate
from recall_gui.core.agents.checks import CheckOutcome, run_check_on
from recall_gui.core.agents.golden import CheckDatabase, GoldenCheck
from recall_gui.core.agents.retrieval_metrics import MeanMetrics, mean_metrics
from recall_gui.core.base.errors import RecallError
from recall_gui.core.registry.registry import DatabaseEntry
from recall_gui.core.search.harness import Harness
from recall_gui.core.tables.versions import list_versions


def _means(outcomes: Sequence[CheckOutcome]) -> dict[str, float] | None:
    means: MeanMetrics | None = mean_metrics([m for m in (o.metrics for o in outcomes) if m is not None])
    return None if means is None else means.to_dict()


def _side(outcome: CheckOutcome) -> dict[str, Any]:
    data: dict[str, Any] = {
        "passed": outcome.passed,
        "expected": [{"id": e.id, "rank": e.rank} for e in outcome.expected],
    }
    if outcome.error is not None:
        data["error"] = outcome.error
    return data


# --- which version broke it -----------------------------------------------------------------------------


@dataclass(frozen=True)
class VersionRun:
    #: The name of the database searched (an unregistered folder's: its table's).
    db_name: str
    version: int
    outcomes: tuple[CheckOutcome, ...]
    #: The database as the checks name it (:attr:`GoldenCheck.database`).
    database: CheckDatabase = ()
    #: Where the checks ran, in words (:func:`recall_gui.core.agents.check_places.place_text`).
    searched: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "db_name": self.db_name,
            "searched": self.searched or self.db_name,
            "version": self.version,
            "passed": sum(o.passed for o in self.outcomes),
            "failed": sum(not o.passed for o in self.outcomes),
            "metrics": _means(self.outcomes),
        }


@dataclass(frozen=True)
class VersionsReport:
    checks: tuple[GoldenCheck, ...]
    runs: tuple[VersionRun, ...]
    #: Checks whose database could not be used at all (by the check's index), with why.
    unusable: dict[int, str]

    def by_version(self, index: int) -> list[tuple[int, CheckOutcome]]:
        check = self.checks[index]
        return [
            (run.version, outcome)
            for run in self.runs
            if run.database == check.database
            for outcome in run.outcomes
            if outcome.check is check
        ]

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
                    "expected": [{"id": e.id, "rank": e.rank} for e in outcome.expected],
                    "metrics": None if outcome.metrics is None else outcome.metrics.to_dict(),
                    **({"error": outcome.error} if outcome.error is not None else {}),
                }
                for version, outcome in self.by_version(index)
            ]
            if index in self.unusable:
                data["error"] = self.unusable[index]
            checks.append(data)
        return {"versions": [run.to_dict() for run in self.runs], "checks": checks}


async def run_on_versions(harness: Harness, checks: Sequence[GoldenCheck]) -> VersionsReport:
    """Every check against every version of its database's table still on disk, oldest first."""
    runs: list[VersionRun] = []
    unusable: dict[int, str] = {}
    for database in dict.fromkeys(check.database for check in checks):
        mine = [(i, c) for i, c in enumerate(checks) if c.database == database]
        place = await locate(harness, mine[0][1])
        try:
            if place.entry is None:
                raise RecallError(place.error or "cannot be searched", hint=place.hint)
            entry = place.entry
            versions = await list_versions(harness.session, entry.target)
        except RecallError as error:
            unusable.update({i: error.message for i, _ in mine})
            continue
        for version in versions:
            at = None if version.latest else version.version
            outcomes = [
                await run_check_on(harness, check, entry, at, place.text, follow_pin=False)
                for _, check in mine
            ]
            runs.append(VersionRun(entry.name, version.version, tuple(outcomes), database, place.text))
    return VersionsReport(tuple(checks), tuple(runs), unusable)


# --- A/B ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    a: tuple[CheckOutcome, ...]
    b: tuple[CheckOutcome, ...]

    @property
    def unusable(self) -> tuple[tuple[int, str, CheckOutcome], ...]:
        """The checks a side could not run: (check number from 1, "A" or "B", that side's outcome)."""
        return tuple(
            (number, name, outcome)
            for number, pair in enumerate(zip(self.a, self.b, strict=True), start=1)
            for name, outcome in zip(("A", "B"), pair, strict=True)
            if outcome.error is not None
        )

    @property
    def regressed(self) -> bool:
        """Whether B misses an expected id that A found (among the checks both sides ran)."""
        for a, b in zip(self.a, self.b, strict=True):
            if a.error is not None or b.error is not None:
                continue
            found_a = {e.id for e in a.expected if e.rank is not None}
            found_b = {e.id for e in b.expected if e.rank is not None}
            if found_a - found_b:
                return True
        return False

    @property
    def shares_ids(self) -> bool:
        """Whether A's and B's results have any id in common (else they are hardly the same entries),
        among the checks both sides ran (none: nothing to say)."""
        ran = [(a, b) for a, b in zip(self.a, self.b, strict=True) if a.error is None and b.error is None]
        return not ran or any(set(a.results) & set(b.results) for a, b in ran)

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
                    "lost": [i for i in a.results if i not in set(b.results)] if ran else [],
                    "gained": [i for i in b.results if i not in set(a.results)] if ran else [],
                }
            )
        return {"a": {"metrics": _means(self.a)}, "b": {"metrics": _means(self.b)}, "checks": checks}


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
