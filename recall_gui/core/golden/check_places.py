"""Where a golden check runs, decided when it runs.

A check names a registered database (``db_name``): it runs on the active database of that name, as an
agent's ``recall_search`` resolves it. A check made on a folder opened by its path names the folder and
its table: it follows the registry, so registering the folder needs no edit of the golden file. It runs
on the registered database that reads the same table (same folder or URI, same table) when there is
one, as the agent searches it; until then on the folder itself, with the model the check was made with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from recall_gui.core.base.captions import quoted
from recall_gui.core.base.credentials import masked
from recall_gui.core.base.errors import RecallError
from recall_gui.core.golden.expected import Expected
from recall_gui.core.golden.golden import FolderTable, GoldenCheck
from recall_gui.core.registry.registry_advice import activate_hint
from recall_gui.core.registry.registry_types import DatabaseEntry, Registry
from recall_gui.core.search.agent_scope import reads_table

if TYPE_CHECKING:
    from recall_gui.core.search.harness import Harness


@dataclass(frozen=True)
class CheckPlace:
    """The database a check runs on now, or why it cannot run."""

    #: What the check searches, in words ("notes", "notes (registered from the check's folder)", …).
    text: str
    entry: DatabaseEntry | None = None
    #: The name an agent sends for it; ``None`` when no agent can search it (a folder not registered).
    agent_name: str | None = None
    error: str | None = None
    hint: str | None = None


def registered_match(folder: FolderTable, registry: Registry) -> DatabaseEntry | None:
    """The registered database that reads the folder's table (an active one first), if any."""
    matches = [entry for entry in registry.databases if reads_table(entry, folder.uri, folder.table)]
    return next((entry for entry in matches if entry.active), matches[0] if matches else None)


def folder_text(folder: FolderTable) -> str:
    return f"folder {masked(folder.uri)}, table {folder.table}"


def place_text(check: GoldenCheck, registry: Registry) -> str:
    """Where ``check`` runs as the registry stands, in words, without opening anything (the window's
    list of checks shows it)."""
    if check.folder is None:
        assert check.db_name is not None
        return check.db_name
    match = registered_match(check.folder, registry)
    if match is None:
        return f"{folder_text(check.folder)} (not registered)"
    state = "registered" if match.active else "registered, not active"
    return f"{match.name} ({state}; the check names its folder)"


def check_for(
    entry: DatabaseEntry, registry: Registry, query: str, expect: tuple[Expected, ...], limit: int | None
) -> GoldenCheck:
    """A check of ``query`` made on ``entry``: by its registered name, or, for a folder opened by its
    path that no registered database reads, by the folder, its table and the model it is searched with
    (so it keeps running once the folder is registered under any name)."""
    if entry.origin != "opened":
        return GoldenCheck(entry.name, query, expect, limit)
    from recall_gui.core.tables.model_detection import model_text  # loads NumPy: not at the window's start

    folder = FolderTable(entry.uri, entry.table_name, model_text(entry.embedder))
    match = registered_match(folder, registry)
    if match is not None:
        return GoldenCheck(match.name, query, expect, limit)
    return GoldenCheck(None, query, expect, limit, folder)


async def locate(harness: Harness, check: GoldenCheck) -> CheckPlace:
    """The database ``check`` runs on, as the registry stands now; a folder is opened (read-only) when
    no registered database reads its table."""
    if check.folder is None:
        assert check.db_name is not None
        try:
            entry = harness.resolve_active(check.db_name)
        except RecallError as error:
            return CheckPlace(check.db_name, error=error.message, hint=error.hint)
        return CheckPlace(check.db_name, entry, entry.name)
    folder = check.folder
    text = place_text(check, harness.registry)
    match = registered_match(folder, harness.registry)
    if match is not None:
        if not match.active:
            return CheckPlace(
                text,
                error=f"the check's folder is registered as {quoted(match.name)}, which is not active: "
                "agents cannot search it",
                hint=activate_hint(match.name),
            )
        return CheckPlace(text, match, match.name)
    try:
        from recall_gui.core.tables.folders import open_table

        opened = await open_table(harness.session, folder.uri, table=folder.table, model=folder.model)
    except RecallError as error:
        return CheckPlace(text, error=f"{folder_text(folder)}: {error.message}", hint=error.hint)
    return CheckPlace(text, opened.entry)
