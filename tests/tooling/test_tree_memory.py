"""tests/tree_memory.py: the peak memory of a command's whole process tree."""

from __future__ import annotations

import fcntl
import sys
import threading
from pathlib import Path

import pytest

from tests.tree_memory import Peaks, main, measure
from tests.waiting import wait_until

MB = 2**20
#: A child that holds ``mb`` megabytes of its own (written, so resident) until it may take a shared lock on
#: the file it is given (the test holds the file's exclusive lock until it has seen the memory).
HOLDER = "import fcntl, sys; held = b'x' * ({mb} << 20); fcntl.flock(open(sys.argv[1]), fcntl.LOCK_SH)"


@pytest.mark.process
def test_the_memory_of_every_process_of_the_tree_is_summed(tmp_path: Path) -> None:
    release = tmp_path / "release"
    release.touch()
    parent = (
        "import subprocess, sys\n"
        f"holder = [sys.executable, '-c', {HOLDER.format(mb=150)!r}, {str(release)!r}]\n"
        "children = [subprocess.Popen(holder) for _ in range(2)]\n"
        "sys.exit(max(child.wait() for child in children))\n"
    )
    peaks = Peaks()
    ended: list[int] = []
    with release.open() as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        measuring = threading.Thread(
            target=lambda: ended.append(measure([sys.executable, "-c", parent], 0.05, peaks)[0])
        )
        measuring.start()
        # The two grandchildren's own pages, each counted once.
        wait_until(lambda: peaks.proportional >= 300 * MB, "both holders' memory is seen", timeout=60)
    measuring.join(60)
    assert ended == [0]
    assert peaks.resident >= peaks.proportional  # a shared page is in every resident size, in one PSS


@pytest.mark.process
def test_the_commands_exit_status_is_passed_on(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert "peak sum of proportional sizes:" in capsys.readouterr().err


def test_without_a_command_it_says_how_to_use_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert capsys.readouterr().err.startswith("usage: python -m tests.tree_memory COMMAND")
