"""The agent's scope: what an agent's ``recall_search`` searches, kept apart from what the user looks at.

An agent names a registered, active database; it searches that table's latest version, without a
filter, with the limit it sends, in LanceDB's order. The user's view can be anything else: a folder
opened by its path, an older version, a Where filter, rows chosen on the map, another limit. A claim
about the agent (would it see this entry, at which rank) is computed in :class:`AgentScope`; the
differences of a :class:`ViewScope` from it are said in words beside the claim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from recall_gui.core.base.captions import quoted
from recall_gui.core.base.types import DEFAULT_LIMIT
from recall_gui.core.registry.registry_types import DatabaseEntry, Registry


@dataclass(frozen=True)
class ViewScope:
    """What the user looks at: a database (registered, or a folder's table opened by its path), the
    version shown, the Where filter, the rows chosen on the map, and the limit searched with."""

    entry: DatabaseEntry
    #: ``None``: the latest version.
    version: int | None = None
    #: The metadata filter (a LanceDB SQL predicate), ``None`` for none.
    where: str | None = None
    #: What the rows chosen on the map are called ("chosen on the map"), ``None`` when none are.
    selection: str | None = None
    limit: int = DEFAULT_LIMIT

    def __post_init__(self) -> None:
        if self.where is not None and not self.where.strip():
            object.__setattr__(self, "where", None)


@dataclass(frozen=True)
class AgentScope:
    """What an agent searches for the table a view shows: ``entry``'s table at its latest version, no
    filter, ``limit`` results, in LanceDB's order.

    ``entry`` is the registered database an agent names for that table. When no agent can search the
    table (``searched`` false: it is not registered, or not active), ``entry`` is what an agent would
    search once it were, and ``why_not`` says what stands in the way.
    """

    entry: DatabaseEntry
    limit: int = DEFAULT_LIMIT
    searched: bool = True
    why_not: str | None = None
    #: The view's table is a folder opened by its path that the registry holds as ``entry``.
    opened_as_registered: bool = field(default=False)


def _place(uri: str) -> str:
    """``uri`` in one spelling: a local folder as its resolved path, an object-store URI without the
    trailing slash."""
    scheme = urlparse(uri).scheme
    local = scheme in ("", "file") or (len(scheme) == 1 and uri[1:3] in (":\\", ":/"))
    if not local:
        return uri.rstrip("/")
    path = Path(uri.removeprefix("file://")).expanduser()
    # A path that cannot be resolved (a symlink loop: RuntimeError before Python 3.13) is compared as written.
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):
        return str(path)


def same_table(first: DatabaseEntry, second: DatabaseEntry) -> bool:
    """Whether both entries read the same table (the same folder or URI, the same table name)."""
    return reads_table(first, second.uri, second.table_name)


def reads_table(entry: DatabaseEntry, uri: str, table: str) -> bool:
    """Whether ``entry`` reads the table ``table`` of the folder or URI ``uri``."""
    return entry.table_name == table and _place(entry.uri) == _place(uri)


def agent_scope_of(view: ViewScope, registry: Registry, limit: int | None = None) -> AgentScope:
    """The agent's scope for the table ``view`` shows, as the registry stands; ``limit``: the agent's
    limit (``None``: the view's)."""
    limit = view.limit if limit is None else limit
    shown = view.entry
    if shown.origin == "registry":
        # The agent resolves a name among the active databases, the first that carries it.
        active = next((db for db in registry.active if db.name == shown.name), None)
        if active is not None:
            return AgentScope(active, limit)
        registered = registry.get(shown.name)
        if registered is None:
            return AgentScope(shown, limit, False, "it is not registered")
        return AgentScope(registered, limit, False, "it is not active")
    matches = [db for db in registry.databases if same_table(db, shown)]
    active_match = next((db for db in matches if db.active), None)
    if active_match is not None:
        return AgentScope(active_match, limit, opened_as_registered=True)
    if matches:
        why = f"it is registered as {quoted(matches[0].name)}, which is not active"
        return AgentScope(matches[0], limit, False, why, opened_as_registered=True)
    return AgentScope(shown, limit, False, "it is not registered")


def same_search(view: ViewScope, agent: AgentScope) -> bool:
    """Whether a search in ``view`` is the agent's search (the same table read the same way, the latest
    version, no filter, the same limit); rows chosen on the map narrow browsing, not searching."""
    return (
        view.version is None
        and view.where is None
        and view.limit == agent.limit
        and view.entry.target == agent.entry.target
        and view.entry.embedder == agent.entry.embedder
    )


def differences(view: ViewScope, agent: AgentScope, latest: int | None = None) -> tuple[str, ...]:
    """How ``view`` differs from the agent's scope, as short texts a user reads beside a claim about the
    agent (empty when they are the same); ``latest``: the number of the table's latest version."""
    texts = []
    if not agent.searched:
        what = "this folder" if view.entry.origin == "opened" else agent.entry.name
        texts.append(f"no agent searches {what}: {agent.why_not}")
    elif agent.opened_as_registered:
        texts.append(f"agents search this folder's table as the registered database {agent.entry.name}")
    if view.version is not None:
        number = f" ({latest})" if latest is not None else ""
        texts.append(f"the agent searches the latest version{number}, not version {view.version}")
    if view.where is not None:
        texts.append("the agent searches without your filter")
    if view.selection is not None:
        texts.append(f"the agent searches every row, not only the rows {view.selection}")
    if view.limit != agent.limit:
        texts.append(f"the agent's limit is {agent.limit:,}, not {view.limit:,}")
    return tuple(texts)
