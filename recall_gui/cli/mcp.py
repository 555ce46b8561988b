"""``recall-gui mcp``: the MCP server on stdin/stdout."""

from __future__ import annotations

import argparse
from typing import Any

from recall_gui.cli.common import location, registry_option, warn_problems

NAME = "mcp"


def add_to(commands: Any) -> None:
    description = (
        "Serve recall_search to an MCP client over stdin/stdout, exactly as `recall-gui tool` prints it; "
        "a call returns exactly what `recall-gui search` prints. The server only reads."
    )
    parser = commands.add_parser(
        NAME, help="serve recall_search to MCP clients over stdio", description=description
    )
    registry_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from recall_gui.mcp import server as mcp_server

    where = location(args)
    warn_problems(where)
    mcp_server.run(where.directory, source=where.source)
    return 0
