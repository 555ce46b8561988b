"""The last run of a golden file's checks, kept in the app's data dir so the next run can show what moved.

One small JSON file per golden file (named after a hash of its absolute path) under
``$RECALL_GUI_DATA_DIR/checks/last-runs/``: when it ran, and per check (database as the golden file names
it, query, limit, pinned version) whether
it passed and the rank of every expected id. Nothing is written beside the golden file or into a
knowledge base. A history file that cannot be read counts as no history.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from recall_gui.core.base.atomic import write_text_atomic
from recall_gui.core.base.paths import app_data_dir
from recall_gui.core.base.regular_files import read_regular
from recall_gui.core.base.types import GOLDEN_MAX_BYTES
from recall_gui.core.golden.checks import CheckOutcome, CheckRun
from recall_gui.core.golden.golden import CheckDatabase, CheckKey, VersionPin

Ranks = Mapping[str, int | None]


@dataclass(frozen=True)
class PastCheck:
    """One check as it went last time."""

    passed: bool
    ranks: Ranks
    error: str | None = None


@dataclass(frozen=True)
class LastRun:
    """A golden file's previous run."""

    ran_at: float
    checks: Mapping[CheckKey, PastCheck] = field(default_factory=dict)


@dataclass(frozen=True)
class Change:
    """How one check moved since the last run."""

    #: "new" (not in the last run), "same", "better", "worse", "moved" (some up, some down), "now passes",
    #: "now fails".
    kind: str
    #: Expected ids whose rank moved: ``(id, before, now)``.
    moved: tuple[tuple[str, int | None, int | None], ...] = ()

    @property
    def text(self) -> str:
        def rank(value: int | None) -> str:
            return "missing" if value is None else str(value)

        if self.kind in ("new", "same"):
            return "new check" if self.kind == "new" else "no change"
        moves = ", ".join(f"{entry_id} {rank(before)} → {rank(now)}" for entry_id, before, now in self.moved)
        return f"{self.kind}: {moves}" if moves else self.kind


def history_path(golden_path: Path) -> Path:
    """Where the last run of the golden file at ``golden_path`` is kept."""
    digest = hashlib.sha256(str(golden_path.expanduser().resolve()).encode("utf-8")).hexdigest()[:20]
    return app_data_dir() / "checks" / "last-runs" / f"{digest}.json"


def load_last_run(golden_path: Path) -> LastRun | None:
    """The previous run of ``golden_path``'s checks, or ``None`` (never run, or its record is unreadable)."""
    try:
        data = json.loads(read_regular(history_path(golden_path), GOLDEN_MAX_BYTES))
        checks = {
            (_database(item), str(item["query"]), int(item["limit"]), _pin(item)): PastCheck(
                bool(item["passed"]),
                {str(entry_id): (None if rank is None else int(rank)) for entry_id, rank in item["ranks"]},
                item.get("error"),
            )
            for item in data["checks"]
        }
        return LastRun(float(data["ran_at"]), checks)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _database(item: Mapping[str, object]) -> CheckDatabase:
    """A check's database as a run record names it (see :attr:`GoldenCheck.database`)."""
    if "uri" in item:
        return ("folder", str(item["uri"]), str(item["table"]))
    return ("name", str(item["db_name"]))


def _pin(item: Mapping[str, object]) -> str:
    """A check's pin as a run record names it (see :attr:`GoldenCheck.key`)."""
    if "tag" in item:
        return VersionPin(tag=str(item["tag"])).text
    return VersionPin(version=int(str(item["version"]))).text if "version" in item else ""


def save_run(golden_path: Path, run: CheckRun, ran_at: float | None = None) -> None:
    """Keep ``run`` as the last run of ``golden_path`` (atomically; a failure to write is not an error of
    the run: the caller may report it)."""
    data = {
        "file": str(golden_path.expanduser().resolve()),
        "ran_at": time.time() if ran_at is None else ran_at,
        "checks": [
            {
                **outcome.check.database_fields(),
                "query": outcome.check.query,
                "limit": outcome.check.limit,
                **outcome.check.pin_fields(),
                "passed": outcome.passed,
                "ranks": [[expected.key, expected.rank] for expected in outcome.expected],
                **({"error": outcome.error} if outcome.error is not None else {}),
            }
            for outcome in run.outcomes
        ],
    }
    write_text_atomic(history_path(golden_path), json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def change_since(outcome: CheckOutcome, last: LastRun | None) -> Change:
    """How ``outcome`` differs from the same check (database, query, limit) in ``last``."""
    past = last.checks.get(outcome.check.key) if last is not None else None
    if past is None:
        return Change("new")
    moved = tuple(
        (expected.key, past.ranks.get(expected.key), expected.rank)
        for expected in outcome.expected
        if expected.key in past.ranks and past.ranks[expected.key] != expected.rank
    )
    if outcome.passed != past.passed:
        return Change("now passes" if outcome.passed else "now fails", moved)
    if not moved:
        return Change("same")
    worse = [_worse(before, now) for _id, before, now in moved]
    return Change("worse" if all(worse) else "better" if not any(worse) else "moved", moved)


def _worse(before: int | None, now: int | None) -> bool:
    if now is None:
        return True
    return before is not None and now > before
