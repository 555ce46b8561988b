"""``recall-gui similar``: the entries nearest to one entry's stored vector ("more like this")."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from recall_gui import core
from recall_gui.cli.common import location, registry_option, say, write_stdout
from recall_gui.cli.databases import entry_named, entry_options, refuse_unclear
from recall_gui.cli.search import limit_from_text

NAME = "similar"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="list the entries most like one entry (searched with its stored vector)",
        description="Search a database with one entry's stored vector, through the search an agent's "
        "query takes, and print the results as `search` does, each with its distance. The entry itself "
        "comes first, at distance ~0. Any registered database can be inspected, active or not, and so "
        "can a table of an unregistered folder (--path).",
    )
    registry_option(parser)
    entry_options(parser, "number of results (default 5)")
    parser.set_defaults(run=run)


async def _similar(args: argparse.Namespace) -> str:
    harness = core.search.Harness(location(args).directory)
    try:
        limit = limit_from_text(args.limit)
        entry, found = await entry_named(harness, args, "searching with")
        report = await core.search.more_like(harness, entry, found.hit, limit, found.label)
        repeats = await harness.session.tables.id_repeats(entry.target)
        said = repeats.sentence()
        if said is not None:
            say(f"note: {said}")
        return core.search.similar_json(report, repeats)
    finally:
        await harness.aclose()


def run(args: argparse.Namespace) -> int:
    refuse_unclear(args, NAME)
    write_stdout(asyncio.run(_similar(args)) + "\n")
    return 0
