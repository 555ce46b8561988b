"""What to tell a user whose registry is missing, broken or empty, or does not list the database asked for.

Every front end says the same: the command line (``list``, ``search``, ``tool``, ``mcp``), the MCP
server's log and the window.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from recall_gui.core.base.errors import RegistryError
from recall_gui.core.base.paths import (
    DBS_FILE,
    REGISTRY_ENV,
    RegistryLocation,
    app_registry_dir,
    cosh_registry_dir,
    folder_problem,
)
from recall_gui.core.registry.registry_types import Registry

#: How many registry problems a hint lists one by one.
PROBLEMS_IN_HINT = 3

DEMO_ADVICE = (
    "Build the demo knowledge base with `recall-gui demo` (or File ▸ Build Demo Knowledge Base in the "
    "window), add a LanceDB folder you have with `recall-gui register PATH --name NAME` (or open it with "
    "File ▸ Open Folder…), or add a database with cosh."
)

_LOCATION_HINTS = {
    "--registry": f"Give --registry the folder that holds {DBS_FILE}, or leave it out to use the default "
    "registry.",
    REGISTRY_ENV: f"Point ${REGISTRY_ENV} at the folder that holds {DBS_FILE}, or unset it.",
}


def location_problem(where: RegistryLocation) -> RegistryError | None:
    """What is wrong with the registry folder itself (one that does not exist, a file, a link loop …);
    ``None`` when it is a folder, or when it is the app's own registry not created yet (a fresh install)."""
    problem = folder_problem(where.directory)
    if problem is None or (where.is_app_registry and problem == "does not exist"):
        return None
    origin = {"--registry": " (given with --registry)", REGISTRY_ENV: f" (from ${REGISTRY_ENV})"}
    hint = _LOCATION_HINTS.get(
        where.source, f"recall-gui keeps its own registry there: move whatever is at {where.directory} away."
    )
    return RegistryError(
        f"the registry folder {where.directory}{origin.get(where.source, '')} {problem}", hint=hint
    )


def cosh_reads(where: RegistryLocation) -> bool:
    """Whether cosh reads the registry at ``where`` (cosh reads only its own)."""
    return Path(where.directory).expanduser() == cosh_registry_dir()


def registry_readers(where: RegistryLocation) -> str:
    """Which registry ``where`` is, its file, and who reads it: what a sentence about writing to it says."""
    file = Path(where.directory) / DBS_FILE
    if cosh_reads(where):
        return f"cosh's registry ({file}), which cosh and `recall-gui mcp` read"
    if is_app_registry(where.directory):
        which, mcp = "recall-gui's own registry", "`recall-gui mcp` reads it"
    else:
        chosen_by = "--registry" if where.source == "--registry" else f"${REGISTRY_ENV}"
        which = f"the registry chosen with {chosen_by}"
        mcp = f"`recall-gui mcp` reads it when given the same {chosen_by}"
    return f"{which} ({file}): {mcp}; cosh does not (cosh reads only {cosh_registry_dir() / DBS_FILE})"


def offered_by(where: RegistryLocation) -> str:
    """Who offers a database just added to the registry at ``where`` to agents, in a sentence."""
    if cosh_reads(where):
        return "cosh and `recall-gui mcp` offer it from their next tool listing."
    return (
        "`recall-gui mcp` offers it from its next tool listing when it reads this registry; cosh does not "
        "read this registry, only its own."
    )


def is_app_registry(directory: Path) -> bool:
    """Whether ``directory`` is the app's own registry (where the demo is registered)."""
    return Path(directory).expanduser() == app_registry_dir()


def empty_registry_hint(directory: Path) -> str:
    """What to do when the registry lists no database."""
    if is_app_registry(directory):
        return f"Nothing is registered yet. {DEMO_ADVICE}"
    return (
        "Add a LanceDB folder to it with `recall-gui register PATH --name NAME`, or a database with cosh, "
        f"or choose another registry with --registry or ${REGISTRY_ENV}."
    )


def activate_hint(name: str) -> str:
    """How to activate the registered database ``name``: the command first (a terminal reads this as
    often as the window does), then the window, then cosh."""
    return (
        f"Activate it with `recall-gui activate {shlex.quote(name)}`, on the window's Agent's tool "
        "description page, or with cosh."
    )


def not_found_hint(registry: Registry, name: str) -> str:
    """What to do when an agent's ``db_name`` is not among the active databases: activate it when it is
    registered; otherwise say where it was looked for, what may hide it, and how to add one."""
    entry = registry.get(name)
    if entry is not None:
        return f'"{name}" is registered but not active. {activate_hint(name)}'
    parts = [f'No database called "{name}" is registered in {registry.directory}.']
    problem = folder_problem(registry.directory)
    if problem is not None and not (is_app_registry(registry.directory) and problem == "does not exist"):
        parts.append(f"The registry folder {problem}.")
    if registry.problems:
        shown = "; ".join(str(p) for p in registry.problems[:PROBLEMS_IN_HINT])
        more = len(registry.problems) - PROBLEMS_IN_HINT
        parts.append(
            f"The registry has problems that may hide it: {shown}"
            + (f" (and {more} more)." if more > 0 else ".")
        )
    if is_app_registry(registry.directory):
        parts.append(DEMO_ADVICE)
    else:
        parts.append(
            "Check the name, or add the database with `recall-gui register PATH --name NAME` or cosh."
        )
    return " ".join(parts)
