"""``recall-gui shadowing QUERY``: which of the agent's results are near-copies of each other, and how many
distinct entries it really gets."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import escaped_lines, location, registry_option, write_stdout
from recall_gui.cli.databases import chosen_database, refuse_unclear
from recall_gui.cli.duplicates import threshold_from_text
from recall_gui.cli.folder_options import add_path_options
from recall_gui.cli.model_notes import note_stand_ins, with_model
from recall_gui.cli.search import limit_from_text
from recall_gui.core.base import DEFAULT_LIMIT, json_text
from recall_gui.core.inspect import DEFAULT_THRESHOLDS, METRICS

if TYPE_CHECKING:
    from recall_gui.core.embedders import ModelInfo
    from recall_gui.core.golden import Shadowing

NAME = "shadowing"


def add_to(commands: Any) -> None:
    defaults = ", ".join(f"{metric} {value}" for metric, value in DEFAULT_THRESHOLDS.items())
    parser = commands.add_parser(
        NAME,
        help="near-copies among the agent's results: how many distinct entries it really gets",
        description="Run the agent's search for QUERY and group the results whose stored vectors lie within "
        f"the near-duplicate threshold of each other (as `duplicates` does; defaults: {defaults}).",
    )
    registry_option(parser)
    parser.add_argument("--db", metavar="NAME", help="an active database, as the agent names it")
    add_path_options(parser)
    parser.add_argument("--limit", default=str(DEFAULT_LIMIT), metavar="K", help="results (default 5)")
    parser.add_argument("--threshold", metavar="T", help="the distance within which results are near-copies")
    parser.add_argument("--metric", choices=METRICS, default="cosine", help="cosine (default) or squared l2")
    parser.add_argument("--json", action="store_true", help="print the results, groups and distinct count")
    parser.add_argument("query", help="the search text")
    parser.set_defaults(run=run)


async def _shadowing(args: argparse.Namespace) -> tuple[Shadowing, ModelInfo | None]:
    harness = core.search.Harness(location(args).directory)
    try:
        if args.path is None:
            entry = harness.resolve_active(args.db)  # the agent's results: an active database by name
        else:
            entry = await chosen_database(harness.session, args, None)
        found = await core.golden.find_shadowing(
            harness,
            entry,
            args.query,
            limit_from_text(args.limit),
            threshold=threshold_from_text(args.threshold),
            metric=args.metric,
        )
        return found, core.search.model_of(harness, entry)
    finally:
        await harness.aclose()


def format_shadowing(found: Shadowing) -> str:
    lines = [f"{len(found.hits)} results, {found.distinct} distinct entries"]
    for group in found.groups:
        lines.append(f"near-copies ({found.metric} within {found.threshold:g}): {', '.join(group)}")
    said = found.repeats.sentence()
    return escaped_lines(lines if said is None else [*lines, f"note: {said}"])  # the ids come from the table


def run(args: argparse.Namespace) -> int:
    refuse_unclear(args, NAME)
    found, model = asyncio.run(_shadowing(args))
    note_stand_ins([model])
    text = json_text(with_model(found.to_dict(), model), indent=2) if args.json else format_shadowing(found)
    write_stdout(text + "\n")
    return 0
