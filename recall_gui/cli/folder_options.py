"""The options of the commands that work on an unregistered folder: ``--path``, ``--table``, ``--model``
and ``--storage-option``; an option typed without ``--path`` is refused, never ignored."""

from __future__ import annotations

import argparse

from recall_gui.cli.common import storage_option_arg, storage_options
from recall_gui.core.base import InvalidInputError


def add_path_options(parser: argparse.ArgumentParser, *, table_and_model: bool = True) -> None:
    parser.add_argument(
        "--path",
        metavar="PATH",
        help="a LanceDB folder or object-store URI (s3://bucket/prefix), read without registering it",
    )
    if table_and_model:
        parser.add_argument("--table", metavar="NAME", help="the table, when PATH holds several")
        parser.add_argument(
            "--model",
            metavar="MODEL",
            help="the model to embed with (default: the one the table names, else the local model of its "
            "width): a cosh name (AllMiniLML6V2), a Hugging Face id, or provider/model "
            "(openai/text-embedding-3-small)",
        )
    storage_option_arg(parser)


def refuse_without_path(args: argparse.Namespace) -> None:
    """``--table``, ``--model`` and ``--storage-option`` only mean something with ``--path``."""
    if args.path is not None:
        return
    given = [
        option
        for option, value in (
            ("--table", getattr(args, "table", None)),
            ("--model", getattr(args, "model", None)),
            ("--storage-option", args.storage_option),
        )
        if value
    ]
    if given:
        raise InvalidInputError(
            f"{', '.join(given)} only apply to a folder given with --path",
            hint="Add --path PATH, or leave them out for the registry's databases.",
        )


def path_storage(args: argparse.Namespace) -> dict[str, str]:
    return storage_options(args.storage_option)
