"""The files the exact model stands on: the shipped encoder graph is what `packaging/minilm_graph.py`
builds, and the stand-in agreement the app and docs quote is the one `make bench` measured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recall_gui.core.embedders.model_sources import INT8_AGREEMENT

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.process
def test_the_shipped_graph_is_what_the_builder_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "minilm_graph.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "up to date" in done.stdout


def test_the_quoted_stand_in_agreement_is_the_measured_one() -> None:
    measured = json.loads((ROOT / "bench" / "results.json").read_text(encoding="utf-8"))[
        "standin_top5_agreement"
    ]
    same_list, same_set, same_first = measured["value"], measured["same_set_pct"], measured["same_first_pct"]
    quoted = INT8_AGREEMENT["AllMiniLML6V2"]
    assert f"for {same_list:.0f}% of {measured['questions']} questions" in quoted
    assert f"in any order for {same_set:.0f}%" in quoted and f"first result for {same_first:.0f}%" in quoted
    models_doc = (ROOT / "docs" / "MODELS.md").read_text(encoding="utf-8")
    assert f"| {same_list:.1f}% | {same_set:.1f}% | {same_first:.1f}% |" in models_doc
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"top 5 for only {same_list:.0f}% of realistic" in readme
