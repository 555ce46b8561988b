"""The `recall-gui` command: no arguments opens the window; sub-commands work headless.

Each command is a module of this package with ``add_to(commands)`` (its parser, with ``run`` as its
default) and ``run(args) -> int``; :data:`COMMANDS` lists them in the order ``--help`` shows them.
Expected failures print the message (and what to do) on stderr and exit 1, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from recall_gui import __version__
from recall_gui.cli import (
    activation,
    check,
    compare,
    context,
    demo,
    diff,
    duplicates,
    health,
    hubs,
    listing,
    log,
    mcp,
    models,
    rank,
    reach,
    register,
    review,
    search,
    shadowing,
    similar,
    tool,
    unregister,
    versions,
    window,
)
from recall_gui.cli.common import registry_option, report_error
from recall_gui.core.base import RecallError

COMMANDS = (
    search,
    tool,
    listing,
    register,
    activation.activate,
    activation.deactivate,
    unregister,
    versions,
    diff,
    demo,
    models,
    mcp,
    log,
    check,
    compare,
    similar,
    rank,
    duplicates,
    hubs,
    reach,
    health,
    context,
    shadowing,
    review,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recall-gui",
        description="Browse, search and verify the LanceDB knowledge bases your agents recall from. "
        "Without a command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"recall-gui {__version__}")
    registry_option(parser, top_level=True)
    window.add_options(parser)
    parser.set_defaults(run=window.run)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_to(commands)
    return parser


def command_names() -> frozenset[str]:
    return frozenset(command.NAME for command in COMMANDS)


def main(argv: Sequence[str] | None = None) -> int:
    from recall_gui.runtime import configure_process

    configure_process()
    words = window.path_as_open(command_names(), sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(words)
    try:
        window.refuse_misplaced(args)
        return int(args.run(args))
    except RecallError as error:
        report_error(error.message, error.hint)
        return 1
    except OSError as error:  # a folder that cannot be written (demo), a full disk: no traceback
        report_error(str(error))
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
