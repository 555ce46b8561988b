"""Running golden checks: each check's question through the agent's own search, judged on what it returns.

A check asks the harness exactly what an agent's ``recall_search`` call would ask (``{db_name, query,
limit}``, the database resolved among the active ones) and reads the ids out of the very JSON the agent
would receive. It passes when every expected id is among them. A check whose database cannot be searched
(unknown, inactive, unreadable, its model unavailable) has an error instead of a verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from recall_gui.core.batched_checks import run_batch
from recall_gui.core.errors import RecallError
from recall_gui.core.golden import GoldenCheck
from recall_gui.core.harness import Harness
from recall_gui.core.retrieval_metrics import CheckMetrics, MeanMetrics, check_metrics, mean_metrics
from recall_gui.core.types import RecallOutput


@dataclass(frozen=True)
class ExpectedRank:
    """An expected id and its rank among the results (1 is first), ``None`` when it is missing."""

    id: str
    rank: int | None


@dataclass(frozen=True)
class CheckOutcome:
    """What one check found: the result ids in the agent's order, or why it could not run."""

    check: GoldenCheck
    results: tuple[str, ...] = ()
    #: Why the check could not run (its database is unusable); ``None`` when it ran.
    error: str | None = None
    hint: str | None = None
    #: For a check that missed an expected id: near-copies among its results, which take places.
    near_copies: tuple[tuple[str, ...], ...] = ()

    @property
    def expected(self) -> tuple[ExpectedRank, ...]:
        first: dict[str, int] = {}
        for rank, found in enumerate(self.results, start=1):
            first.setdefault(found, rank)
        return tuple(ExpectedRank(wanted, first.get(wanted)) for wanted in self.check.expect)

    @property
    def passed(self) -> bool:
        return self.error is None and all(expected.rank is not None for expected in self.expected)

    @property
    def metrics(self) -> CheckMetrics | None:
        """Recall, reciprocal rank and nDCG of the agent's results; ``None`` when the check could not run."""
        if self.error is not None:
            return None
        return check_metrics([expected.rank for expected in self.expected], self.check.limit)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "db_name": self.check.db_name,
            "query": self.check.query,
            "limit": self.check.limit,
            "passed": self.passed,
            "expected": [{"id": expected.id, "rank": expected.rank} for expected in self.expected],
            "results": list(self.results),
        }
        metrics = self.metrics
        if metrics is not None:
            data["metrics"] = metrics.to_dict()
        if self.near_copies:
            data["near_copies"] = [list(group) for group in self.near_copies]
        if self.error is not None:
            data["error"] = self.error
        return data


@dataclass(frozen=True)
class CheckRun:
    """The outcomes of a file's checks, in the file's order."""

    outcomes: tuple[CheckOutcome, ...]

    @property
    def passed(self) -> int:
        return sum(outcome.passed for outcome in self.outcomes)

    @property
    def errors(self) -> int:
        return sum(outcome.error is not None for outcome in self.outcomes)

    @property
    def failed(self) -> int:
        """Checks that ran and missed an expected id (checks that could not run are :attr:`errors`)."""
        return len(self.outcomes) - self.passed - self.errors

    @property
    def metrics(self) -> MeanMetrics | None:
        """The means over the checks that ran; ``None`` when none did."""
        return mean_metrics([m for m in (o.metrics for o in self.outcomes) if m is not None])

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"passed": self.passed, "failed": self.failed}
        if self.errors:
            data["errors"] = self.errors
        metrics = self.metrics
        data["metrics"] = None if metrics is None else metrics.to_dict()
        data["checks"] = [outcome.to_dict() for outcome in self.outcomes]
        return data


async def run_check(harness: Harness, check: GoldenCheck) -> CheckOutcome:
    """One check, judged on the JSON text the agent would receive for its arguments."""
    try:
        payload = await harness.recall_search(check.arguments())
    except RecallError as error:
        return CheckOutcome(check, error=error.message, hint=error.hint)
    output = RecallOutput.from_json(payload)
    return CheckOutcome(check, tuple(entry.id for entry in output.results))


#: Checks ranked in one pass at most: progress is reported, and a cancel honoured, between passes.
BATCH_CHECKS = 64


async def run_checks(
    harness: Harness,
    checks: Sequence[GoldenCheck],
    on_progress: Callable[[int, int], None] | None = None,
) -> CheckRun:
    """Every check; ``on_progress(done, total)`` as they finish. The checks of one database whose vectors
    are in memory share one pass over them (:func:`recall_gui.core.batched_checks.run_batch`); the others
    run one search each. Cancelling the awaiting task stops the run (the search in flight with it)."""
    outcomes: dict[int, CheckOutcome] = {}

    def done(number: int, outcome: CheckOutcome) -> None:
        outcomes[number] = outcome
        if on_progress is not None:
            on_progress(len(outcomes), len(checks))

    by_database: dict[str, list[int]] = {}
    for number, check in enumerate(checks):
        by_database.setdefault(check.db_name, []).append(number)
    chunks = [
        numbers[start : start + BATCH_CHECKS]
        for numbers in by_database.values()
        for start in range(0, len(numbers), BATCH_CHECKS)
    ]
    for numbers in chunks:
        batch = await run_batch(harness, [checks[number] for number in numbers])
        for number, ids in zip(numbers, batch or [None] * len(numbers), strict=True):
            check = checks[number]
            done(number, CheckOutcome(check, ids) if ids is not None else await run_check(harness, check))
    return CheckRun(tuple(outcomes[number] for number in range(len(checks))))
