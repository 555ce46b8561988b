"""tests/tree_memory.py: the peak memory of a command's whole process tree."""

from __future__ import annotations

import sys

import pytest

from tests.tree_memory import main, measure

MB = 2**20
#: A child that holds ``MB`` megabytes of its own (written, so resident) for a second, then ends.
HOLDER = "import time; held = b'x' * ({mb} << 20); time.sleep(1.0)"


@pytest.mark.process
def test_the_memory_of_every_process_of_the_tree_is_summed() -> None:
    parent = (
        "import subprocess, sys\n"
        f"holder = [sys.executable, '-c', {HOLDER.format(mb=150)!r}]\n"
        "children = [subprocess.Popen(holder) for _ in range(2)]\n"
        "sys.exit(max(child.wait() for child in children))\n"
    )
    status, peaks = measure([sys.executable, "-c", parent], interval_s=0.05)
    assert status == 0
    assert peaks.proportional >= 300 * MB  # the two grandchildren's own pages, each counted once
    assert peaks.resident >= peaks.proportional  # a shared page is in every resident size, in one PSS


@pytest.mark.process
def test_the_commands_exit_status_is_passed_on(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert "peak sum of proportional sizes:" in capsys.readouterr().err


def test_without_a_command_it_says_how_to_use_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert capsys.readouterr().err.startswith("usage: python -m tests.tree_memory COMMAND")
