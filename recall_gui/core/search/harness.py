"""The harness: from the agent's ``{db_name, query, limit}`` to results, exactly as cosh runs it.

It resolves the name among the active databases of the registry, embeds the query with the database's
model, searches, and returns the compact output JSON. The window and the CLI call the same path and get
a :class:`SearchReport` with timings and the model used; what the agent sees stays exact.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recall_gui.core.base.errors import DatabaseNotFoundError, InvalidInputError
from recall_gui.core.base.surrogates import is_unicode
from recall_gui.core.base.types import (
    DEFAULT_LIMIT,
    MAX_QUERY_CHARS,
    QUERY_TOO_LONG_HINT,
    RecallOutput,
    SearchResult,
    query_too_long,
)
from recall_gui.core.embedders.base import ModelInfo, QueryVector, Vector
from recall_gui.core.registry.registry_advice import not_found_hint
from recall_gui.core.registry.registry_keeper import RegistryKeeper
from recall_gui.core.registry.registry_types import DatabaseEntry, Registry
from recall_gui.core.search.nearest import open_for_search, rank, require_width
from recall_gui.core.session.session import Session
from recall_gui.core.tables.model_detection import no_model_error

_U64_LIMIT = 2**64
#: The columns an agent's hit needs besides its id and content: none.
AGENT_COLUMNS: tuple[str, ...] = ()


def parse_limit(value: Any) -> int:
    """cosh's rule: a non-negative integer is used as is; anything else (missing, negative, 2.5,
    "3", true) means 5."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _U64_LIMIT:
        return value
    return DEFAULT_LIMIT


def parse_arguments(args: Mapping[str, Any]) -> tuple[str, str, int]:
    """``db_name``, ``query`` and ``limit`` from tool arguments, with cosh's error texts."""
    db_name = args.get("db_name")
    if not isinstance(db_name, str):
        raise InvalidInputError("missing 'db_name'")
    query = args.get("query")
    if not isinstance(query, str):
        raise InvalidInputError("missing 'query'")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInputError(query_too_long(len(query)), hint=QUERY_TOO_LONG_HINT)
    if not is_unicode(query):
        raise InvalidInputError(
            "'query' is not valid Unicode text (it holds an unpaired surrogate)",
            hint="Send the query as UTF-8 text; cosh's JSON parser refuses such a string too.",
        )
    return db_name, query, parse_limit(args.get("limit"))


@dataclass(frozen=True)
class SearchReport:
    """One harness search: the result plus what the window's status bar shows."""

    database: DatabaseEntry
    result: SearchResult
    model_used: str
    #: Until the query's vector was there (a model's load included); ``result.search_ms`` is the rest of
    #: ``total_ms``.
    embed_ms: float
    total_ms: float
    #: The query's vector as the ranking used it (the map places the query with it).
    vector: Vector | None = field(default=None, compare=False)
    #: What embedded the query: exact (the agent's model) or a stand-in; ``None`` for a vector at hand.
    model: ModelInfo | None = None

    def to_output(self) -> RecallOutput:
        return self.result.to_output()

    def to_json(self) -> str:
        return self.to_output().to_json()


class Harness:
    """Registry + session + the search pipeline. One per front end; safe to call from any event loop.

    ``session``: the caches and worker threads to use; without one the harness makes its own and closes
    it in :meth:`aclose` (a session handed in is the caller's to close).

    ``registry``: where the registry comes from. Without it the harness reads ``registry_dir`` itself and
    reads it again whenever its files change (the CLI, the MCP server). A front end that already keeps a
    snapshot (the window, which reads it off its GUI thread and watches the files) hands its snapshot's
    getter instead: then the harness never reads the registry, and there is one copy of it.
    """

    def __init__(
        self,
        registry_dir: Path,
        *,
        session: Session | None = None,
        registry: Callable[[], Registry] | None = None,
    ) -> None:
        self.registry_dir = Path(registry_dir)
        self._owns_session = session is None
        self.session = session if session is not None else Session()
        self._provided = registry
        self._keeper = RegistryKeeper(self.registry_dir) if registry is None else None
        if self._keeper is not None:
            self._keeper.get()

    @property
    def registry(self) -> Registry:
        """The registry: the provider's snapshot, else this harness's own, re-read when another program
        changed its files (and kept as last read whole while one does not parse: see
        :class:`RegistryKeeper`)."""
        if self._provided is not None:
            return self._provided()
        assert self._keeper is not None
        return self._keeper.get()

    def reload(self) -> Registry:
        """The registry read again (with a provider: the provider's snapshot, which its owner refreshes)."""
        if self._provided is not None:
            return self._provided()
        assert self._keeper is not None
        return self._keeper.reload()

    def resolve_active(self, db_name: str) -> DatabaseEntry:
        """The active database called ``db_name``; cosh's error text lists the active ones otherwise."""
        registry = self.registry
        for entry in registry.active:
            if entry.name == db_name:
                return entry
        names = ", ".join(db.name for db in registry.active) or "(none)"
        raise DatabaseNotFoundError(
            f"Database '{db_name}' not found. Active databases: {names}",
            hint=not_found_hint(registry, db_name),
        )

    async def run(self, args: Mapping[str, Any]) -> SearchReport:
        """The tool call, resolved among the active databases; its hits carry only what the agent gets
        (id and content: no other column is read)."""
        db_name, query, limit = parse_arguments(args)
        return await self.search_database(self.resolve_active(db_name), query, limit, columns=AGENT_COLUMNS)

    async def recall_search(self, args: Mapping[str, Any]) -> str:
        """Exactly the JSON text the agent receives."""
        return (await self.run(args)).to_json()

    async def search_database(
        self,
        entry: DatabaseEntry,
        query: str,
        limit: int,
        *,
        where: str | None = None,
        version: int | None = None,
        columns: Sequence[str] | None = None,
    ) -> SearchReport:
        """The search pipeline: embed ``query`` with ``entry``'s model and rank ``entry``'s table by it
        (active or not: the window may search any database).

        1. A local model starts on the query at once (loading first if need be), while the table opens.
        2. The table opens; the model's known width must be the table's.
        3. A cloud model starts only now: a request to a provider (paid, and slow anyway) is only sent once
           the widths agree.
        4. Ranking waits for the vector only where it needs it.

        ``where``: a LanceDB SQL predicate applied before ranking (the agent's search has none);
        ``version``: search that version of the table, read-only (``None``: the latest); ``columns``: the
        columns each hit carries besides id and content (``None``: all, and its vector; the window shows
        them).
        """
        models, spec = self.session.models, entry.embedder

        def embed(table_dim: int) -> QueryVector:
            return models.start_query(spec, query, table_dim)

        early = models.start_query(spec, query) if spec.kind == "local" else None
        return await self._search(
            entry, query, early or embed, limit, where=where, version=version, columns=columns
        )

    async def search_vector(
        self,
        entry: DatabaseEntry,
        vector: Vector,
        limit: int,
        *,
        label: str,
        where: str | None = None,
        version: int | None = None,
    ) -> SearchReport:
        """The same pipeline for a vector at hand (a stored row's: "more like this"); ``label`` says whose
        vector it is, where a search by text shows the query."""
        given = QueryVector.given(vector, label)
        return await self._search(entry, label, given, limit, where=where, version=version, columns=None)

    async def _search(
        self,
        entry: DatabaseEntry,
        query: str,
        vector: QueryVector | Callable[[int], QueryVector],
        limit: int,
        *,
        where: str | None,
        version: int | None,
        columns: Sequence[str] | None,
    ) -> SearchReport:
        """Open, check the width, rank; ``vector`` is under way already, or is started once the table's
        width is known (a cloud request)."""
        started = time.perf_counter()
        target = entry.target.at(version)
        spec = entry.embedder
        query_vector = vector if isinstance(vector, QueryVector) else None
        try:
            opened = await open_for_search(self.session, target)
            table_dim = opened.columns.vector_dim
            given = query_vector is not None and query_vector.given_vector
            if spec.kind == "unknown" and not given:  # an opened table no model fits: say why, what to do
                raise no_model_error(entry, table_dim)
            if spec.dim is not None and not given:
                require_width(
                    spec.dim,
                    table_dim,
                    f"The registry says {entry.name} uses {spec.label}, but its table holds "
                    f"{table_dim}-dimensional vectors: fix the embedder in the registry.",
                )
            if query_vector is None:
                assert not isinstance(vector, QueryVector)
                query_vector = vector(table_dim)
            ranked = await rank(
                self.session, opened, query_vector, limit, target.options, where=where, columns=columns
            )
        except BaseException:
            if query_vector is not None:
                query_vector.cancel()
                _consume_outcome(query_vector)
            raise
        ended = time.perf_counter()
        search_ms = (ended - max(started, query_vector.ready_at or started)) * 1000
        total_ms = (ended - started) * 1000
        result = ranked.result(query, search_ms, opened.version)
        return SearchReport(
            entry,
            result,
            ranked.query.used,
            total_ms - search_ms,
            total_ms,
            ranked.query.vector,
            ranked.query.model,
        )

    async def aclose(self) -> None:
        if self._owns_session:
            await self.session.aclose()


def model_of(harness: Harness, entry: DatabaseEntry | None) -> ModelInfo | None:
    """What embeds ``entry``'s queries in ``harness``'s session (``None`` before any was embedded)."""
    return None if entry is None else harness.session.models.model_info(entry.embedder)


def _consume_outcome(query: QueryVector) -> None:
    """Mark an abandoned embedding's error as seen: the error raised instead supersedes it."""
    query.future.add_done_callback(lambda done: done.cancelled() or done.exception())
