"""What the commands share: the ``--registry`` option, and how they print results and errors."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from recall_gui.core.base import (
    REGISTRY_ENV,
    InvalidInputError,
    RegistryLocation,
    masked,
    printable,
    printable_lines,
    resolve_registry_dir,
)
from recall_gui.core.registry import Registry, SuffixStore, load_registry, location_problem, served_tool

if TYPE_CHECKING:
    from recall_gui.core.registry import SuffixWarning

#: Where ``--registry`` given before the command lands (after it: ``registry``), so neither hides the other.
TOP_LEVEL_REGISTRY = "registry_before_command"


def registry_option(
    parser: argparse.ArgumentParser, *, top_level: bool = False, help: str | None = None
) -> None:
    parser.add_argument(
        "--registry",
        metavar="DIR",
        dest=TOP_LEVEL_REGISTRY if top_level else "registry",
        # A command's own option must not reset one given before the command.
        default=None if top_level else argparse.SUPPRESS,
        help=help or f"registry directory (default: ${REGISTRY_ENV}, else cosh's, else the app's own)",
    )


def chosen_registry(args: argparse.Namespace) -> str | None:
    """The ``--registry`` the user typed, before or after the command; refuses an empty one, or two
    different ones."""
    before = getattr(args, TOP_LEVEL_REGISTRY, None)
    after = getattr(args, "registry", None)
    for value in (before, after):
        if value is not None and not value.strip():
            raise InvalidInputError(
                "--registry was given an empty folder name",
                hint="Name the registry folder, or leave --registry out to use the default.",
            )
    if before is not None and after is not None and before != after:
        raise InvalidInputError(
            f"--registry was given twice with different folders ({before!r} and {after!r})",
            hint="Give it once.",
        )
    return after if after is not None else before


def location(args: argparse.Namespace) -> RegistryLocation:
    return resolve_registry_dir(chosen_registry(args))


def warn_problems(
    where: RegistryLocation, registry: Registry | None = None, *, level: str = "warning"
) -> bool:
    """Say on stderr what is wrong with the registry: its folder, else each problem of its files.
    Returns whether anything was."""
    wrong_folder = location_problem(where)
    if wrong_folder is not None:
        report_error(wrong_folder.message, wrong_folder.hint, level=level)
        return True
    problems = (registry or load_registry(where.directory)).problems
    for problem in problems:
        print(f"{level}: {printable(masked(str(problem)))}", file=sys.stderr)
    return bool(problems)


def warn_suffix(where: RegistryLocation) -> None:
    """What agents are told about the databases, when it is not what the user meant."""
    warn(served_tool(load_registry(where.directory), SuffixStore()).warnings())


def warn(warnings: Sequence[SuffixWarning]) -> None:
    for warning in warnings:
        report_error(warning.message, warning.hint, level="warning")


def report_error(message: str, hint: str | None = None, *, level: str = "error") -> None:
    """A message on stderr, its control characters escaped (they may come from a registry or an agent)
    and any password in an address masked."""
    print(f"{level}: {printable(masked(message))}", file=sys.stderr)
    if hint:
        print(f"hint: {printable(masked(hint))}", file=sys.stderr)


def escaped_lines(lines: Iterable[str]) -> str:
    """``lines`` joined by line breaks, each escaped first: a line break inside an id or a content
    cannot forge a line of its own."""
    return "\n".join(printable(line) for line in lines)


def say(text: str) -> None:
    """A line on stderr (a note, a warning) that may hold a table's or a registry's text: escaped, and any
    password in an address masked."""
    print(printable(masked(text)), file=sys.stderr)


def write_stdout(text: str) -> None:
    """The output as UTF-8 whatever the terminal's encoding: agents and scripts read UTF-8 JSON. No
    control character reaches the terminal but the line breaks ``text`` was given: JSON stays JSON,
    escaped as JSON escapes (:func:`~recall_gui.core.base.control_chars.printable_lines`)."""
    text = printable_lines(text)
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
    else:
        buffer.write(text.encode("utf-8"))
    sys.stdout.flush()


def storage_option_arg(parser: argparse.ArgumentParser, *, dest: str = "storage_option") -> None:
    parser.add_argument(
        "--storage-option",
        action="append",
        dest=dest,
        metavar="KEY=VALUE",
        help="an object-store option, as a registry entry's storage_options holds them (repeatable; "
        "e.g. aws_endpoint=http://127.0.0.1:9000); the AWS_* variables work too",
    )


def storage_options(values: list[str] | None) -> dict[str, str]:
    """``KEY=VALUE`` words as a mapping; refuses one without ``=`` or a key given twice."""
    options: dict[str, str] = {}
    for value in values or []:
        key, sep, text = value.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InvalidInputError(
                f"--storage-option {value!r} is not KEY=VALUE",
                hint="Give each option as KEY=VALUE, e.g. --storage-option aws_region=eu-west-1.",
            )
        if key in options and options[key] != text:
            raise InvalidInputError(f"--storage-option {key} was given twice with different values")
        options[key] = text
    return options
