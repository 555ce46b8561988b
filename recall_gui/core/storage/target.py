"""Which table to read and how: a LanceDB folder (or object-store URI), a table in it, and the options a
registry entry (or an opened folder) gives for reading it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from recall_gui.core.storage.columns import ColumnOverrides

StorageKey = tuple[tuple[str, str], ...]

#: Storage option names that hold credentials (aws_secret_access_key, azure_storage_sas_token, ...).
_SECRET_OPTION = re.compile(r"secret|token|password|key|credential|sas|signature", re.IGNORECASE)


def is_secret_option(name: str) -> bool:
    return _SECRET_OPTION.search(name) is not None


def without_secrets(options: Mapping[str, str]) -> dict[str, str]:
    """``options`` minus credentials: what may be written to a settings or registry file."""
    return {name: value for name, value in options.items() if not is_secret_option(name)}


@dataclass(frozen=True)
class TableOptions:
    """How to read one table: storage credentials, column names and metric."""

    storage_options: Mapping[str, str] = field(default_factory=dict)
    columns: ColumnOverrides = field(default_factory=ColumnOverrides)
    metric: str | None = None

    @property
    def storage_key(self) -> StorageKey:
        return tuple(sorted(self.storage_options.items()))

    def __hash__(self) -> int:  # storage_options is a dict: hash what it holds
        return hash((self.storage_key, self.columns, self.metric))


@dataclass(frozen=True)
class TableTarget:
    """One table of one database, and how to read it: at its latest version, or pinned to an older one
    (read-only, as LanceDB's ``checkout`` gives it; nothing is restored or tagged)."""

    uri: str
    table_name: str
    options: TableOptions = field(default_factory=TableOptions)
    #: ``None``: the latest version, followed as other programs write; a number: that version only.
    version: int | None = None

    def at(self, version: int | None) -> TableTarget:
        """The same table at ``version`` (``None``: the latest)."""
        return TableTarget(self.uri, self.table_name, self.options, version)


def is_local_uri(uri: str) -> bool:
    scheme = urlparse(uri).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and uri[1:3] in (":\\", ":/"))  # Windows drive


def legacy_fts_folder(uri: str, table: str) -> Path | None:
    """The folder of a legacy Tantivy full-text index, which LanceDB 0.40 rejects."""
    if not is_local_uri(uri):
        return None
    folder = Path(uri.removeprefix("file://")) / f"{table}.lance" / "_indices" / "fts"
    return folder if folder.is_dir() else None


def local_path(uri: str) -> Path:
    return Path(uri[len("file://") :] if uri.startswith("file://") else uri).expanduser()


def folder_shown(uri: str) -> str:
    """The folder a local URI names, as a message shows it: its path, but a ``file://`` URI as written,
    so that a password in it (``file://user:PASSWORD@host/…``) is still one that ``masked`` finds: the
    path made from it has lost the scheme that marks it."""
    return uri if uri.startswith("file://") else str(local_path(uri))
