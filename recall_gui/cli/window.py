"""``recall-gui`` without a command: the window."""

from __future__ import annotations

import argparse

from recall_gui.cli.common import chosen_registry


def add_options(parser: argparse.ArgumentParser) -> None:
    # For packagers and CI: open the window, check that it works (shown, started, takes typed input,
    # searches, lists the tool through its MCP server), then quit with 0 or 1. See recall_gui/qt/smoke.py.
    parser.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from recall_gui.qt.app import run_app

    return int(run_app(registry_dir=chosen_registry(args), smoke=args.smoke))
