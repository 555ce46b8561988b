"""Adding an opened table to the agents' databases: a cosh registry entry, written safely.

The entry is cosh's (``name``, ``uri``, ``description``, ``embedder``, ``created_at``) plus the optional
keys this app reads where the table needs them (``table``, the column names, ``storage_options`` without
credentials: those stay in the environment, as everywhere else in this app). It is
refused, with one line saying why, when the name is taken, the place holds no such table, or the model's
width is not the table's. The registry file is re-read and changed in place (unknown fields and entries
kept, a file that does not parse never written; see
:func:`recall_gui.core.registry.registry_changes.add_database`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_gui.core.base.control_chars import printable
from recall_gui.core.base.credentials import has_credentials, masked
from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_changes import add_database
from recall_gui.core.registry.registry_types import DatabaseEntry, EmbedderSpec
from recall_gui.core.session.session import Session
from recall_gui.core.storage.columns import ColumnMapping
from recall_gui.core.storage.target import is_secret_option, without_secrets
from recall_gui.core.tables.folders import place_of, read_folder
from recall_gui.core.tables.model_detection import require_fit

#: The column names cosh itself reads; a table with others needs this app's optional registry keys.
COSH_COLUMNS = ("id", "content", "vector")


@dataclass(frozen=True)
class Registration:
    """What the user asked for: the database's name and description, its model, and whether agents may
    search it now."""

    name: str
    description: str
    embedder: EmbedderSpec
    active: bool = True
    #: The user agreed to keep a password written in the URI in the registry file, in plain text.
    store_credentials: bool = False


@dataclass(frozen=True)
class Registered:
    """The entry as written, and what the user should know about it (see :func:`registration_notes`)."""

    raw: dict[str, Any]
    registry_file: Path
    notes: tuple[str, ...]


def embedder_json(spec: EmbedderSpec) -> dict[str, Any]:
    """cosh's serde form of a model."""
    if spec.kind == "local":
        return {"Local": {"model": spec.model}}
    if spec.kind == "cloud":
        return {"Cloud": {"provider": spec.provider or "", "model": spec.model}}
    raise InvalidInputError(
        "no model chosen",
        hint="Choose the model the table was made with: agents embed their queries with it.",
    )


def check_name(name: str, taken: set[str]) -> str | None:
    """Why ``name`` cannot be a new database's name, or ``None``."""
    if not name.strip():
        return "the name is empty"
    if name != name.strip():
        return "the name starts or ends with a space"
    if printable(name) != name:
        return (
            f'the name "{printable(name)}" holds a control character (escaped here): agents and cosh '
            "could not show it"
        )
    if name in taken:
        return f'a database called "{name}" is already registered'
    return None


def registry_entry(
    entry: DatabaseEntry, columns: ColumnMapping, request: Registration, created_at: int
) -> dict[str, Any]:
    """The raw registry entry for ``entry`` (an opened table)."""
    raw: dict[str, Any] = {
        "name": request.name,
        "uri": entry.uri,
        "description": request.description,
        "embedder": embedder_json(request.embedder),
        "created_at": created_at,
    }
    if entry.table_name != request.name:
        raw["table"] = entry.table_name
    found = (columns.id, columns.content, columns.vector)
    keys = ("id_column", "content_column", "vector_column")
    for key, column, cosh in zip(keys, found, COSH_COLUMNS, strict=True):
        if column is not None and column != cosh:
            raw[key] = column
    storage = without_secrets(entry.storage_options)
    if storage:
        raw["storage_options"] = storage
    return raw


def registration_notes(raw: dict[str, Any], entry: DatabaseEntry) -> tuple[str, ...]:
    """What cosh itself ignores in ``raw`` (recall-gui's MCP server reads all of it), and the credentials
    that were not written."""
    notes = []
    withheld = sorted(name for name in entry.storage_options if is_secret_option(name))
    if withheld:
        notes.append(
            f"the credentials ({', '.join(withheld)}) were not written to the registry: give cosh and the "
            "MCP server the AWS_* (or your store's) variables in their environment"
        )
    if "table" in raw:
        notes.append(
            f"cosh itself opens the table named like the database: under this name only recall-gui's "
            f"MCP server finds table “{raw['table']}” (name the database “{raw['table']}” for cosh too)"
        )
    roles = (("id_column", "ids"), ("content_column", "text"), ("vector_column", "vectors"))
    renamed = [f"its {what} in “{raw[key]}”" for key, what in roles if key in raw]
    if renamed:
        notes.append(
            "cosh itself reads the columns id, content and vector; this table keeps "
            + " and ".join(renamed)
            + ", which only recall-gui's MCP server reads"
        )
    return tuple(notes)


def refuse_credentials(uri: str, registry_dir: Path, *, allowed: bool) -> None:
    """Refuse to register ``uri`` when it holds a password, or a query or fragment value that may be one
    (:func:`~recall_gui.core.base.credentials.has_credentials`), the user did not agree to store: the
    registry keeps it in plain text, for every program that reads the file."""
    if allowed or not has_credentials(uri):
        return
    raise InvalidInputError(
        f"not registered: the URI {masked(uri)} holds a password or a key (shown as ***), which would be "
        "stored in plain text in "
        f"{Path(registry_dir) / 'rag_dbs.json'} (which cosh and every MCP server read)",
        hint="Register the URI without it and give the keys as storage options or in the environment "
        "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for S3), or pass --store-credentials to store it "
        "as typed.",
    )


async def register_table(
    session: Session, registry_dir: Path, entry: DatabaseEntry, request: Registration
) -> Registered:
    """Add ``entry``'s table to the registry in ``registry_dir`` as ``request`` says."""
    registry_dir = Path(registry_dir)
    problem = check_name(request.name, {db.name for db in load_registry(registry_dir).databases})
    if problem is not None:
        raise InvalidInputError(f"not registered: {problem}", hint="Choose another name.")
    refuse_credentials(entry.uri, registry_dir, allowed=request.store_credentials)
    embedder_json(request.embedder)  # refuses "no model" before the table is read again
    place = place_of(entry.uri, entry.storage_options)
    folder = await read_folder(session, place)  # the table must still be there, as it is now
    table = folder.table(entry.table_name)
    if table.columns is None:
        raise InvalidInputError(f'not registered: table "{table.name}": {table.problem}')
    require_fit(request.embedder, table.columns.vector_dim, table.name)
    raw = registry_entry(entry, table.columns, request, int(time.time() * 1000))
    add_database(registry_dir, raw, active=request.active)
    return Registered(raw, registry_dir / "rag_dbs.json", registration_notes(raw, entry))
