"""Reading cosh's database registry (``rag_dbs.json`` + ``rag_active.json``) into a :class:`Registry`.

Reading never fails as a whole: every problem (a file that does not parse, an entry with a wrong type, a
duplicate name) becomes a :class:`RegistryProblem` naming the file and position, and the rest is used.
Changing the files is :mod:`recall_gui.core.registry.registry_changes`; the JSON itself,
:mod:`recall_gui.core.registry.registry_json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from recall_gui.core.base.collector import collection_paused
from recall_gui.core.base.endpoints import storage_option_problem
from recall_gui.core.base.paths import ACTIVE_FILE, DBS_FILE
from recall_gui.core.base.surrogates import first_surrogate, is_unicode, replaced
from recall_gui.core.registry.registry_json import ParseFailure, read_json
from recall_gui.core.registry.registry_types import (
    DatabaseEntry,
    EmbedderSpec,
    FileStamp,
    Registry,
    RegistryProblem,
    require_unicode,
)
from recall_gui.core.storage.columns import ColumnOverrides


def _optional_str(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f'"{key}" must be a string')
    require_unicode(f'"{key}"', value)
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
    require_unicode('"name"', name)
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
        require_unicode('"uri"', uri)
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
            require_unicode('a "storage_options" name', key)
            require_unicode(f'"storage_options.{key}"', value, secret=True)
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


def _read_active(path: Path, problems: list[RegistryProblem], unparsed: list[Path]) -> list[str]:
    try:
        data = read_json(path, problems)
    except ParseFailure:
        unparsed.append(path)
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
    with collection_paused():
        registry = _load_once(directory, previous)
        for _ in range(READ_ATTEMPTS - 1):
            if not registry.problems or not registry.changed_on_disk():
                break
            registry = _load_once(directory, previous)
    return registry


def _load_once(directory: Path, previous: Registry | None = None) -> Registry:
    dbs_path, active_path = directory / DBS_FILE, directory / ACTIVE_FILE
    stamps = (FileStamp.of(dbs_path), FileStamp.of(active_path))
    problems: list[RegistryProblem] = []
    unparsed: list[Path] = []
    active_names = _read_active(active_path, problems, unparsed)
    texts: list[str] = []
    try:
        data = read_json(dbs_path, problems, texts)
    except ParseFailure:
        unparsed.append(dbs_path)
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
    return Registry(directory, tuple(databases), tuple(problems), stamps, sources, tuple(unparsed))
