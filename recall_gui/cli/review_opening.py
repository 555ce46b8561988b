"""What the ``review`` actions share: the options naming a database and its review file, and opening the
review they name."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from recall_gui import core
from recall_gui.cli.common import location, registry_option, report_error, warn_problems
from recall_gui.cli.databases import chosen_database, refuse_unclear
from recall_gui.cli.folder_options import add_path_options
from recall_gui.core.base import InvalidInputError
from recall_gui.core.registry import load_registry

if TYPE_CHECKING:
    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.review import Review
    from recall_gui.core.session import Session


def review_options(parser: argparse.ArgumentParser) -> None:
    """The database (``--db``, or ``--path`` with ``--table`` and ``--storage-option``), ``--registry``
    and the review ``--file``. No model is needed: nothing is embedded."""
    registry_option(parser)
    parser.add_argument("--db", metavar="NAME", help="name of a registered database (active or not)")
    add_path_options(parser, table_and_model=False)
    parser.add_argument("--table", metavar="NAME", help="the table, when PATH holds several")
    parser.set_defaults(model=None)
    parser.add_argument(
        "--file", metavar="FILE", help="the review file (default: the database's in the app's data folder)"
    )


async def open_review_of(session: Session, args: argparse.Namespace) -> Review:
    """The review of the database ``--db`` (or the table of ``--path``) at its latest version. A folder
    registered as a database is reviewed under that database's name, in its file; the damaged lines of
    the file are reported on stderr."""
    refuse_unclear(args, f"review {args.review_command}", registry_used=True)
    where = location(args)
    registry = load_registry(where.directory)
    if args.path is None:
        warn_problems(where, registry)
    entry: DatabaseEntry = await chosen_database(session, args, registry if args.path is None else None)
    if args.path is not None:
        scope = core.search.agent_scope_of(core.search.ViewScope(entry), registry)
        entry = scope.entry if scope.opened_as_registered else entry
    path = Path(args.file) if args.file else None
    if path is not None and args.review_command != "mark" and not path.exists():
        raise InvalidInputError(
            f"the review file {path} does not exist",
            hint="Check --file (a new file is made by `recall-gui review mark`).",
        )
    review = await core.review.open_review(session, entry, path=path, who=getattr(args, "who", None))
    for line in review.damaged:
        report_error(line.text(), level="warning")
    return review
