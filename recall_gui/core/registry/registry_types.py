"""What cosh's registry describes: a database entry, its embedding model, a problem found in a file, a
file's stamp, and :class:`Registry`, a snapshot of the registry folder with its derived lists and indexes.

Reading the files is :mod:`recall_gui.core.registry.registry`; changing them,
:mod:`recall_gui.core.registry.registry_changes`.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from recall_gui.core.base.collector import collection_paused
from recall_gui.core.base.paths import ACTIVE_FILE, DBS_FILE
from recall_gui.core.base.surrogates import first_surrogate, is_unicode, shown
from recall_gui.core.registry.models import cloud_dim, cloud_label, local_model
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
    def cosh_label(self) -> str:
        """cosh's label, as its tool suffix prints it (the same for a model and its quantized variant)."""
        if self.kind == "unknown" and not self.model:
            return "no model"
        if self.kind == "cloud":
            return cloud_label(self.provider or "", self.model)
        known = local_model(self.model) if self.kind == "local" else None
        return known.label if known else self.model

    @property
    def label(self) -> str:
        """The model's name for a reader: cosh's label, which says when the model is a quantized one."""
        known = local_model(self.model) if self.kind == "local" else None
        return known.shown_label if known else self.cosh_label

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
        require_unicode(f'the embedder kind "{variant}"', variant)
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            raise ValueError(f'"embedder.{variant}.model" must be a string')
        require_unicode(f'"embedder.{variant}.model"', body["model"])
        if variant == "Local":
            return cls("local", body["model"])
        if variant == "Cloud":
            provider = body.get("provider")
            if not isinstance(provider, str):
                raise ValueError('"embedder.Cloud.provider" must be a string')
            require_unicode('"embedder.Cloud.provider"', provider)
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
    #: The files that could not be read as JSON at all (a file another program is rewriting in place
    #: reads so for a moment); their problems are among :attr:`problems`.
    unparsed: tuple[Path, ...] = field(default=(), compare=False)

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
        with collection_paused():
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


def require_unicode(what: str, value: str, *, secret: bool = False) -> None:
    """Refuse a lone surrogate (a JSON escape such as ``"\\ud800"``): nothing downstream can write it.
    The message quotes the value, unless it may be a secret."""
    if not is_unicode(value):
        holder = "it" if secret else f'"{value}"'
        surrogate = first_surrogate(value)
        raise ValueError(
            f"{what} is not valid Unicode text: {holder} holds the unpaired surrogate {surrogate}"
        )
