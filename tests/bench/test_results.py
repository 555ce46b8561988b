"""bench/results.json: every figure says the commit, date and machine it was measured on, and a run of some
groups keeps the other figures with their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.results import Metric, provenance, write_results

MACHINE = {"cpus": 2, "cpu": "a test CPU", "ram_gb": 24.0}


def test_each_figure_keeps_the_run_it_was_measured_in(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    first = provenance(MACHINE, commit="aaaa", date="2026-01-01T00:00:00+00:00")
    write_results([Metric("search_ms", 10.0, "ms", 5.0), Metric("load_ms", 3.0, "ms")], first, path)
    second = provenance({**MACHINE, "cpus": 8}, commit="bbbb", date="2026-02-01T00:00:00+00:00")
    write_results([Metric("search_ms", 8.0, "ms", 4.0)], second, path)

    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["search_ms"] == {
        "value": 8.0,
        "unit": "ms",
        "floor": 4.0,
        "ratio": 2.0,
        "measured": {
            "commit": "bbbb",
            "date": "2026-02-01T00:00:00+00:00",
            "machine": {**MACHINE, "cpus": 8},
        },
    }
    assert written["load_ms"]["value"] == 3.0
    assert written["load_ms"]["measured"] == {
        "commit": "aaaa",
        "date": "2026-01-01T00:00:00+00:00",
        "machine": MACHINE,
    }


@pytest.mark.process
def test_a_run_names_its_commit_and_a_date_in_utc() -> None:
    measured = provenance(MACHINE)
    commit = measured["commit"].removesuffix("+changes")
    assert len(commit) == 40 and all(c in "0123456789abcdef" for c in commit)
    assert measured["date"].endswith("+00:00")
    assert measured["machine"] == MACHINE
