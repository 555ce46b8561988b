"""The modules held at full coverage stay there: ``python -m tests.check_coverage [coverage.json]``.

Reads coverage.py's JSON report of a whole run (``make test`` writes it) and the list of modules that every
line and every branch of must run (tests/full_coverage.txt). Fails, naming them, when a listed module has
lost a line or a branch, when a listed module is gone (moved: update the list), and when a module not on
the list has reached full coverage (add it, so that it is held there too), as qutebrowser's
scripts/dev/check_coverage.py does. A module marked ``~`` (its coverage varies with the timing of threads)
is neither held nor named when full.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = Path(__file__).with_name("full_coverage.txt")
REPORT = ROOT / "coverage.json"


@dataclass(frozen=True)
class ModuleCoverage:
    """One module's coverage: statements and branches, and how many of each ran."""

    path: str
    statements: int
    missing_lines: tuple[int, ...]
    branches: int
    missing_branches: tuple[tuple[int, int], ...]

    @property
    def full(self) -> bool:
        return not self.missing_lines and not self.missing_branches

    def shortfall(self) -> str:
        """What did not run, as ``path: lines 3, 7; branches 10->12``."""
        parts = []
        if self.missing_lines:
            parts.append("lines " + ", ".join(str(line) for line in self.missing_lines))
        if self.missing_branches:
            parts.append("branches " + ", ".join(_branch(pair) for pair in self.missing_branches))
        return f"{self.path}: {'; '.join(parts)}"


def _branch(pair: tuple[int, int]) -> str:
    start, end = pair
    return f"{start}->{'exit' if end < 0 else end}"


def read_report(report: dict[str, object]) -> dict[str, ModuleCoverage]:
    """Each measured module of coverage.py's JSON report (format 3), by its path from the repository."""
    files = report.get("files")
    if not isinstance(files, dict):
        raise ValueError("not a coverage.py JSON report: it has no 'files'")
    modules = {}
    for path, data in files.items():
        summary, posix = data["summary"], Path(path).as_posix()
        modules[posix] = ModuleCoverage(
            posix,
            int(summary["num_statements"]),
            tuple(data["missing_lines"]),
            int(summary.get("num_branches", 0)),
            tuple((int(a), int(b)) for a, b in data.get("missing_branches", ())),
        )
    return modules


def _entries(text: str) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


def read_list(text: str) -> list[str]:
    """The module paths held at full coverage: the list's lines, without comments, blank lines and the
    modules marked ``~``."""
    return [line for line in _entries(text) if not line.startswith("~")]


def read_varying(text: str) -> list[str]:
    """The modules marked ``~ path``: their coverage varies from run to run with the timing of threads (a
    job that ends before or after a cancel), so they are neither held nor named when full."""
    return [line[1:].strip() for line in _entries(text) if line.startswith("~")]


def problems(modules: dict[str, ModuleCoverage], listed: list[str], varying: Sequence[str] = ()) -> list[str]:
    """Every way the report and the list disagree, as sentences; empty when they agree."""
    found = []
    for path in listed:
        module = modules.get(path)
        if module is None:
            found.append(f"{path} is on {LIST.name} but was not measured (moved or removed? update the list)")
        elif not module.full:
            found.append(f"{module.shortfall()} did not run: it is held at full coverage ({LIST.name})")
    for path in varying:
        if path not in modules:
            found.append(f"{path} is marked ~ on {LIST.name} but was not measured (moved or removed?)")
    for path, module in sorted(modules.items()):
        if path not in listed and path not in varying and module.full and module.statements > 0:
            found.append(f"{path} is fully covered now: add it to {LIST.name} so it stays so")
    return found


def main(argv: list[str]) -> int:
    report_path = Path(argv[0]) if argv else REPORT
    modules = read_report(json.loads(report_path.read_text(encoding="utf-8")))
    text = LIST.read_text(encoding="utf-8")
    listed = read_list(text)
    found = problems(modules, listed, read_varying(text))
    for line in found:
        print(f"check_coverage: {line}", file=sys.stderr)
    if not found:
        print(f"check_coverage: the {len(listed)} modules of {LIST.name} are fully covered, and no other is")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
