"""Where the app may write a file the user named (a JUnit report, an export, a golden file): a new path or a
regular file that is not an input of the run, none of the app's own records or the agents' registry, and
lies in no LanceDB table or database folder.

A write replaces what is at the path (atomically, through a rename): named wrongly, it would replace the
golden file being run, the registry agents read (every agent would lose every database), the agent log,
the settings, a table's manifest (the table could no longer be read: a write into a knowledge base), a
FIFO another program reads, or a device node. Such a path is refused, with what it is. One rule for every
output: :func:`output_problem`.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from recall_gui.core.base.errors import InvalidInputError, SettingsError
from recall_gui.core.base.paths import (
    ACTIVE_FILE,
    AGENT_LOG_ENV,
    CACHE_ENV,
    CONFIG_ENV,
    DATA_ENV,
    DBS_FILE,
    agent_log_dir,
    app_config_dir,
    app_data_dir,
    app_models_dir,
    app_registry_dir,
    cosh_registry_dir,
)
from recall_gui.core.base.regular_files import open_regular
from recall_gui.core.base.types import GOLDEN_MAX_BYTES

#: A Lance dataset (a LanceDB table) is a folder named ``<table>.lance`` holding ``_versions``.
LANCE_SUFFIX = ".lance"
LANCE_VERSIONS = "_versions"
OUTPUT_HINT = "Name a new file, or a regular file to replace, outside every knowledge base."

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (a named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class OutputRefused(InvalidInputError):
    """A path a file must not be written to."""


def refuse_output(path: Path, *, inputs: Iterable[tuple[str, Path]] = (), what: str = "the file") -> None:
    """Refuse (:class:`OutputRefused`) to write ``what`` to ``path`` when it is not a new path or a regular
    file, when it is one of ``inputs`` (``(what it is, its path)``: the run's golden file, the registry's
    files), one of the app's own records or the agents' registry, or when it lies inside a LanceDB table or
    in a database folder."""
    problem = output_problem(path, inputs)
    if problem is not None:
        raise OutputRefused(f"{what} was not written to {path}: {problem}", hint=OUTPUT_HINT)


def output_problem(
    path: Path,
    inputs: Iterable[tuple[str, Path]] = (),
    *,
    golden_file: bool = False,
    review_file: bool = False,
) -> str | None:
    """Why ``path`` must not be written (see :func:`refuse_output`), or ``None``. ``golden_file``: what is
    written is a golden file, which may replace another (saving the checks as); ``review_file``: what is
    written is a review file, which the review's own folder holds."""
    try:
        found = os.stat(path)  # through links: what a write would replace
    except FileNotFoundError:
        found = None
    except OSError as error:
        return f"nothing can be written there ({error.strerror or error})"
    if found is not None:
        kind = next((name for test, name in _KINDS if test(found.st_mode)), None)
        if kind is not None or not stat.S_ISREG(found.st_mode):
            return f"it is {kind or 'not a regular file'}, which writing would replace"
        for name, source in inputs:
            if _same_file(path, source):
                return f"it is {name}, an input of this run"
    real = Path(os.path.realpath(path))
    record = _app_record(real, review_file=review_file)
    if record is not None:
        return record
    if found is not None and not golden_file and _is_golden_file(path):
        return "it is a golden file (checks of what agents should find), which only the checks are saved to"
    table = _lance_table_around(real)
    if table is not None:
        return f"it lies inside the LanceDB table {table}, which this app never writes"
    if _holds_lance_table(real.parent):
        return f"it lies in the LanceDB database folder {real.parent}, which this app never writes"
    # Folders a write would make: never inside a database folder, never one LanceDB would take for a table.
    existing = real.parent
    while not existing.exists() and existing != existing.parent:
        if existing.name.endswith(LANCE_SUFFIX):
            return f"it would make the folder {existing}, which LanceDB would take for a table"
        existing = existing.parent
    if existing != real.parent and _holds_lance_table(existing):
        return f"it would make folders in the LanceDB database folder {existing}, which this app never writes"
    return None


#: The agent log's files all start so (``agent-log.jsonl``, ``agent-log.1.jsonl``, ``agent-log.lock``).
AGENT_LOG_PREFIX = "agent-log"
#: The data folder's folder of review files (one per database).
REVIEWS_FOLDER = "reviews"
_GOLDEN_START = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*\{")


def _app_record(real: Path, *, review_file: bool = False) -> str | None:
    """What of the app's own records or of the agents' registry ``real`` (a resolved path) is or lies in
    (the review files' folder is a review file's own place)."""
    if real.name in (DBS_FILE, ACTIVE_FILE):
        return f"it is a file of the agents' registry ({real.name}): agents would lose their databases"
    if real.parent == _resolved(agent_log_dir()) and real.name.startswith(AGENT_LOG_PREFIX):
        return "it is the agent log, the app's record of what agents asked"
    data = app_data_dir()
    folders = [
        (cosh_registry_dir(), "the agents' registry folder"),
        (app_registry_dir(), "the app's registry folder"),
        (app_config_dir(), "the app's settings folder"),
        *(() if review_file else [(data / REVIEWS_FOLDER, "the app's review files")]),
        (data / "checks" / "last-runs", "the app's record of golden checks' last runs"),
        (app_models_dir(), "the app's model folder"),
    ]
    for folder, what in folders:  # a registry elsewhere may share its folder: its files are named above
        if real.is_relative_to(_resolved(folder)):
            return f"it lies in {what}, {folder}, which only the app writes"
    return None


def _resolved(folder: Path) -> Path:
    return Path(os.path.realpath(folder))


def _is_golden_file(path: Path) -> bool:
    """Whether the regular file at ``path`` holds golden checks (a JSON object with a ``checks`` list)."""
    try:
        with open_regular(path, cap=GOLDEN_MAX_BYTES) as file:  # a larger one is read as no golden file
            if not _GOLDEN_START.match(file.read(64)):  # a CSV, XML: not read further
                return False
            file.seek(0)
            data = json.loads(file.read(GOLDEN_MAX_BYTES))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and isinstance(data.get("checks"), list)


#: The settings that move the app's own folders, which it writes into.
FOLDER_SETTINGS = (CONFIG_ENV, DATA_ENV, CACHE_ENV, AGENT_LOG_ENV)


def refuse_folders_in_knowledge_bases(environ: Mapping[str, str] | None = None) -> None:
    """Refuse (:class:`SettingsError`), before anything is written, a setting of :data:`FOLDER_SETTINGS`
    that puts one of the app's folders inside a LanceDB table or database folder: the cache's vectors,
    the agent log or the settings would be written into a knowledge base."""
    environ = os.environ if environ is None else environ
    for name in FOLDER_SETTINGS:
        value = environ.get(name, "").strip()
        if not value:
            continue
        folder = Path(value).expanduser()
        place = _knowledge_base_holding(Path(os.path.realpath(folder)))
        if place is not None:
            raise SettingsError(
                f"{name}={folder} {place}, and the app never writes into a knowledge base",
                path=folder,
                hint=f"Set {name} to a folder outside every knowledge base, or leave it unset.",
            )


def _knowledge_base_holding(real: Path) -> str | None:
    """Where ``real`` (a resolved folder) lies in a knowledge base, in words, or ``None``."""
    for folder in (real, *real.parents):
        if (folder / LANCE_VERSIONS).is_dir():
            return (
                f"is the LanceDB table {folder}"
                if folder == real
                else f"lies inside the LanceDB table {folder}"
            )
        if _holds_lance_table(folder):
            if folder == real:
                return "is a LanceDB database folder"
            return f"lies in the LanceDB database folder {folder}"
    return None


def _same_file(path: Path, other: Path) -> bool:
    try:
        return os.path.samefile(path, other)
    except OSError:
        return False


def _lance_table_around(real: Path) -> Path | None:
    """The LanceDB table (a Lance dataset's folder) that ``real`` lies in, if any."""
    for folder in real.parents:
        if (folder / LANCE_VERSIONS).is_dir():
            return folder
    return None


def _holds_lance_table(folder: Path) -> bool:
    """Whether ``folder`` holds a LanceDB table (it is a database folder)."""
    try:
        with os.scandir(folder) as entries:
            return any(
                entry.name.endswith(LANCE_SUFFIX)
                and entry.is_dir()
                and os.path.isdir(os.path.join(entry.path, LANCE_VERSIONS))
                for entry in entries
            )
    except OSError:
        return False
