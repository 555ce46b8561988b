"""``python -m bench.report``: docs/PERFORMANCE.md's table of latest figures, from ``bench/results.json``.

The reference's *Goals* section (written by hand) names each metric in backticks; this writes, between
the markers below, one row per metric in that order: its value, floor, ratio and verdict, and the date and
machine ``results.json`` says it was measured on. A metric of the goals with no figure yet is listed as not
stamped; a figure whose metric the goals do not name comes last, so nothing measured is hidden (a test
then asks for its description). ``make bench`` runs it after writing the results; ``--check`` only says
whether the file is up to date (exit 1 when not).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.results import RESULTS_PATH, number

DOC_PATH = Path(__file__).resolve().parents[1] / "docs" / "PERFORMANCE.md"
START = "<!-- bench.report: start (python -m bench.report writes this table from bench/results.json) -->"
END = "<!-- bench.report: end -->"
#: The hand-written section whose backticked names are the metrics, in the order the table lists them.
GOALS_HEADING = "## Goals"

_METRIC = re.compile(r"`([a-z][a-z0-9_]*)`")
_CPU_NOISE = re.compile(r"\((?:R|TM)\)|\s+(?:Processor|CPU)\b")


class ReportError(Exception):
    """The reference cannot take the table (a marker or the goals section is missing)."""


def goal_metrics(doc: str) -> list[str]:
    """The metrics the *Goals* section names, in order, each once (its table's second column)."""
    start = doc.find(f"\n{GOALS_HEADING}\n")
    if start < 0:
        raise ReportError(f"no '{GOALS_HEADING}' section")
    section = doc[start + 1 :]
    following = section.find("\n## ")
    section = section if following < 0 else section[:following]
    names: list[str] = []
    for line in section.splitlines():
        cells = line.split("|")
        if len(cells) < 4 or not line.startswith("|"):
            continue
        for name in _METRIC.findall(cells[2]):
            if name not in names:
                names.append(name)
    return names


def measured_on(figure: Mapping[str, Any]) -> str:
    """When and where: ``2026-12-04 · 2 × AMD EPYC, load 0.29``; the machine said to be unrecorded."""
    measured = figure.get("measured") or {}
    date = str(measured.get("date") or "no date")[:10]
    machine = measured.get("machine")
    if not machine:
        return f"{date} · machine not recorded"
    cpu = " ".join(_CPU_NOISE.sub("", str(machine.get("cpu", "?"))).split())
    load = machine.get("load_average")
    said = f"{machine.get('cpus', '?')} × {cpu}"
    return f"{date} · {said}, load {load[0]:g}" if load else f"{date} · {said}"


def figure_row(name: str, figure: Mapping[str, Any] | None) -> str:
    if figure is None:
        return f"| `{name}` | not stamped yet | | | | | |"
    unit = figure.get("unit", "")
    value, floor, ratio = figure.get("value"), figure.get("floor"), figure.get("ratio")
    goal = str(figure.get("goal", "")).replace("<=", "≤").replace(">=", "≥")
    met = {True: "yes", False: "**no**"}.get(figure.get("met"), "")
    return (
        f"| `{name}` | {number(value)} {unit} | {'-' if floor is None else f'{number(floor)} {unit}'} | "
        f"{'-' if ratio is None else f'{ratio:.2f}'} | {goal} | {met} | {measured_on(figure)} |"
    )


def figures_table(results: Mapping[str, Mapping[str, Any]], order: Sequence[str]) -> str:
    """One row per metric of ``order``, then the figures ``order`` leaves out, in ``results``' order."""
    names = [*order, *(name for name in results if name not in order)]
    lines = ["| metric | value | floor | ratio | goal | met | measured |", "|---|---|---|---|---|---|---|"]
    lines += [figure_row(name, results.get(name)) for name in names]
    return "\n".join(lines)


def render(doc: str, results: Mapping[str, Mapping[str, Any]]) -> str:
    """``doc`` with the table between the markers made anew from ``results``."""
    head, marker, rest = doc.partition(START)
    if not marker or END not in rest:
        raise ReportError(f"the markers {START!r} and {END!r} are not both there")
    tail = rest[rest.index(END) :]
    return f"{head}{START}\n{figures_table(results, goal_metrics(doc))}\n{tail}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__)
    parser.add_argument("--check", action="store_true", help="only say whether the reference is up to date")
    parser.add_argument("--doc", type=Path, default=DOC_PATH, help=argparse.SUPPRESS)
    parser.add_argument("--results", type=Path, default=RESULTS_PATH, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    doc = args.doc.read_text(encoding="utf-8")
    results = json.loads(args.results.read_text(encoding="utf-8"))
    try:
        made = render(doc, results)
    except ReportError as error:
        print(f"{args.doc}: {error}", file=sys.stderr)
        return 2
    if made == doc:
        print(f"{args.doc} agrees with {args.results}")
        return 0
    if args.check:
        print(f"{args.doc} is out of date: run python -m bench.report", file=sys.stderr)
        return 1
    args.doc.write_text(made, encoding="utf-8")
    print(f"{args.doc}: table written from {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
