"""``recall-gui`` without a command: the window, on the registry or on a folder (``recall-gui PATH``)."""

from __future__ import annotations

import argparse
from collections.abc import Collection, Sequence

from recall_gui.cli.common import chosen_registry, storage_option_arg, storage_options
from recall_gui.core.base import InvalidInputError


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--open",
        metavar="PATH",
        dest="open_path",
        help="open the window on this LanceDB folder or object-store URI (s3://bucket/prefix), read-only "
        "and without registering it; `recall-gui PATH` does the same",
    )
    storage_option_arg(parser, dest="open_storage_option")
    # For packagers and CI: open the window, check that it works (shown, started, takes typed input,
    # searches, lists the tool through its MCP server), then quit with 0 or 1. See recall_gui/qt/smoke.py.
    parser.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)


#: The options before a command's name that take a value (``--registry DIR``, ``--open PATH`` ...).
VALUE_OPTIONS = frozenset({"--registry", "--open", "--storage-option"})


def path_as_open(commands: Collection[str], argv: Sequence[str]) -> list[str]:
    """``recall-gui PATH`` as ``recall-gui --open PATH``: the first word that is neither an option, an
    option's value nor one of ``commands`` names the folder (argparse cannot mix such a word with
    commands)."""
    words = list(argv)
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            return [*words[:index], "--open", *words[index + 1 : index + 2], *words[index + 2 :]]
        if word.startswith("-") and word != "-":
            index += 2 if word in VALUE_OPTIONS else 1
            continue
        if word in commands:
            return words
        return [*words[:index], "--open", word, *words[index + 1 :]]
    return words


def refuse_misplaced(args: argparse.Namespace) -> None:
    """``--open`` and its storage options belong to the window: refused beside a command, never ignored."""
    opening = args.open_path is not None
    if opening and args.command is not None:
        raise InvalidInputError(
            f"--open opens the window; it cannot be combined with the {args.command} command",
            hint=f"Use `recall-gui {args.command} --path PATH` to work on a folder without the window.",
        )
    if args.open_storage_option and not opening:
        raise InvalidInputError(
            "--storage-option before a command's name is for the folder the window opens, and none is given",
            hint="Commands that read a folder (search, list, register) take it after their name; "
            "the window takes it with the folder: recall-gui URI --storage-option KEY=VALUE.",
        )


def run(args: argparse.Namespace) -> int:
    from recall_gui.qt.app import run_app

    opening = None
    if args.open_path is not None:
        opening = (args.open_path, storage_options(args.open_storage_option))
    return int(run_app(registry_dir=chosen_registry(args), smoke=args.smoke, open_path=opening))
