"""Run a command and print the peak memory of its process tree (``python -m tests.tree_memory make test``).

Three figures, sampled every half second over the command and every process it starts:
- the sum of the processes' resident sizes (a library mapped by two processes counted twice);
- the sum of their proportional sizes (PSS: each shared page divided among the processes that map it),
  the memory the run holds;
- the fall in the machine's available memory since the command started (other programs' use included).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import psutil

INTERVAL_S = 0.5


@dataclass
class Peaks:
    """The highest of each figure seen so far, in bytes."""

    resident: int = 0
    proportional: int = 0
    available_fall: int = 0

    def lines(self) -> list[str]:
        return [
            f"peak sum of resident sizes:     {self.resident / 2**30:.2f} GiB",
            f"peak sum of proportional sizes: {self.proportional / 2**30:.2f} GiB",
            f"peak fall in available memory:  {self.available_fall / 2**30:.2f} GiB",
        ]


def available() -> int:
    return int(psutil.virtual_memory().available)


def sample(root: psutil.Process, peaks: Peaks, available_at_start: int) -> None:
    """One look at the tree under ``root``, raising ``peaks`` where it is higher."""
    resident = proportional = 0
    try:
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return
    for process in processes:
        try:
            memory = process.memory_full_info()
        except psutil.Error:
            continue
        resident += memory.rss
        proportional += getattr(memory, "pss", 0)  # only Linux reports it
    peaks.resident = max(peaks.resident, resident)
    peaks.proportional = max(peaks.proportional, proportional)
    peaks.available_fall = max(peaks.available_fall, available_at_start - available())


def measure(
    command: list[str], interval_s: float = INTERVAL_S, peaks: Peaks | None = None
) -> tuple[int, Peaks]:
    """Run ``command`` to its end; its exit status and the peaks of its tree (raised in ``peaks`` as they
    are seen, when given)."""
    peaks = peaks if peaks is not None else Peaks()
    at_start = available()
    started = subprocess.Popen(command)
    root = psutil.Process(started.pid)
    while True:
        sample(root, peaks, at_start)
        try:
            return started.wait(timeout=interval_s), peaks
        except subprocess.TimeoutExpired:
            continue


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m tests.tree_memory COMMAND [ARGUMENTS...]", file=sys.stderr)
        return 2
    status, peaks = measure(argv)
    print("\n".join(peaks.lines()), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
