"""``recall-gui demo`` draws its progress in place on a terminal only: a pipe or a log gets a few plain
lines, never carriage returns."""

from __future__ import annotations

import io

from recall_gui.cli.demo import Progress
from tests.conftest import DemoBuild


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_gets_a_few_plain_lines(demo_build: DemoBuild) -> None:
    """The demo fixture ran ``recall-gui demo`` with its stderr piped."""
    assert "\r" not in demo_build.stderr
    lines = [line for line in demo_build.stderr.splitlines() if line.startswith("embedding passages: ")]
    assert 2 <= len(lines) <= Progress.STEPS + 1
    done, total = lines[-1].removeprefix("embedding passages: ").split("/")
    assert done == total and int(total) > 100


def test_a_terminal_gets_one_line_redrawn() -> None:
    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        progress = Progress(stream, "embedding passages")
        for done in range(0, 101):
            progress(done, 100)
        progress.end()
    assert terminal.getvalue().count("\r") == 101 and terminal.getvalue().endswith("100/100\n")
    assert pipe.getvalue().splitlines() == [f"embedding passages: {n}/100" for n in range(0, 101, 10)]
