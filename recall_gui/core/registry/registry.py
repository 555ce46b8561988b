"""cosh's database registry (``rag_dbs.json`` + ``rag_active.json``), read tolerantly and saved safely.

Reading never fails as a whole: every problem (a file that does not parse, an entry with a wrong type, a
duplicate name) becomes a :class:`RegistryProblem` naming the file and position, and the rest is used.
Saving takes the registry's lock (one change at a time, across processes), re-reads the file from disk,
changes only the one field asked for, keeps every key this app does not know, and replaces the file
atomically (a file that is a symlink keeps being one). A file that does not parse is never written.
"""

from __future__ import annotations

import gc
import heapq
import json
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from recall_gui.core.base.atomic import write_text_atomic
from recall_gui.core.base.endpoints import storage_option_problem
from recall_gui.core.base.errors import DatabaseNotFoundError, RecallError, RegistryError
from recall_gui.core.base.paths import ACTIVE_FILE, DBS_FILE
from recall_gui.core.base.surrogates import first_surrogate, is_unicode, replaced, shown
from recall_gui.core.registry.models import cloud_dim, cloud_label, local_model
from recall_gui.core.registry.registry_lock import registry_locked
from recall_gui.core.storage.columns import ColumnOverrides
from recall_gui.core.storage.target import TableOptions, TableTarget

EmbedderKind = Literal["local", "cloud", "unknown"]
#: Where an entry comes from: the registry's files, or a folder the user opened without registering it.
Origin = Literal["registry", "opened"]


@dataclass(frozen=True)
class EmbedderSpec:
    """The registry's ``embedder`` value: ``{"Local": {"model"}}`` or ``{"Cloud": {"provider", "model"}}``."""

    kind: EmbedderKind
    model: str
    provider: str | None = None

    @property
    def label(self) -> str:
        """cosh's label, as its tool suffix prints it."""
        if self.kind == "unknown" and not self.model:
            return "no model"
        if self.kind == "cloud":
            return cloud_label(self.provider or "", self.model)
        known = local_model(self.model) if self.kind == "local" else None
        return known.label if known else self.model

    @property
    def dim(self) -> int | None:
        """The model's vector width if known (cloud models cosh does not know: ``None``)."""
        if self.kind == "cloud":
            return cloud_dim(self.provider or "", self.model)
        known = local_model(self.model) if self.kind == "local" else None
        return known.dim if known else None

    @classmethod
    def from_json(cls, value: Any) -> EmbedderSpec:
        """Parse cosh's serde form; raises ``ValueError`` with a readable reason."""
        if not isinstance(value, dict) or len(value) != 1:
            raise ValueError('"embedder" must be {"Local": {...}} or {"Cloud": {...}}')
        ((variant, body),) = value.items()
        _check_unicode(f'the embedder kind "{variant}"', variant)
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            raise ValueError(f'"embedder.{variant}.model" must be a string')
        _check_unicode(f'"embedder.{variant}.model"', body["model"])
        if variant == "Local":
            return cls("local", body["model"])
        if variant == "Cloud":
            provider = body.get("provider")
            if not isinstance(provider, str):
                raise ValueError('"embedder.Cloud.provider" must be a string')
            _check_unicode('"embedder.Cloud.provider"', provider)
            return cls("cloud", body["model"], provider.lower())
        raise ValueError(f'unknown embedder kind "{variant}" (expected Local or Cloud)')


@dataclass(frozen=True)
class DatabaseEntry:
    """One database as the registry describes it, plus whether it is active."""

    name: str
    uri: str
    description: str
    embedder: EmbedderSpec
    active: bool = False
    created_at: int | None = None
    #: Optional keys cosh ignores: a table name other than the database name, column names, metric.
    table: str | None = None
    columns: ColumnOverrides = field(default_factory=ColumnOverrides)
    metric: str | None = None
    storage_options: Mapping[str, str] = field(default_factory=dict)
    #: "opened": a table the user opened by its folder; it is never written to the registry.
    origin: Origin = "registry"
    #: How the model of an opened table was chosen ("from the table's metadata", "by width: ...").
    model_reason: str = ""

    @property
    def table_name(self) -> str:
        return self.table or self.name

    @property
    def target(self) -> TableTarget:
        """Its table, and how to read it."""
        options = TableOptions(self.storage_options, self.columns, self.metric)
        return TableTarget(self.uri, self.table_name, options)


@dataclass(frozen=True)
class RegistryProblem:
    """Something in a registry file that could not be used, with where it is.

    The message quotes what it is about; text that is not Unicode is quoted escaped, so every problem
    can be printed, logged and shown.
    """

    file: Path
    message: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", shown(self.message))

    def __str__(self) -> str:
        return f"{shown(str(self.file))}: {self.message}"


@dataclass(frozen=True)
class FileStamp:
    """Enough of a file's state to notice that another program changed it."""

    exists: bool
    size: int
    mtime_ns: int
    #: A file replaced by rename (as this app and careful editors save) gets a new inode even when its
    #: size and time happen to match.
    inode: int = 0

    @classmethod
    def of(cls, path: Path) -> FileStamp:
        try:
            stat = path.stat()
        except OSError:
            return cls(False, 0, 0)
        return cls(True, stat.st_size, stat.st_mtime_ns, stat.st_ino)


#: How many of the longest names :attr:`Registry.longest_names` keeps.
LONGEST_NAMES = 50
#: What :meth:`Registry.warmed` works out.
WARMED = (
    "active",
    "inactive",
    "by_activity",
    "index",
    "index_in_group",
    "index_by_activity",
    "_by_name",
    "longest_names",
)


@dataclass(frozen=True)
class Registry:
    """A snapshot of the registry directory."""

    directory: Path
    databases: tuple[DatabaseEntry, ...] = ()
    problems: tuple[RegistryProblem, ...] = ()
    stamps: tuple[FileStamp, FileStamp] = (FileStamp(False, 0, 0), FileStamp(False, 0, 0))
    #: Each entry of a large ``rag_dbs.json`` by its text in the file: the next read reuses an entry
    #: written as before instead of making it again (an F5 on 50,000 databases makes only what changed).
    sources: Mapping[str, DatabaseEntry] = field(default_factory=dict, compare=False, repr=False)

    @property
    def dbs_path(self) -> Path:
        return self.directory / DBS_FILE

    @property
    def active_path(self) -> Path:
        return self.directory / ACTIVE_FILE

    @cached_property
    def active(self) -> tuple[DatabaseEntry, ...]:
        return tuple(db for db in self.databases if db.active)

    @cached_property
    def inactive(self) -> tuple[DatabaseEntry, ...]:
        return tuple(db for db in self.databases if not db.active)

    @cached_property
    def by_activity(self) -> tuple[DatabaseEntry, ...]:
        """The active databases by name, then the inactive ones by name: how pickers list them."""
        return tuple(_sorted_in_pieces(self.active) + _sorted_in_pieces(self.inactive))

    @cached_property
    def index(self) -> dict[str, int]:
        """Each name's place in :attr:`databases`: lists of many databases find a row without a scan.
        (Dicts of names to numbers are invisible to the cycle collector: they cost no collection time.)"""
        return {db.name: number for number, db in enumerate(self.databases)}

    @cached_property
    def index_in_group(self) -> dict[str, int]:
        """Each name's place in :attr:`active` or in :attr:`inactive` (whichever holds it)."""
        places = {db.name: number for number, db in enumerate(self.active)}
        places.update((db.name, number) for number, db in enumerate(self.inactive))
        return places

    @cached_property
    def index_by_activity(self) -> dict[str, int]:
        """Each name's place in :attr:`by_activity`."""
        return {db.name: number for number, db in enumerate(self.by_activity)}

    @cached_property
    def longest_names(self) -> tuple[str, ...]:
        """The :data:`LONGEST_NAMES` longest names, longest first: what a list measures for its width
        (measuring every name of a large registry takes long)."""
        return tuple(heapq.nlargest(LONGEST_NAMES, (db.name for db in self.databases), key=len))

    def warmed(self) -> Registry:
        """This snapshot with every derived list and index worked out now: a reader on a worker thread
        calls it, so the window's thread never spends the time (a large registry's take a while)."""
        with _collection_paused():
            for name in WARMED:
                getattr(self, name)
        return self

    @cached_property
    def _by_name(self) -> dict[str, DatabaseEntry]:
        return {db.name: db for db in reversed(self.databases)}  # the first of a name wins

    def get(self, name: str) -> DatabaseEntry | None:
        return self._by_name.get(name)

    def changed_on_disk(self) -> bool:
        """True when either file differs from what this snapshot read."""
        return (FileStamp.of(self.dbs_path), FileStamp.of(self.active_path)) != self.stamps


#: How many entries one call of the C sort takes (see :func:`_sorted_in_pieces`).
_SORT_PIECE = 4096


def _sorted_in_pieces(entries: tuple[DatabaseEntry, ...]) -> list[DatabaseEntry]:
    """``entries`` by name, sorted a piece at a time and merged: one C sort of 50,000 names holds
    Python's lock for tens of milliseconds, which the window's thread would wait through."""
    pieces = [
        sorted(entries[start : start + _SORT_PIECE], key=_name)
        for start in range(0, len(entries), _SORT_PIECE)
    ]
    if len(pieces) <= 1:
        return pieces[0] if pieces else []
    return list(heapq.merge(*pieces, key=_name))


def _name(entry: DatabaseEntry) -> str:
    return entry.name


# --- reading -----------------------------------------------------------------------------------------


class _ParseFailure(Exception):
    pass


class _LongNumber:
    """An integer with more digits than Python reads from text (``sys.get_int_max_str_digits()``), kept
    as written: it is no value this app uses, and a save writes it back unchanged."""

    def __init__(self, text: str) -> None:
        self.text = text


def _read_integer(text: str) -> int | _LongNumber:
    try:
        return int(text)
    except ValueError:
        return _LongNumber(text)


#: Above this size a registry file is parsed element by element (see :func:`_parse`).
PIECEWISE_BYTES = 256 * 1024
_DECODER = json.JSONDecoder(parse_int=_read_integer)
_SPACE = re.compile(r"[ \t\n\r]*")


def _parse(text: str, sources: list[str] | None = None) -> Any:
    """The file's JSON. A large one is parsed a top-level entry or array element at a time: ``json.loads``
    holds Python's lock for the whole text (130 ms for 50,000 entries), and the window's thread, waiting
    for that lock while a worker reads the registry, would stall as long. A file that is not valid JSON
    is parsed whole, for ``json``'s own error.

    ``sources``: filled, for a large file, with the text of each element of its "dbs" array."""
    if len(text) > PIECEWISE_BYTES:
        try:
            return _parse_in_pieces(text, sources)
        except (ValueError, IndexError):
            pass
    if sources is not None:
        sources.clear()
    return json.loads(text, parse_int=_read_integer)


def _parse_in_pieces(text: str, sources: list[str] | None = None) -> Any:
    """A top-level object or array, one member or element per decoder call; raises ``ValueError`` or
    ``IndexError`` for anything else (the caller then parses it whole)."""
    position = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    value: Any
    if text[position] == "[":
        value, position = _array_in_pieces(text, position)
    elif text[position] == "{":
        value, position = _object_in_pieces(text, position, sources)
    else:
        raise ValueError("not an object or array")
    if _SPACE.match(text, position).end() != len(text):  # type: ignore[union-attr]
        raise ValueError("extra data")
    return value


def _next(text: str, position: int) -> int:
    return _SPACE.match(text, position).end()  # type: ignore[union-attr]


def _array_in_pieces(text: str, position: int, sources: list[str] | None = None) -> tuple[list[Any], int]:
    items: list[Any] = []
    position = _next(text, position + 1)
    if text[position] == "]":
        return items, position + 1
    while True:
        start = position
        item, position = _DECODER.raw_decode(text, position)
        items.append(item)
        if sources is not None:
            sources.append(text[start:position])
        position = _next(text, position)
        if text[position] == "]":
            return items, position + 1
        if text[position] != ",":
            raise ValueError("expected , or ]")
        position = _next(text, position + 1)


def _object_in_pieces(
    text: str, position: int, sources: list[str] | None = None
) -> tuple[dict[str, Any], int]:
    members: dict[str, Any] = {}
    position = _next(text, position + 1)
    if text[position] == "}":
        return members, position + 1
    while True:
        if text[position] != '"':
            raise ValueError("expected a name")
        key, position = _DECODER.raw_decode(text, position)
        position = _next(text, position)
        if text[position] != ":":
            raise ValueError("expected :")
        position = _next(text, position + 1)
        if text[position] == "[":
            dbs = key == "dbs" and sources is not None
            if dbs and sources is not None:
                sources.clear()  # a later "dbs" wins, as in json.loads
            members[key], position = _array_in_pieces(text, position, sources if dbs else None)
        else:
            members[key], position = _DECODER.raw_decode(text, position)
        position = _next(text, position)
        if text[position] == "}":
            return members, position + 1
        if text[position] != ",":
            raise ValueError("expected , or }")
        position = _next(text, position + 1)


def _read_json(path: Path, problems: list[RegistryProblem], sources: list[str] | None = None) -> Any:
    """The parsed file, ``None`` when it does not exist; raises ``_ParseFailure`` after recording why."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        problems.append(RegistryProblem(path, f"cannot be read: {error}"))
        raise _ParseFailure from error
    if not text.strip():
        problems.append(RegistryProblem(path, "is empty (expected JSON); fix or delete the file"))
        raise _ParseFailure
    try:
        data = _parse(text, sources)
    except json.JSONDecodeError as error:
        reason = error.msg.removesuffix(" at")  # "Unterminated string starting at" + " at line ..."
        problems.append(
            RegistryProblem(path, f"is not valid JSON: {reason} at line {error.lineno} column {error.colno}")
        )
        raise _ParseFailure from error
    except RecursionError as error:
        problems.append(RegistryProblem(path, "is not a registry: its JSON is nested too deeply"))
        raise _ParseFailure from error
    if data is None:  # ``null`` is JSON, but no registry: treat it like a file that does not parse
        problems.append(RegistryProblem(path, "holds only JSON null (expected a registry); fix or delete it"))
        raise _ParseFailure
    return data


def _check_unicode(what: str, value: str, *, secret: bool = False) -> None:
    """Refuse a lone surrogate (a JSON escape such as ``"\\ud800"``): nothing downstream can write it.
    The message quotes the value, unless it may be a secret."""
    if not is_unicode(value):
        holder = "it" if secret else f'"{value}"'
        surrogate = first_surrogate(value)
        raise ValueError(
            f"{what} is not valid Unicode text: {holder} holds the unpaired surrogate {surrogate}"
        )


def _optional_str(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f'"{key}" must be a string')
    _check_unicode(f'"{key}"', value)
    return value


def _parse_entry(
    raw: Any, active_names: set[str], notes: list[str], shared: dict[Any, Any] | None = None
) -> DatabaseEntry:
    """One entry; raises ``ValueError`` when it cannot be used, appends to ``notes`` what was mended.

    ``shared``: equal models and column names read before (of the same file), reused, so a registry of
    many databases holds one object per distinct model, not one per database (fewer objects for the cycle
    collector to walk, which it does holding Python's lock)."""
    shared = {} if shared is None else shared
    if not isinstance(raw, dict):
        raise ValueError("is not a JSON object")
    name, uri = raw.get("name"), raw.get("uri")
    if not isinstance(name, str) or not name:
        raise ValueError('"name" must be a non-empty string')
    _check_unicode('"name"', name)
    if not isinstance(uri, str) or not uri:
        raise ValueError(f'database "{name}": "uri" must be a non-empty string')
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise ValueError(f'database "{name}": "description" must be a string')
    if not is_unicode(description):
        notes.append(
            f'database "{name}": "description" is not valid Unicode text: it holds the unpaired '
            f"surrogate {first_surrogate(description)}, used with U+FFFD in its place"
        )
        description = replaced(description)
    try:
        _check_unicode('"uri"', uri)
        raw_embedder = raw.get("embedder")
        embedder_key = ("embedder", repr(raw_embedder))  # equal models are written alike
        embedder = shared.get(embedder_key)
        if embedder is None:
            embedder = shared[embedder_key] = EmbedderSpec.from_json(raw_embedder)
    except ValueError as error:
        raise ValueError(f'database "{name}": {error}') from None
    created_at = raw.get("created_at")
    if not isinstance(created_at, int) or isinstance(created_at, bool):
        created_at = None
    storage = raw.get("storage_options") or {}
    if not isinstance(storage, dict) or not all(isinstance(v, str) for v in storage.values()):
        raise ValueError(f'database "{name}": "storage_options" must map names to strings')
    try:
        for key, value in storage.items():
            _check_unicode('a "storage_options" name', key)
            _check_unicode(f'"storage_options.{key}"', value, secret=True)
            problem = storage_option_problem(key, value)
            if problem is not None:
                raise ValueError(f'"storage_options.{key}" {problem}')
        names = tuple(_optional_str(raw, key) for key in ("id_column", "content_column", "vector_column"))
        columns = shared.get(names)
        if columns is None:
            columns = shared[names] = ColumnOverrides(*names)
        table, metric = _optional_str(raw, "table"), _optional_str(raw, "metric")
    except ValueError as error:
        raise ValueError(f'database "{name}": {error}') from None
    return DatabaseEntry(
        name=name,
        uri=uri,
        description=description,
        embedder=embedder,
        active=name in active_names,
        created_at=created_at,
        table=table,
        columns=columns,
        metric=metric.lower() if metric else None,
        storage_options=dict(storage),
    )


def _read_active(path: Path, problems: list[RegistryProblem]) -> list[str]:
    try:
        data = _read_json(path, problems)
    except _ParseFailure:
        return []
    if data is None:
        return []
    if not isinstance(data, list):
        problems.append(RegistryProblem(path, "must be a JSON array of database names"))
        return []
    names = [item for item in data if isinstance(item, str)]
    if len(names) != len(data):
        problems.append(RegistryProblem(path, "entries that are not strings were ignored"))
    for name in names:
        if not is_unicode(name):
            problems.append(RegistryProblem(path, f'"{name}" ignored: a name that is not valid Unicode text'))
    return [name for name in names if is_unicode(name)]


#: How often a registry that another program is rewriting while it is read is read again.
READ_ATTEMPTS = 3


def load_registry(directory: Path, previous: Registry | None = None) -> Registry:
    """Read both files; never raises for bad content (see :attr:`Registry.problems`).

    When another program rewrites a file while it is being read, it is read again (a few times), so a
    half-written file is not reported as broken when a moment later it is whole.
    """
    directory = Path(directory)
    with _collection_paused():
        registry = _load_once(directory, previous)
        for _ in range(READ_ATTEMPTS - 1):
            if not registry.problems or not registry.changed_on_disk():
                break
            registry = _load_once(directory, previous)
    return registry


@contextmanager
def _collection_paused() -> Iterator[None]:
    """Python's cycle collector paused while a snapshot is made, and resumed after.

    A snapshot holds no reference cycles (the parsed JSON and the entries are trees), so collecting while
    it is made finds nothing, yet each full pass walks every object of the process holding Python's
    lock: at 50,000 entries that held the window's thread back for 120 ms at a time while a worker read
    the registry (38 ms paused). Reference counting still frees everything as usual.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
            # The new objects are walked once now, on the reading thread, and moved to the oldest
            # generation, rather than piecemeal by whichever thread allocates next (the window's).
            gc.collect(1)


def _load_once(directory: Path, previous: Registry | None = None) -> Registry:
    dbs_path, active_path = directory / DBS_FILE, directory / ACTIVE_FILE
    stamps = (FileStamp.of(dbs_path), FileStamp.of(active_path))
    problems: list[RegistryProblem] = []
    active_names = _read_active(active_path, problems)
    texts: list[str] = []
    try:
        data = _read_json(dbs_path, problems, texts)
    except _ParseFailure:
        data = None
    raw_entries: list[Any] = []
    if isinstance(data, dict) and isinstance(data.get("dbs"), list):
        raw_entries = data["dbs"]
    elif data is not None:
        problems.append(RegistryProblem(dbs_path, 'must be a JSON object with a "dbs" array'))
    databases: list[DatabaseEntry] = []
    shared: dict[Any, Any] = {}
    seen: set[str] = set()
    active_set = set(active_names)
    texts = texts if len(texts) == len(raw_entries) else []
    known = previous.sources if previous is not None else {}
    sources: dict[str, DatabaseEntry] = {}
    for index, raw in enumerate(raw_entries, start=1):
        notes: list[str] = []
        text = texts[index - 1] if texts else None
        entry = known.get(text) if text is not None else None
        if entry is not None:  # written as before: the same entry, only its state may differ
            if entry.active != (entry.name in active_set):
                entry = replace(entry, active=not entry.active)
        else:
            try:
                entry = _parse_entry(raw, active_set, notes, shared)
            except ValueError as error:
                problems.append(RegistryProblem(dbs_path, f"entry {index} skipped: {error}"))
                continue
        if text is not None and not notes:
            sources[text] = entry
        for note in notes:
            problems.append(RegistryProblem(dbs_path, f"entry {index}: {note}"))
        if entry.name in seen:
            problems.append(
                RegistryProblem(dbs_path, f'entry {index} skipped: duplicate name "{entry.name}"')
            )
            continue
        seen.add(entry.name)
        databases.append(entry)
    for name in active_names:
        if name not in seen:
            problems.append(RegistryProblem(active_path, f'active database "{name}" is not in {DBS_FILE}'))
    return Registry(directory, tuple(databases), tuple(problems), stamps, sources)


# --- saving ------------------------------------------------------------------------------------------

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
        data = _read_json(path, problems)
    except _ParseFailure:
        raise RegistryError(f"not saved: {problems[0]}", hint=_KEEP_HINT) from None
    try:
        ends_with_newline = path.exists() and path.read_bytes().endswith(b"\n")
    except OSError:
        ends_with_newline = False
    return data, ends_with_newline, stamp


def _write_json(path: Path, data: Any, trailing_newline: bool, stamp: FileStamp) -> None:
    """Replace ``path`` atomically, unless it changed since ``stamp`` was taken (then the caller redoes
    its read-modify-write on the new content, so another program's edit is kept, not clobbered).

    A lone surrogate that was read from an escape (in an entry this app skips) is written back as that
    escape: only the field asked for changes.
    """
    text = shown(_dumps(data)) + ("\n" if trailing_newline else "")
    try:
        written = write_text_atomic(path, text, precondition=lambda: FileStamp.of(path) == stamp)
    except OSError as error:
        raise RegistryError(
            f"not saved: cannot write {path}: {error.strerror or error}",
            hint="Check that the registry folder is writable. Nothing was changed.",
        ) from error
    if not written:
        raise _ChangedMeanwhile


def _dumps(data: Any) -> str:
    """Pretty JSON like cosh's, with integers too long to read written back as they were."""
    marker = f"recall-gui-long-number-{uuid.uuid4().hex}"
    long_numbers: list[str] = []

    def placeholder(value: Any) -> str:
        if not isinstance(value, _LongNumber):
            raise TypeError(f"{type(value).__name__} is not JSON")
        long_numbers.append(value.text)
        return f"{marker}-{len(long_numbers) - 1}"

    text = json.dumps(data, ensure_ascii=False, indent=2, default=placeholder)
    for index, digits in enumerate(long_numbers):
        text = text.replace(f'"{marker}-{index}"', digits)
    return text


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
        active = _read_json(directory / ACTIVE_FILE, problems)
        data = _read_json(directory / DBS_FILE, problems)
    except _ParseFailure:
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
