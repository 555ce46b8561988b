"""``recall-gui demo``: build (or rebuild) the demo knowledge base."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from recall_gui import core
from recall_gui.cli.common import chosen_registry, registry_option, write_stdout
from recall_gui.core.base import folder_problem, resolve_registry_dir
from recall_gui.core.registry import location_problem

NAME = "demo"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="build (or rebuild) the demo knowledge base",
        description="Build the demo knowledge base (Python's help topics, embedded with the packaged "
        "model) in the app's data folder and register it in the app's own registry.",
    )
    registry_option(
        parser, help="register the demo here instead of in the app's own registry (never in cosh's)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    where = resolve_registry_dir(chosen_registry(args), for_demo=True)
    registry_dir = where.directory
    wrong_folder = location_problem(where)
    if wrong_folder is not None and folder_problem(registry_dir) != "does not exist":
        raise wrong_folder  # before embedding for a minute: a folder that does not exist yet is made

    progress = Progress(sys.stderr, "embedding passages")
    path = core.demo.build_demo(registry_dir, progress=progress)
    progress.end()
    write_stdout(f"demo knowledge base: {path}\nregistered in: {registry_dir}\n")
    return 0


class Progress:
    """``done/total`` on stderr: redrawn in place on a terminal, as a few plain lines anywhere else (a
    pipe or a log keeps no carriage returns)."""

    #: Lines written when the output is not a terminal: at every tenth of the work.
    STEPS = 10

    def __init__(self, stream: TextIO, what: str) -> None:
        self.stream = stream
        self.what = what
        self.on_terminal = stream.isatty()
        self._shown = -1
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        if self.on_terminal:
            print(f"\r{self.what}: {done}/{total}", end="", file=self.stream, flush=True)
            self._drawn = True
            return
        step = self.STEPS if done >= total else done * self.STEPS // max(total, 1)
        if step > self._shown:
            self._shown = step
            print(f"{self.what}: {done}/{total}", file=self.stream, flush=True)

    def end(self) -> None:
        if self._drawn:
            print(file=self.stream)
