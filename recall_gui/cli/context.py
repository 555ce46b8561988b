"""``recall-gui context --id ID``: the chunk's document, every chunk in order (what came before and after)."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import escaped_lines, location, registry_option, say, write_stdout
from recall_gui.cli.databases import chosen_database, database_options, refuse_unclear
from recall_gui.core.base import json_text

if TYPE_CHECKING:
    from recall_gui.core.search import Document

NAME = "context"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="show the document a chunk belongs to, its chunks in order",
        description="Find the document of one entry (a chunk) — by a column such as source, doc_id, file, "
        "path or url, else by the id's part before #, : or _chunk — and print its chunks in order (by a "
        "column such as chunk_index, position or page, else by the number in the id). A table of whole "
        "documents under one shared id (as cosh writes them) shows the entry alone. Each chunk the model "
        "does not read whole says how much of it the model reads.",
    )
    registry_option(parser)
    database_options(parser)
    parser.add_argument(
        "--id",
        required=True,
        metavar="ID",
        help="the chunk's id (where rows share an id: ID·<hex digits of its content's sha256>, as results "
        "name it)",
    )
    parser.add_argument("--document-column", metavar="COLUMN", help="the column naming a chunk's document")
    parser.add_argument("--position-column", metavar="COLUMN", help="the column ordering a document's chunks")
    parser.add_argument("--json", action="store_true", help="print the document as JSON")
    parser.set_defaults(run=run)


async def _document(args: argparse.Namespace) -> Document:
    harness = core.search.Harness(location(args).directory)
    try:
        entry = await chosen_database(harness.session, args, harness.registry)
        return await core.search.document_of(
            harness.session,
            entry,
            args.id,
            document_column=args.document_column,
            position_column=args.position_column,
            with_reading=True,
        )
    finally:
        await harness.aclose()


def run(args: argparse.Namespace) -> int:
    refuse_unclear(args, NAME)
    document = asyncio.run(_document(args))
    say(document.layout.describe())  # the table's column names
    if args.json:
        write_stdout(json_text(document.to_dict(), indent=2, ensure_ascii=False) + "\n")
        return 0
    said = document.repeats.sentence()
    if said is not None:
        say(f"note: {said}")
    lines = [f"document {document.key} ({len(document.chunks)} chunks)"]
    names = document.names()
    for number, (_chunk_id, content) in enumerate(document.chunks):
        marker = ">" if number == document.at else " "
        lines.append(f"{marker} {names[number]}: {content}")
        if document.reading and document.reading[number].truncated:
            lines.append(f"  ({document.reading[number].describe()})")
    write_stdout(escaped_lines(lines) + "\n")  # the document's name, ids and contents: the table's
    return 0
