"""docs/PERFORMANCE.md is a reference that agrees with bench/results.json: every measured figure is in its
table as measured, with its date and machine, and every metric is described among the goals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench import report

ROOT = Path(__file__).resolve().parents[2]
RESULTS = json.loads((ROOT / "bench" / "results.json").read_text(encoding="utf-8"))
DOC = (ROOT / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")

MACHINE = {"cpus": 2, "cpu": "Intel(R) Xeon(R) Processor", "ram_gb": 23.5, "load_average": [0.4, 0.5, 0.6]}
SMALL_DOC = """# Performance

## Goals

| Goal | Metrics | How |
|---|---|---|
| Fast ≤ 2x the floor | `search_ms` (`load_ms`) | timed; the floor is NumPy's |
| Small | `memory_mb` | resident size |

## Latest figures

<!-- bench.report: start (python -m bench.report writes this table from bench/results.json) -->
an old table
<!-- bench.report: end -->

The end.
"""


def table_rows(doc: str) -> dict[str, list[str]]:
    """The generated table's rows by metric, read from the page as a reader reads it."""
    block = doc.split(report.START, 1)[1].split(report.END, 1)[0]
    rows = {}
    for line in block.strip().splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells
    return rows


def test_the_reference_is_what_the_report_makes_of_results_json() -> None:
    assert report.render(DOC, RESULTS) == DOC, "run python -m bench.report"


def test_every_figure_is_in_the_table_as_measured_with_its_date_and_machine() -> None:
    rows = table_rows(DOC)
    for name, figure in RESULTS.items():
        _metric, value, _floor, _ratio, goal, met, measured = rows[name]
        shown = float(value.split()[0].replace(",", ""))
        assert shown == pytest.approx(figure["value"], rel=0.01), name
        assert value.endswith(f" {figure['unit']}"), name
        assert measured.startswith(figure["measured"]["date"][:10]), name
        assert ("machine not recorded" in measured) == (figure["measured"]["machine"] is None), name
        if "goal" in figure:
            assert goal.replace("≤", "<=").replace("≥", ">=") == figure["goal"], name
        assert met == {True: "yes", False: "**no**", None: ""}[figure.get("met")], name


def test_every_metric_with_a_figure_is_described_among_the_goals() -> None:
    described = set(report.goal_metrics(DOC))
    assert sorted(set(RESULTS) - described) == []
    assert {"exact_search_100k", "map_layout_1m_s", "window_registry_50k_start"} <= described


def test_the_reference_stays_short() -> None:
    assert len(DOC.encode("utf-8")) <= 15 * 1024


def test_a_table_made_from_figures_follows_the_goals_and_says_what_is_not_measured() -> None:
    results = {
        "search_ms": {
            "value": 12.345,
            "unit": "ms",
            "floor": 6.0,
            "ratio": 2.0575,
            "goal": "ratio <= 2.0",
            "met": False,
            "measured": {"commit": "abc", "date": "2026-01-02T03:04:05+00:00", "machine": MACHINE},
        },
        "load_ms": {
            "value": 1234.5,
            "unit": "ms",
            "floor": None,
            "ratio": None,
            "measured": {"commit": "abc", "date": "2025-12-31T23:00:00+00:00", "machine": None},
        },
        "extra_s": {
            "value": 3.0,
            "unit": "s",
            "floor": None,
            "ratio": None,
            "measured": {"commit": "abc", "date": "2026-01-02T03:04:05+00:00", "machine": None},
        },
    }
    made = report.render(SMALL_DOC, results)
    assert made.split(report.START)[1].split(report.END)[0] == (
        "\n| metric | value | floor | ratio | goal | met | measured |\n"
        "|---|---|---|---|---|---|---|\n"
        "| `search_ms` | 12.3 ms | 6.00 ms | 2.06 | ratio ≤ 2.0 | **no** "
        "| 2026-01-02 · 2 × Intel Xeon, load 0.4 |\n"
        "| `load_ms` | 1,234 ms | - | - |  |  | 2025-12-31 · machine not recorded |\n"
        "| `memory_mb` | not stamped yet | | | | | |\n"
        "| `extra_s` | 3.00 s | - | - |  |  | 2026-01-02 · machine not recorded |\n"
    )
    before = SMALL_DOC.split(report.START, maxsplit=1)[0]
    assert made.startswith(before) and made.endswith(f"{report.END}\n\nThe end.\n")
    assert report.render(made, results) == made


def test_a_page_without_the_markers_is_refused() -> None:
    with pytest.raises(report.ReportError, match="markers"):
        report.render(SMALL_DOC.replace(report.END, ""), {})


def test_check_says_when_the_page_is_out_of_date_and_writing_mends_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc, results = tmp_path / "PERFORMANCE.md", tmp_path / "results.json"
    doc.write_text(SMALL_DOC, encoding="utf-8")
    results.write_text(json.dumps({}), encoding="utf-8")
    paths = ["--doc", str(doc), "--results", str(results)]
    assert report.main(["--check", *paths]) == 1
    assert "out of date" in capsys.readouterr().err
    assert doc.read_text(encoding="utf-8") == SMALL_DOC
    assert report.main(paths) == 0
    assert "| `search_ms` | not stamped yet |" in doc.read_text(encoding="utf-8")
    assert report.main(["--check", *paths]) == 0
    assert re.search(r"agrees with", capsys.readouterr().out)
