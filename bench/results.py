"""One shared writer for every metric group: the printed table and ``bench/results.json``.

``results.json`` maps each metric name to ``{"value", "unit", "floor", "ratio"}`` (plus any extra facts a
group records, such as recall), and ``"measured"``: the commit, date and machine of the run that measured
it. A run of some groups only (``--only``) replaces those groups' metrics and keeps the others, each with
the ``measured`` of its own run, so groups can be re-measured one at a time and every figure still says
where it comes from.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS_PATH = Path(__file__).resolve().parent / "results.json"


@dataclass(frozen=True)
class Metric:
    """One measured number beside its floor (what the same work costs at best, measured in the same run)."""

    name: str
    value: float
    unit: str
    floor: float | None = None
    #: The goal, as the printed table shows it (e.g. "ratio <= 2.0").
    goal: str = ""
    #: Whether the goal is met; ``None`` when the metric has no goal of its own.
    met: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.floor is None or self.floor <= 0:
            return None
        return self.value / self.floor

    def to_json(self) -> dict[str, Any]:
        ratio = self.ratio
        return {
            "value": round(self.value, 3),
            "unit": self.unit,
            "floor": None if self.floor is None else round(self.floor, 3),
            "ratio": None if ratio is None else round(ratio, 3),
            **({"goal": self.goal} if self.goal else {}),
            **({"met": self.met} if self.met is not None else {}),
            **self.extra,
        }


def source_commit(root: Path = RESULTS_PATH.parents[1]) -> str:
    """The commit the measured code is at; ``+changes`` when the work tree differs from it."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "HEAD") or "unknown"
    changed = git(
        "status", "--porcelain", "--untracked-files=no", "--", "recall_gui", "bench", "pyproject.toml"
    )
    return f"{commit}+changes" if changed else commit


def provenance(machine: dict[str, Any], commit: str | None = None, date: str | None = None) -> dict[str, Any]:
    """Where a run's figures come from: the commit, the date (UTC) and the machine."""
    return {
        "commit": commit if commit is not None else source_commit(),
        "date": date if date is not None else datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine,
    }


def write_results(metrics: list[Metric], measured: dict[str, Any], path: Path = RESULTS_PATH) -> None:
    """Merge ``metrics``, each marked with the run's ``measured`` (see :func:`provenance`), into ``path``;
    metrics of groups not run this time are kept as they are, with their own run's ``measured``."""
    existing: dict[str, Any] = {}
    if path.exists():
        try:
            existing = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            existing = {}
    merged = {metric.name: {**metric.to_json(), "measured": measured} for metric in metrics}
    for name, kept in existing.items():
        merged.setdefault(name, kept)
    path.write_text(json.dumps(merged, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def format_table(metrics: list[Metric]) -> str:
    """The results as a Markdown table, printed at the end of a run (docs/PERFORMANCE.md's table is
    :mod:`bench.report`'s, from ``results.json``)."""
    lines = [
        "| metric | value | floor | ratio | goal | met |",
        "|---|---|---|---|---|---|",
    ]
    for metric in metrics:
        ratio = metric.ratio
        met = "" if metric.met is None else ("yes" if metric.met else "**no**")
        lines.append(
            f"| `{metric.name}` | {number(metric.value)} {metric.unit} | "
            f"{number(metric.floor) + ' ' + metric.unit if metric.floor is not None else '-'} | "
            f"{f'{ratio:.2f}' if ratio is not None else '-'} | {metric.goal} | {met} |"
        )
    return "\n".join(lines)


def number(value: float | None) -> str:
    """A figure to about three significant digits, with thousands separated (``-`` for none)."""
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3g}"
