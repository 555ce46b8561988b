"""Running golden checks: each check's question through the agent's own search, judged on what it returns.

A check asks the harness exactly what an agent's ``recall_search`` call would ask (``{db_name, query,
limit}``, the database resolved among the active ones) and reads the ids out of the very JSON the agent
would receive. A check made on a folder runs where :mod:`recall_gui.core.golden.check_places` says: the
registered database reading its table, or the folder until there is one. It passes when every expected
entry is among them, each answered by a result of its own (:mod:`recall_gui.core.golden.expected`); one
that expects an id several rows share is refused unless it allows that. A check whose database cannot be
searched (unknown, inactive, unreadable, its model unavailable) has an error instead of a verdict. A
check pinned to a version or tag (:class:`recall_gui.core.golden.golden.VersionPin`) runs the same pipeline
on that version, read-only; a pin that is no longer on disk is that check's error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from recall_gui.core.base.errors import RecallError
from recall_gui.core.base.types import RecallOutput
from recall_gui.core.embedders.base import ModelInfo
from recall_gui.core.golden.batched_checks import run_batch
from recall_gui.core.golden.check_places import CheckPlace, locate
from recall_gui.core.golden.expected import SHARED_ID_HINT, ExpectedRank, expected_ranks, shared_id_refusal
from recall_gui.core.golden.golden import GoldenCheck
from recall_gui.core.golden.pins import pinned_version
from recall_gui.core.golden.retrieval_metrics import CheckMetrics, MeanMetrics, check_metrics, mean_metrics
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness, model_of
from recall_gui.core.storage.content_identity import content_sha256
from recall_gui.core.storage.entry_names import IdRepeats


@dataclass(frozen=True)
class CheckOutcome:
    """What one check found: the result ids in the agent's order, or why it could not run."""

    check: GoldenCheck
    results: tuple[str, ...] = ()
    #: Why the check could not run (its database is unusable); ``None`` when it ran.
    error: str | None = None
    hint: str | None = None
    #: Where it ran (or would have), in words: the database's name, or the folder (not registered).
    searched: str = ""
    #: For a check that missed an expected id: near-copies among its results, which take places.
    near_copies: tuple[tuple[str, ...], ...] = ()
    #: What embedded its query (exact, or a stand-in that may rank otherwise than the agent's model).
    model: ModelInfo | None = None
    #: The sha256 of each result's content, in the order of ``results``.
    result_sha256: tuple[str, ...] = ()
    #: The ids several rows of the table searched share (none: every entry is named by its id).
    repeats: IdRepeats = field(default_factory=IdRepeats)

    @property
    def expected(self) -> tuple[ExpectedRank, ...]:
        """Each expected entry's rank, one result per expectation (:func:`expected_ranks`)."""
        return expected_ranks(self.check.expect, self.results, self.result_sha256)

    @property
    def result_labels(self) -> tuple[str, ...]:
        """The results as lines name them: ids, or ``content·3f2a9c1e`` where the id is shared."""
        shas = self.result_sha256 or ("",) * len(self.results)
        return tuple(self.repeats.label(i, sha) for i, sha in zip(self.results, shas, strict=True))

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
        data: dict[str, Any] = self.check.database_fields()
        data |= {
            "searched": self.searched or self.check.named,
            "query": self.check.query,
            "limit": self.check.limit,
            **self.check.pin_fields(),
            "passed": self.passed,
            "expected": [expected.to_dict() for expected in self.expected],
            "results": self._results_json(),
        }
        if self.repeats:
            data["ids_repeat"] = self.repeats.to_dict()
        metrics = self.metrics
        if metrics is not None:
            data["metrics"] = metrics.to_dict()
        if self.near_copies:
            data["near_copies"] = [list(group) for group in self.near_copies]
        if self.error is not None:
            data["error"] = self.error
        if self.model is not None:
            data["model"] = self.model.to_json()
        return data

    def _results_json(self) -> list[Any]:
        """The result ids, or where ids repeat each result's id and content sha256."""
        if not self.repeats:
            return list(self.results)
        return [
            {"id": found, "content_sha256": sha}
            for found, sha in zip(self.results, self.result_sha256, strict=True)
        ]


def judged(
    check: GoldenCheck,
    ids: Sequence[str],
    contents: Sequence[str],
    repeats: IdRepeats,
    *,
    searched: str,
    model: ModelInfo | None,
) -> CheckOutcome:
    """``check`` judged on the results (their ids and contents, nearest first) of the table whose shared
    ids are ``repeats``; a check that expects a shared id is refused (an error), unless it allows it."""
    shas = tuple(content_sha256(content) for content in contents)
    found = CheckOutcome(
        check, tuple(ids), searched=searched, model=model, result_sha256=shas, repeats=repeats
    )
    refused = shared_id_refusal(check.expect, repeats, check.ids_may_repeat)
    return found if refused is None else replace(found, error=refused, hint=SHARED_ID_HINT)


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


async def run_check_on(
    harness: Harness,
    check: GoldenCheck,
    entry: DatabaseEntry,
    version: int | None = None,
    searched: str = "",
    *,
    follow_pin: bool = True,
) -> CheckOutcome:
    """``check`` searched in ``entry`` as the agent's pipeline searches: at ``version`` when given, else at
    the check's pin (unless ``follow_pin`` is false), else the latest; ``searched`` says where, in words."""
    try:
        if version is None and follow_pin and check.pin is not None:
            searched = f"{searched} at {check.pin.text}"
            version = await pinned_version(harness.session, entry, check.pin)
            if check.pin.tag is not None:
                searched += f" (version {version})"
        report = await harness.search_database(entry, check.query, check.limit, version=version)
        repeats = await harness.session.tables.id_repeats(entry.target.at(version))
    except RecallError as error:
        return CheckOutcome(check, error=error.message, hint=error.hint, searched=searched)
    hits = report.result.hits
    return judged(
        check,
        [hit.id for hit in hits],
        [hit.content for hit in hits],
        repeats,
        searched=searched,
        model=report.model,
    )


async def run_check(harness: Harness, check: GoldenCheck, place: CheckPlace | None = None) -> CheckOutcome:
    """One check, judged on the JSON text the agent would receive for its arguments (a folder no agent
    can search yet: the same JSON, of the same search; a pinned check: the same search at its version);
    ``place``: where it runs, if known already."""
    place = place if place is not None else await locate(harness, check)
    if place.entry is None:
        return CheckOutcome(check, error=place.error, hint=place.hint, searched=place.text)
    if check.pin is not None:
        return await run_check_on(harness, check, place.entry, searched=place.text)
    try:
        if place.agent_name is not None:
            payload = await harness.recall_search(check.arguments(place.agent_name))
        else:
            report = await harness.search_database(place.entry, check.query, check.limit)
            payload = report.to_json()
        repeats = await harness.session.tables.id_repeats(place.entry.target)
    except RecallError as error:
        return CheckOutcome(check, error=error.message, hint=error.hint, searched=place.text)
    output = RecallOutput.from_json(payload)
    return judged(
        check,
        [entry.id for entry in output.results],
        [entry.content for entry in output.results],
        repeats,
        searched=place.text,
        model=model_of(harness, place.entry),
    )


#: Checks ranked in one pass at most: progress is reported, and a cancel honoured, between passes.
BATCH_CHECKS = 64


async def run_checks(
    harness: Harness,
    checks: Sequence[GoldenCheck],
    on_progress: Callable[[int, int], None] | None = None,
) -> CheckRun:
    """Every check; ``on_progress(done, total)`` as they finish. The checks of one database whose vectors
    are in memory share one pass over them (:func:`recall_gui.core.golden.batched_checks.run_batch`); the
    others, and pinned checks, run one search each. Cancelling the awaiting task stops the run (the search
    in flight with it)."""
    outcomes: dict[int, CheckOutcome] = {}

    def done(number: int, outcome: CheckOutcome) -> None:
        outcomes[number] = outcome
        if on_progress is not None:
            on_progress(len(outcomes), len(checks))

    places: dict[tuple[str, ...], CheckPlace] = {}
    by_database: dict[tuple[str, ...], list[int]] = {}
    for number, check in enumerate(checks):
        if check.database not in places:
            places[check.database] = await locate(harness, check)
        if check.pin is None:
            by_database.setdefault(check.database, []).append(number)
    for number, check in enumerate(checks):
        if check.pin is not None:
            done(number, await run_check(harness, check, places[check.database]))
    chunks = [
        (places[database], numbers[start : start + BATCH_CHECKS])
        for database, numbers in by_database.items()
        for start in range(0, len(numbers), BATCH_CHECKS)
    ]
    for place, numbers in chunks:
        batch = None
        if place.entry is not None:
            batch = await run_batch(harness, place.entry, [checks[number] for number in numbers])
        for number, found in zip(numbers, batch or [None] * len(numbers), strict=True):
            check = checks[number]
            if found is None:
                done(number, await run_check(harness, check, place))
                continue
            ids, contents, repeats = found
            model = model_of(harness, place.entry)
            done(number, judged(check, ids, contents, repeats, searched=place.text, model=model))
    return CheckRun(tuple(outcomes[number] for number in range(len(checks))))
