"""The text of one golden check in full: its question, where it runs, each expected id's rank (and last
time's) and the ids the agent got; and how the page writes times and paths."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING

from recall_gui import core
from recall_gui.core.golden import folder_text
from recall_gui.qt.models.checks_model import rank_text

if TYPE_CHECKING:
    from recall_gui.core.golden import Change, CheckOutcome, GoldenCheck, LastRun


def when(timestamp: float) -> str:
    """A run's time as the page shows it (minutes, local time)."""
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


def shown_path(path: Path) -> str:
    """``path`` as the page shows it: under the home folder as ``~/…``."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def outcome_text(
    check: GoldenCheck,
    outcome: CheckOutcome | None,
    change: Change | None,
    last: LastRun | None,
    place: str = "",
) -> str:
    """The selected check in full: the question, where it runs (``place``), each expected id's rank (and
    last time's), and the ids the agent got, in order."""
    place = place or check.named
    lines = [f"{json.dumps(check.query, ensure_ascii=False)} in {place}, limit {check.limit}"]
    if check.folder is not None:
        lines.append(
            f"The check names the {folder_text(check.folder)}: it runs on the registered database that "
            "reads that table, or on the folder until it is registered."
        )
    if outcome is None:
        lines += ["", "Not run yet. Expected:", *(f"  {wanted}" for wanted in check.expect_text.split(", "))]
        return "\n".join(lines)
    if outcome.searched and outcome.searched != place:
        lines.append(f"The last run searched {outcome.searched}.")
    if outcome.error is not None:
        lines += ["", f"Could not run: {outcome.error}"]
        if outcome.hint:
            lines.append(outcome.hint)
        return "\n".join(lines)
    past = last.checks.get(check.key) if last is not None else None
    width = max(len(expected.label) for expected in outcome.expected)
    lines += ["", "Expected:"]
    for expected in outcome.expected:
        before = ""
        if past is not None and expected.key in past.ranks:
            before = f"   (last run: {rank_text(past.ranks[expected.key])})"
        lines.append(f"  {expected.label.ljust(width)}  rank {rank_text(expected.rank)}{before}")
    metrics = outcome.metrics
    if metrics is not None:
        lines += [
            "",
            f"Recall {metrics.recall:.3f} · reciprocal rank {metrics.reciprocal_rank:.3f} · nDCG "
            f"{metrics.ndcg:.3f} (limit {check.limit}, "
            + (
                outcome.searched
                if check.pin is not None
                else f"the latest version of {outcome.searched or place}"
            )
            + ")",
        ]
    if outcome.near_copies:
        lines += ["", f"Pushed out? {core.golden.crowding_text(outcome.near_copies)}"]
    if change is not None:
        lines += ["", f"Since the last run: {change.text}"]
    taken = {expected.rank for expected in outcome.expected if expected.rank is not None}
    lines += ["", f"The agent got ({len(outcome.results)}):"]
    lines += [
        f"  {rank:>3}. {found}{'   ← expected' if rank in taken else ''}"
        for rank, found in enumerate(outcome.result_labels, start=1)
    ]
    said = outcome.repeats.sentence()
    if said is not None:
        lines += ["", said[0].upper() + said[1:] + "."]
    return "\n".join(lines)
