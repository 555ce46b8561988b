"""Changing cosh's database registry: one database's description or activity, an entry added, removed or
put back.

Every change takes the registry's lock (one change at a time, across processes), re-reads the file from
disk, changes only what was asked for, keeps every key this app does not know, and replaces the file
atomically (a file that is a symlink keeps being one). A file that does not parse is never written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_gui.core.base.atomic import write_text_atomic
from recall_gui.core.base.errors import DatabaseNotFoundError, RecallError, RegistryError
from recall_gui.core.base.paths import ACTIVE_FILE, DBS_FILE
from recall_gui.core.base.regular_files import open_regular
from recall_gui.core.base.surrogates import first_surrogate, is_unicode, shown
from recall_gui.core.registry.registry_json import ParseFailure, dumps, read_json
from recall_gui.core.registry.registry_lock import registry_locked
from recall_gui.core.registry.registry_types import FileStamp, RegistryProblem

#: How often a save is recomputed when another program changes the file between reading and renaming.
SAVE_ATTEMPTS = 5
_KEEP_HINT = "The file was left untouched. Fix it by hand (or delete it), then try again."


class _ChangedMeanwhile(Exception):
    pass


def _read_for_update(path: Path) -> tuple[Any, bool, FileStamp]:
    """The file's JSON, whether it ended with a newline and its stamp; refuses a file that does not parse."""
    problems: list[RegistryProblem] = []
    stamp = FileStamp.of(path)
    try:
        data = read_json(path, problems)
    except ParseFailure:
        raise RegistryError(f"not saved: {problems[0]}", hint=_KEEP_HINT) from None
    return data, _ends_with_newline(path), stamp


def _ends_with_newline(path: Path) -> bool:
    try:
        with open_regular(path) as file:
            if file.seek(0, 2) == 0:
                return False
            file.seek(-1, 2)
            return file.read(1) == b"\n"
    except OSError:
        return False


def _write_json(path: Path, data: Any, trailing_newline: bool, stamp: FileStamp) -> None:
    """Replace ``path`` atomically, unless it changed since ``stamp`` was taken (then the caller redoes
    its read-modify-write on the new content, so another program's edit is kept, not clobbered).

    A lone surrogate that was read from an escape (in an entry this app skips) is written back as that
    escape: only the field asked for changes.
    """
    text = shown(dumps(data)) + ("\n" if trailing_newline else "")
    try:
        written = write_text_atomic(path, text, precondition=lambda: FileStamp.of(path) == stamp)
    except OSError as error:
        raise RegistryError(
            f"not saved: cannot write {path}: {error.strerror or error}",
            hint="Check that the registry folder is writable. Nothing was changed.",
        ) from error
    if not written:
        raise _ChangedMeanwhile


def _rewrite(path: Path, change: Callable[[Any], Any]) -> None:
    """Read ``path``, apply ``change`` to its JSON (``None`` when the file is missing), write the result.

    Retries when the file changes underneath; gives up with a clear error if it keeps changing.
    """
    for _ in range(SAVE_ATTEMPTS):
        data, newline, stamp = _read_for_update(path)
        updated = change(data)
        try:
            _write_json(path, updated, newline, stamp)
            return
        except _ChangedMeanwhile:
            continue
    raise RegistryError(
        f"not saved: {path} kept changing while saving (another program is writing it)",
        hint="Try again in a moment.",
    )


def _dbs_array(path: Path, data: Any) -> list[Any]:
    if not isinstance(data, dict) or not isinstance(data.get("dbs"), list):
        raise RegistryError(f'not saved: {path} does not hold a "dbs" array', hint=_KEEP_HINT)
    dbs: list[Any] = data["dbs"]
    return dbs


def writable_entries(directory: Path) -> list[Any]:
    """The raw entries of the registry in ``directory`` (none when it has no files yet), read as a change
    would read them: raises :class:`RegistryError` for a file a change would refuse (one that does not
    parse, a ``rag_dbs.json`` without a "dbs" array, a ``rag_active.json`` that is no array). For callers
    that must know before long work that they can write their entry later."""
    directory = Path(directory)
    problems: list[RegistryProblem] = []
    try:
        active = read_json(directory / ACTIVE_FILE, problems)
        data = read_json(directory / DBS_FILE, problems)
    except ParseFailure:
        raise RegistryError(str(problems[0]), hint=_KEEP_HINT) from None
    if active is not None and not isinstance(active, list):
        raise RegistryError(f"{directory / ACTIVE_FILE} is not a JSON array", hint=_KEEP_HINT)
    if data is None:
        return []
    if not isinstance(data, dict) or not isinstance(data.get("dbs"), list):
        raise RegistryError(f'{directory / DBS_FILE} does not hold a "dbs" array', hint=_KEEP_HINT)
    return list(data["dbs"])


def _refuse_unwritable(directory: Path) -> None:
    """Refuse before writing anything a registry whose second file could not be written after the first."""
    try:
        writable_entries(directory)
    except RegistryError as error:
        raise RegistryError(f"not saved: {error.message}", hint=error.hint) from None


def set_description(directory: Path, name: str, description: str) -> None:
    """Change one database's description, keeping every other key and entry exactly as found on disk."""
    path = Path(directory) / DBS_FILE
    if not is_unicode(description):
        raise RegistryError(
            f"not saved: the description is not valid Unicode text (it holds the unpaired surrogate "
            f"{first_surrogate(description)})",
            hint="Remove or retype the character; nothing was changed.",
        )

    def change(data: Any) -> Any:
        for raw in _dbs_array(path, data):
            if isinstance(raw, dict) and raw.get("name") == name:
                raw["description"] = description
                return data
        raise RegistryError(
            f'not saved: database "{name}" is no longer in {DBS_FILE}',
            hint="Another program changed the registry; it has been reloaded.",
        )

    with registry_locked(directory):
        _rewrite(path, change)


def set_active(directory: Path, name: str, active: bool) -> None:
    """Add ``name`` to (or remove it from) ``rag_active.json``, keeping the order of the others."""
    with registry_locked(directory):
        _set_active(Path(directory), name, active)


def _set_active(directory: Path, name: str, active: bool, position: int | None = None) -> None:
    """:func:`set_active` under the lock; ``position``: where an activated name goes (default: last)."""
    path = directory / ACTIVE_FILE

    def change(data: Any) -> Any:
        names = _active_array(path, data)
        kept = [item for item in names if item != name]
        if active:
            kept.insert(len(kept) if position is None else min(position, len(kept)), name)
        return kept

    _rewrite(path, change)


def _active_array(path: Path, data: Any) -> list[Any]:
    if data is None:
        return []
    if not isinstance(data, list):
        raise RegistryError(f"not saved: {path} is not a JSON array", hint=_KEEP_HINT)
    return data


def _is_named(raw: Any, name: str) -> bool:
    return isinstance(raw, dict) and raw.get("name") == name


def _unknown_name(directory: Path, name: str) -> DatabaseNotFoundError:
    return DatabaseNotFoundError(
        f'no database called "{name}" in {Path(directory) / DBS_FILE}',
        hint="Check the name with `recall-gui list`. Nothing was changed.",
    )


def change_active(directory: Path, name: str, active: bool, position: int | None = None) -> int | None:
    """Let agents search ``name`` (``active``, at ``position`` in ``rag_active.json``; default last) or
    stop them; refuses a name ``rag_dbs.json`` does not list (checked under the lock, on the file as it
    is then). Returns the name's place in ``rag_active.json`` before (``None``: it was not there): a
    database already in the state asked for leaves both files untouched."""
    directory = Path(directory)
    if not directory.is_dir():  # nothing registered there: refused without making the folder
        raise _unknown_name(directory, name)
    with registry_locked(directory):
        _refuse_unwritable(directory)
        data, _newline, _stamp = _read_for_update(directory / DBS_FILE)
        if data is None or not any(_is_named(raw, name) for raw in _dbs_array(directory / DBS_FILE, data)):
            raise _unknown_name(directory, name)
        names, _newline, _stamp = _read_for_update(directory / ACTIVE_FILE)
        listed = _active_array(directory / ACTIVE_FILE, names)
        before = listed.index(name) if name in listed else None
        if (before is not None) != active:
            _set_active(directory, name, active, position)
    return before


@dataclass(frozen=True)
class RemovedEntry:
    """A database taken out of the registry, with what puts it back exactly as it was."""

    name: str
    #: The entry as ``rag_dbs.json`` held it, unknown keys and all.
    raw: Mapping[str, Any]
    #: Its place in the "dbs" array, and in ``rag_active.json`` (``None``: it was inactive).
    position: int
    active_position: int | None
    registry_file: Path


def unregister_database(directory: Path, name: str) -> RemovedEntry:
    """Remove ``name`` from both registry files, keeping every other entry and key as found; its
    knowledge base's folder is not touched. Refuses a name ``rag_dbs.json`` does not list."""
    directory = Path(directory)
    dbs_path, active_path = directory / DBS_FILE, directory / ACTIVE_FILE
    removed: list[tuple[int, Mapping[str, Any]]] = []
    if not directory.is_dir():
        raise _unknown_name(directory, name)
    with registry_locked(directory):
        _refuse_unwritable(directory)
        data, _newline, _stamp = _read_for_update(dbs_path)
        entries = [] if data is None else _dbs_array(dbs_path, data)
        position = next((i for i, raw in enumerate(entries) if _is_named(raw, name)), None)
        if position is None:
            raise _unknown_name(directory, name)
        names, _newline, _stamp = _read_for_update(active_path)
        listed = _active_array(active_path, names)
        active_position = listed.index(name) if name in listed else None
        if active_position is not None:  # agents stop seeing it first: a failure after this loses nothing
            _set_active(directory, name, False)

        def change(data: Any) -> Any:
            entries = _dbs_array(dbs_path, data)
            index = next((i for i, raw in enumerate(entries) if _is_named(raw, name)), None)
            if index is None:
                raise _unknown_name(directory, name)
            removed.append((index, entries.pop(index)))
            return data

        _rewrite(dbs_path, change)
    index, raw = removed[-1]
    return RemovedEntry(name, raw, index, active_position, dbs_path)


def restore_database(directory: Path, removed: RemovedEntry) -> None:
    """Put an unregistered database back where it was, as it was (undo); refuses when a database of
    that name has been registered meanwhile."""
    directory = Path(directory)
    dbs_path = directory / DBS_FILE

    def change(data: Any) -> Any:
        if data is None:
            data = {"dbs": []}
        entries = _dbs_array(dbs_path, data)
        if any(_is_named(raw, removed.name) for raw in entries):
            raise RegistryError(
                f'not restored: {dbs_path} has a database called "{removed.name}" again',
                hint="Another program registered one under that name; nothing was changed.",
            )
        entries.insert(min(removed.position, len(entries)), dict(removed.raw))
        return data

    with registry_locked(directory):
        _refuse_unwritable(directory)
        _rewrite(dbs_path, change)
        if removed.active_position is not None:
            _set_active(directory, removed.name, True, removed.active_position)


def register_database(
    directory: Path,
    raw_entry: Mapping[str, Any],
    *,
    active: bool = True,
    replaceable: Callable[[Mapping[str, Any]], bool] = lambda _existing: False,
    keep: tuple[str, ...] = (),
    refusal: Callable[[Mapping[str, Any]], RecallError] | None = None,
) -> None:
    """Add a database entry; used for the app's own registry (the demo).

    An entry of the same name is replaced only when ``replaceable(existing)`` says so (checked on the file
    as it is when written, not as it was earlier), keeping the existing values of the ``keep`` keys;
    otherwise ``refusal(existing)`` (or a :class:`RegistryError`) is raised and nothing is written.
    """
    directory = Path(directory)
    path = directory / DBS_FILE

    def change(data: Any) -> Any:
        if data is None:
            data = {"dbs": []}
        entries: list[Any] = []
        new_entry, placed = dict(raw_entry), False
        for existing in _dbs_array(path, data):
            if placed or not _is_named(existing, raw_entry["name"]):
                entries.append(existing)
                continue
            if not replaceable(existing):
                if refusal is not None:
                    raise refusal(existing)
                raise RegistryError(
                    f'not saved: {path} already has a database named "{raw_entry["name"]}"',
                    hint=_KEEP_HINT,
                )
            new_entry.update({key: existing[key] for key in keep if key in existing})
            entries.append(new_entry)
            placed = True
        if not placed:
            entries.append(new_entry)
        data["dbs"] = entries
        return data

    with registry_locked(directory):
        _refuse_unwritable(directory)
        _rewrite(path, change)
        _set_active(directory, str(raw_entry["name"]), active)


def add_database(directory: Path, raw_entry: Mapping[str, Any], *, active: bool) -> None:
    """Add a database the user asked for; refuses a name the registry already has (never replaces one).

    The check runs on the file as it is when written, under the registry's lock, so an entry another
    program added meanwhile under the same name is refused too, not overwritten, and two programs
    registering at once both land.
    """
    directory = Path(directory)
    path = directory / DBS_FILE
    name = str(raw_entry["name"])

    def change(data: Any) -> Any:
        if data is None:
            data = {"dbs": []}
        entries = _dbs_array(path, data)
        if any(_is_named(e, name) for e in entries):
            raise RegistryError(
                f'not saved: a database called "{name}" is already registered in {path}',
                hint="Choose another name.",
            )
        entries.append(dict(raw_entry))
        return data

    with registry_locked(directory):
        _refuse_unwritable(directory)
        _rewrite(path, change)
        if active:
            _set_active(directory, name, True)
