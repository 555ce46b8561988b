"""``recall-gui demo``: build (or rebuild) the demo knowledge base."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from recall_gui.cli.common import chosen_registry, registry_option, write_stdout
from recall_gui.core.paths import REGISTRY_ENV, app_registry_dir

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
    from recall_gui.core.demo import build_demo

    explicit = chosen_registry(args) or os.environ.get(REGISTRY_ENV, "").strip() or None
    registry_dir = Path(explicit).expanduser() if explicit else app_registry_dir()

    def progress(done: int, total: int) -> None:
        print(f"\rembedding passages: {done}/{total}", end="", file=sys.stderr, flush=True)

    path = build_demo(registry_dir, progress=progress)
    print(file=sys.stderr)
    write_stdout(f"demo knowledge base: {path}\nregistered in: {registry_dir}\n")
    return 0
