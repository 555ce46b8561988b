"""Running the golden checks through the agent's search — on this process's harness or on Ray — and the
runs beside it: every version of each table, an A/B comparison, the hubs among the results. A run's ranks
are kept for the next one to compare with; the outcome goes to the page's table, note and views."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QComboBox, QLabel, QProgressBar

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.core.messages import UserMessage
from recall_gui.core.ray import window_address
from recall_gui.qt.models.checks_model import ChecksModel
from recall_gui.qt.pages.checks.outcome import when
from recall_gui.qt.panels.check_views import CompareView, HubsView, VersionsView
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.golden import Change, CheckRun, Comparison, GoldenCheck, LastRun, VersionsReport
    from recall_gui.core.reach import CheckHubs
    from recall_gui.core.search import Harness
    from recall_gui.qt.operations import Lane

T = TypeVar("T")


class CheckRunner:
    """Runs the checks of the page's golden file and shows what came of it."""

    def __init__(
        self,
        services: WindowServices,
        model: ChecksModel,
        *,
        note: StatusNote,
        progress: QProgressBar,
        engine: QComboBox,
        views: tuple[VersionsView, CompareView, HubsView],
        lane: Lane,
        show_detail: Callable[[], None],
        finished: SignalInstance,
    ) -> None:
        """``lane``: where the page's runs go (one at a time: a newer one cancels the one running)."""
        self.services = services
        self.lane = lane
        self.golden = services.golden
        self.model = model
        self.note, self.progress, self.engine = note, progress, engine
        self.versions_view, self.compare_view, self.hubs_view = views
        self._show_detail = show_detail
        self._finished = finished
        self.last_run: CheckRun | None = None
        #: The run before the last one, which the last one was compared with.
        self.previous: LastRun | None = None

    def forget(self) -> None:
        """Another golden file: no run of it yet."""
        self.last_run, self.previous = None, None
        self.model.set_outcomes((), ())

    def run_checks(self) -> asyncio.Task[bool] | None:
        """Run every check of the golden file through the agent's search; show pass/fail, the ranks and
        what moved since the last run, then keep this run for the next one to compare with."""
        golden, services, progress = self.golden, self.services, self.progress
        checks, path = golden.checks, golden.path
        if not checks:
            return None
        progress.setRange(0, len(checks))
        progress.setValue(0)
        progress.setFormat(f"%v of {len(checks)} checks")
        self.note.show_note(f"Running {len(checks):,} checks…", "neutral")
        services.set_activity("Running golden checks…")
        started = time.perf_counter()

        async def run(on_progress: Callable[[int, int], None]) -> tuple[CheckRun, LastRun | None]:
            previous = core.golden.load_last_run(path)
            harness = await services.harness()
            return await self._engine_run(harness, checks, on_progress), previous

        def failed(error: RecallError) -> None:  # the Ray engine could not start (the local one: per check)
            self.note.show_note(error.full_text(), "bad")
            services.set_activity("Ready")
            self._finished.emit()

        def cancelled() -> None:
            self.note.show_note(
                f"Cancelled after {progress.value()} of {len(checks)} checks; nothing was kept.", "warning"
            )
            services.set_activity("Golden checks cancelled")
            self._finished.emit()

        return self.lane.run(
            run,
            progress=lambda done, _total: progress.setValue(done),
            busy="Running golden checks…",
            success=lambda outcome: self._show_run(outcome[0], outcome[1], time.perf_counter() - started),
            failure=failed,
            cancelled=cancelled,
        )

    def _show_run(self, run: CheckRun, previous: LastRun | None, elapsed: float) -> None:
        services, path = self.services, self.golden.path
        changes = tuple(core.golden.change_since(outcome, previous) for outcome in run.outcomes)
        self.last_run, self.previous = run, previous
        self.model.set_outcomes(run.outcomes, changes)
        self._show_detail()
        try:
            core.golden.save_run(path, run)
        except OSError as error:
            services.show_message(
                UserMessage(
                    f"This run's ranks could not be kept for the next run to compare with: {error}",
                    "Check that the app's data folder can be written.",
                    "warning",
                )
            )
        self._show_summary(run, changes, previous, elapsed)
        services.set_activity(f"Golden checks: {run.passed} of {len(run.outcomes)} passed")
        self._finished.emit()

    async def _engine_run(
        self, harness: Harness, checks: Sequence[GoldenCheck], progress: Callable[[int, int], None]
    ) -> CheckRun:
        """The checks on the engine chosen: this process's harness, or Ray."""
        if self.engine.currentData() != "ray":
            return await core.golden.with_crowding(
                harness, await core.golden.run_checks(harness, checks, progress)
            )

        return await core.ray.run_checks_in_ray(
            harness.registry_dir, checks, progress, address=window_address()
        )

    def _show_summary(
        self, run: CheckRun, changes: tuple[Change, ...], previous: LastRun | None, elapsed: float
    ) -> None:
        parts = [f"{run.passed} passed", f"{run.failed} failed"]
        if run.errors:
            parts.append(f"{run.errors} could not run")
        count = len(run.outcomes)
        text = f"Ran {count:,} check{'s' if count != 1 else ''} in {elapsed:.1f} s: {', '.join(parts)}."
        if previous is not None:
            moved = sum(change.kind not in ("same", "new") for change in changes)
            text += f" Since the run of {when(previous.ran_at)}: {moved or 'nothing'} changed."
        means = run.metrics
        if means is not None:
            text += f" Means: {means.describe()}, each at its check's limit on the latest version."
        self.note.show_note(text, "good" if run.failed == 0 and run.errors == 0 else "bad")

    def run_on_versions(self) -> asyncio.Task[bool] | None:
        """Every check on every version of its table still on disk (read-only checkouts), charted."""
        checks = self.golden.checks
        if not checks:
            return None
        self.versions_view.note.setText(f"Running {len(checks):,} checks on every version…")

        async def run() -> VersionsReport:
            harness = await self.services.harness()
            return await core.golden.run_on_versions(harness, checks, progress=self.versions_view)

        return self._in_view(
            self.versions_view.note, "The run on every version", run, self.versions_view.show_report
        )

    def compare(self, version: int | None = None, other: str | None = None) -> asyncio.Task[bool] | None:
        """A/B: A is each check's database at ``version`` (or its latest), B the latest (or ``other``)."""
        checks = self.golden.checks
        entry = self.services.registry.get(other) if other is not None else None
        if not checks or (other is not None and entry is None):
            return None
        self.compare_view.note.setText(f"Comparing {len(checks):,} checks…")

        async def run() -> Comparison:
            harness = await self.services.harness()
            return await core.golden.compare_checks(harness, checks, version=version, other=entry)

        def show(comparison: Comparison) -> None:
            a_label = f"version {version}" if version is not None else "each check's database, latest"
            b_label = "the latest version" if other is None else f"{other}, latest, with its own model"
            self.compare_view.show_comparison(comparison, a_label, b_label)

        return self._in_view(self.compare_view.note, "The comparison", run, show)

    def find_hubs(self) -> asyncio.Task[bool] | None:
        """The entries the agent's search returns for many of the file's queries, per database."""
        checks = self.golden.checks
        if not checks:
            return None
        self.hubs_view.note.setText(f"Searching {len(checks):,} queries as the agent does…")

        def progress(done: int, total: int) -> None:
            self.hubs_view.note.setText(f"Searched {done:,} of {total:,} queries…")

        async def run(on_progress: Callable[[int, int], None]) -> tuple[CheckHubs, ...]:
            return await core.reach.hubs_of_checks(await self.services.harness(), checks, on_progress)

        def show(found: tuple[CheckHubs, ...]) -> None:
            self.hubs_view.show_hubs(found, core.reach.DEFAULT_HUB_SHARE)

        return self._in_view(
            self.hubs_view.note, "The search for hubs", functools.partial(run, progress), show
        )

    def _in_view(
        self, note: QLabel, what: str, work: Callable[[], Awaitable[T]], show: Callable[[T], None]
    ) -> asyncio.Task[bool]:
        """Run ``work`` in the page's lane and ``show`` what it found; when it fails or is cancelled, the
        view's ``note`` says so, as the page's note does for a run of the checks."""

        def shown(found: T) -> None:
            show(found)
            self._finished.emit()

        def failed(error: RecallError) -> None:
            note.setText(f"{what} failed: {error.full_text()}")
            self._finished.emit()

        def cancelled() -> None:
            note.setText(f"{what} was cancelled before it finished.")
            self._finished.emit()

        return self.lane.run(work, busy=f"{what}…", success=shown, failure=failed, cancelled=cancelled)
