"""Golden checks on Ray: the checks of each database are one Ray task, which runs them through the very
code the local engine runs (:func:`recall_gui.core.golden.checks.run_checks` on a :class:`Harness` of the same
registry, then :func:`recall_gui.core.golden.shadowing.with_crowding`), so each check's outcome is the one a
local run gives. The outcomes come back in the file's order.

A task needs the registry folder and the databases at the same paths or URIs on its node, and the
embedding model (the packaged one, or one in the node's cache).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from recall_gui.core.base.errors import OperationCancelled, RecallError
from recall_gui.core.base.own_thread import on_own_thread
from recall_gui.core.golden.checks import CheckOutcome, CheckRun, run_checks
from recall_gui.core.golden.golden import GoldenCheck
from recall_gui.core.golden.shadowing import with_crowding
from recall_gui.core.ray.cluster import ray_running
from recall_gui.core.ray.connection import watched
from recall_gui.core.search.harness import Harness


class RayChecksError(RecallError):
    """The checks' Ray job failed (a node could not run its share)."""


def _run_share(registry_dir: str, checks: list[GoldenCheck]) -> list[CheckOutcome]:
    """One database's checks, on a Ray worker: a harness of the registry, the local engine's run."""

    async def share() -> list[CheckOutcome]:
        harness = Harness(Path(registry_dir))
        try:
            return list((await with_crowding(harness, await run_checks(harness, checks))).outcomes)
        finally:
            await harness.aclose()

    return asyncio.run(share())


async def run_checks_on_ray(
    registry_dir: Path,
    checks: Sequence[GoldenCheck],
    on_progress: Callable[[int, int], None] | None = None,
) -> CheckRun:
    """Every check, one Ray task per database, on the Ray this process is connected to
    (:func:`recall_gui.core.ray.cluster.ray_cluster`); ``on_progress(done, total)`` as each database's
    share finishes. Cancelling the awaiting task cancels the tasks still running."""
    shares: dict[str, list[int]] = {}
    for number, check in enumerate(checks):
        shares.setdefault(check.db_name or "", []).append(number)  # folder checks share one task
    loop = asyncio.get_running_loop()
    cancel = threading.Event()

    def progress(done: int) -> None:
        if on_progress is not None:
            loop.call_soon_threadsafe(on_progress, done, len(checks))

    run_all = functools.partial(
        _run_all, str(registry_dir), list(checks), list(shares.values()), progress, cancel
    )
    job = on_own_thread("recall-ray-job", watched, run_all, cancel, "the golden checks")
    try:
        outcomes = await asyncio.shield(job)
    except asyncio.CancelledError:
        cancel.set()
        job.add_done_callback(lambda done: done.cancelled() or done.exception())
        raise
    return CheckRun(tuple(outcomes[number] for number in range(len(checks))))


async def run_checks_in_ray(
    registry_dir: Path,
    checks: Sequence[GoldenCheck],
    on_progress: Callable[[int, int], None] | None = None,
    *,
    address: str | None = None,
) -> CheckRun:
    """:func:`run_checks_on_ray` with Ray started for it (or the cluster at ``address`` joined) and
    stopped after it, without blocking the event loop."""
    async with ray_running(address):
        return await run_checks_on_ray(registry_dir, checks, on_progress)


def _run_all(
    registry_dir: str,
    checks: list[GoldenCheck],
    shares: list[list[int]],
    progress: Callable[[int], None],
    cancel: threading.Event,
) -> dict[int, CheckOutcome]:
    """Start a task per share, and gather their outcomes as they finish (blocking)."""
    import ray

    task: Any = ray.remote(_run_share)
    pending = {
        task.options(num_cpus=1).remote(registry_dir, [checks[n] for n in numbers]): numbers
        for numbers in shares
    }
    outcomes: dict[int, CheckOutcome] = {}
    try:
        while pending:
            if cancel.is_set():
                raise OperationCancelled("the checks were cancelled")
            try:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
            except Exception as error:  # the connection to the cluster failed (Ray Client: lost)
                raise RayChecksError(
                    f"the Ray cluster could not be asked about the checks: {error}"
                ) from error
            for ref in ready:
                numbers = pending.pop(ref)
                try:
                    found = ray.get(ref)
                except Exception as error:  # a task's failure arrives wrapped by Ray
                    cause = getattr(error, "cause", None) or error
                    raise RayChecksError(
                        f"a Ray task could not run the checks of {checks[numbers[0]].db_name}: {cause}",
                        hint="Every Ray node needs recall-gui[scale], the registry folder and the "
                        "databases at the same paths.",
                    ) from error
                outcomes.update(zip(numbers, found, strict=True))
                progress(len(outcomes))
    finally:
        for ref in pending:
            ray.cancel(ref)
    return outcomes
