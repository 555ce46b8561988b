"""``recall-gui tool``: the MCP tool object an agent gets now."""

from __future__ import annotations

import argparse
from typing import Any

from recall_gui.cli.common import location, registry_option, warn, warn_problems, write_stdout
from recall_gui.core.registry import SuffixStore, load_registry, served_tool

NAME = "tool"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="print the MCP tool object an agent would get now",
        description="Print the recall_search tool (name, description, input schema) as an MCP client "
        "gets it from `recall-gui mcp` now.",
    )
    registry_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    where = location(args)
    registry = load_registry(where.directory)
    # Printed all the same (it is what agents get now), but a script must see that the registry is broken.
    broken = warn_problems(where, registry)
    served = served_tool(registry, SuffixStore())
    warn(served.warnings())
    write_stdout(served.tool.to_json() + "\n")
    return 1 if broken else 0
