"""``recall-gui activate NAME`` and ``recall-gui deactivate NAME``: whether agents may search a registered
database (its name in ``rag_active.json``)."""

from __future__ import annotations

import argparse
from typing import Any

from recall_gui.cli.common import location, registry_option, write_stdout
from recall_gui.core.base import ACTIVE_FILE, printable
from recall_gui.core.registry import change_active


class ActivationCommand:
    """One of the two commands: ``active`` says which."""

    def __init__(self, name: str, active: bool) -> None:
        self.NAME = name
        self.active = active

    def add_to(self, commands: Any) -> None:
        verb = "let agents search" if self.active else "stop agents searching"
        parser = commands.add_parser(
            self.NAME,
            help=f"{verb} a registered database",
            description=f"{verb.capitalize()} a database of the registry ({ACTIVE_FILE}), keeping every "
            "other entry as it is. Refused (exit 1) when the registry lists no database of that name; the "
            "knowledge base itself is never touched.",
        )
        registry_option(parser)
        parser.add_argument("name", metavar="NAME", help="the database's name, as `recall-gui list` shows it")
        parser.set_defaults(run=self.run)

    def run(self, args: argparse.Namespace) -> int:
        path = location(args).directory / ACTIVE_FILE
        before = change_active(path.parent, args.name, self.active)
        changed = (before is not None) != self.active
        state = "active: agents can search it" if self.active else "inactive: agents cannot search it"
        if changed:
            write_stdout(printable(f'"{args.name}" is now {state} ({path})') + "\n")
        else:
            write_stdout(printable(f'"{args.name}" was already {state}; {path} is unchanged') + "\n")
        return 0


activate = ActivationCommand("activate", True)
deactivate = ActivationCommand("deactivate", False)
