"""One shared writer for every metric group: the printed table and ``bench/results.json``.

``results.json`` maps each metric name to ``{"value", "unit", "floor", "ratio"}`` (plus any extra facts a
group records, such as recall). A run of some groups only (``--only``) replaces those groups' metrics and
keeps the others, so groups can be re-measured one at a time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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


def write_results(metrics: list[Metric], path: Path = RESULTS_PATH) -> None:
    """Merge ``metrics`` into ``path`` (metrics of groups not run this time are kept)."""
    existing: dict[str, Any] = {}
    if path.exists():
        try:
            existing = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            existing = {}
    merged = {metric.name: metric.to_json() for metric in metrics}
    for name, measured in existing.items():
        merged.setdefault(name, measured)
    path.write_text(json.dumps(merged, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def format_table(metrics: list[Metric]) -> str:
    """The results as a Markdown table (printed, and pasted into docs/PERFORMANCE.md)."""
    lines = [
        "| metric | value | floor | ratio | goal | met |",
        "|---|---|---|---|---|---|",
    ]
    for metric in metrics:
        ratio = metric.ratio
        met = "" if metric.met is None else ("yes" if metric.met else "**no**")
        lines.append(
            f"| `{metric.name}` | {_number(metric.value)} {metric.unit} | "
            f"{_number(metric.floor) + ' ' + metric.unit if metric.floor is not None else '-'} | "
            f"{f'{ratio:.2f}' if ratio is not None else '-'} | {metric.goal} | {met} |"
        )
    return "\n".join(lines)


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"
