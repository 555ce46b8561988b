"""The harness: from the agent's ``{db_name, query, limit}`` to results, exactly as cosh runs it.

It resolves the name among the active databases of the registry, embeds the query with the database's
model, searches, and returns the compact output JSON. The window and the CLI call the same path and get
a :class:`SearchReport` with timings and the model used; what the agent sees stays exact.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_gui.core.embedders import EmbedderPool
from recall_gui.core.embedders.base import Embedder, Vector
from recall_gui.core.errors import DatabaseNotFoundError, DimensionMismatchError, InvalidInputError
from recall_gui.core.nearest import open_for_search, search_embedded, search_hits
from recall_gui.core.registry import DatabaseEntry, EmbedderSpec, Registry, load_registry
from recall_gui.core.tables import TableOptions
from recall_gui.core.types import DEFAULT_LIMIT, RecallOutput, RecallSearchInput, SearchResult

_U64_LIMIT = 2**64


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
    if not _is_unicode(query):
        raise InvalidInputError(
            "'query' is not valid Unicode text (it holds an unpaired surrogate)",
            hint="Send the query as UTF-8 text; cosh's JSON parser refuses such a string too.",
        )
    return db_name, query, parse_limit(args.get("limit"))


def _is_unicode(text: str) -> bool:
    """False for strings no UTF-8 encoder (tokenizer, JSON output) can take: lone surrogates."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def table_options(entry: DatabaseEntry) -> TableOptions:
    return TableOptions(entry.storage_options, entry.columns, entry.metric)


@dataclass(frozen=True)
class _Embedded:
    embedder: Embedder
    vector: Vector
    embed_ms: float


def _model_width_error(error: DimensionMismatchError, used: str) -> DimensionMismatchError:
    return DimensionMismatchError(
        error.input_dim,
        error.table_dim,
        hint=f"{used} returned {error.input_dim}-dimensional vectors; the table was built with another "
        "model. Fix the embedder in the registry.",
    )


def _consume_outcome(future: asyncio.Future[Any]) -> None:
    """Mark an overlapped embedding's error as seen: the table's error, raised first, supersedes it."""
    if not future.cancelled():
        future.exception()


@dataclass(frozen=True)
class SearchReport:
    """One harness search: the result plus what the window's status bar shows."""

    database: DatabaseEntry
    result: SearchResult
    model_used: str
    #: How long the query's vector took; with a model that was loaded already, from the call on (the
    #: table's version is read meanwhile), and ``result.search_ms`` is the rest of ``total_ms``.
    embed_ms: float
    total_ms: float

    def to_output(self) -> RecallOutput:
        return self.result.to_output()

    def to_json(self) -> str:
        return self.to_output().to_json()


class Harness:
    """Registry + embedders + search. One per front end; safe to call from any event loop."""

    def __init__(
        self,
        registry_dir: Path,
        *,
        embedders: EmbedderPool | None = None,
    ) -> None:
        self.registry_dir = Path(registry_dir)
        self.embedders = embedders or EmbedderPool()
        self._registry = load_registry(self.registry_dir)

    @property
    def registry(self) -> Registry:
        """The registry, re-read when another program changed its files."""
        if self._registry.changed_on_disk():
            self._registry = load_registry(self.registry_dir)
        return self._registry

    def reload(self) -> Registry:
        self._registry = load_registry(self.registry_dir)
        return self._registry

    def resolve_active(self, db_name: str) -> DatabaseEntry:
        """The active database called ``db_name``; cosh's error text lists the active ones otherwise."""
        registry = self.registry
        for entry in registry.active:
            if entry.name == db_name:
                return entry
        names = ", ".join(db.name for db in registry.active) or "(none)"
        raise DatabaseNotFoundError(
            f"Database '{db_name}' not found. Active databases: {names}",
            hint="Activate it in recall-gui's description panel, or with cosh.",
        )

    async def run(self, args: Mapping[str, Any]) -> SearchReport:
        """The tool call, resolved among the active databases."""
        db_name, query, limit = parse_arguments(args)
        return await self.search_database(self.resolve_active(db_name), query, limit)

    async def recall_search(self, args: Mapping[str, Any]) -> str:
        """Exactly the JSON text the agent receives."""
        return (await self.run(args)).to_json()

    async def search_database(self, entry: DatabaseEntry, query: str, limit: int) -> SearchReport:
        """Embed ``query`` with ``entry``'s model and search its table (active or not: the window may).

        A local model embeds the query while the table is opened (a round trip to LanceDB's runtime),
        not after; a table that cannot be opened is still the error reported. A cloud model waits for the
        table: a request to a provider (paid, and slow anyway) is only sent once the widths agree.
        """
        started = time.perf_counter()
        options = table_options(entry)
        spec = entry.embedder
        loaded = self.embedders.loaded_local(spec)
        # A loaded local model starts on the query now; one still to load, as soon as it has loaded.
        pending = loaded.submit_query(query) if loaded is not None else None
        early: asyncio.Future[_Embedded] | None = None
        if pending is None and spec.kind == "local":
            early = asyncio.ensure_future(self._embed(spec, None, query))
            early.add_done_callback(_consume_outcome)  # its error is raised below, or superseded
        try:
            opened = await open_for_search(entry.uri, entry.table_name, options)
            table_dim = opened.columns.vector_dim
            if spec.dim is not None and spec.dim != table_dim:
                raise DimensionMismatchError(
                    spec.dim,
                    table_dim,
                    hint=f"The registry says {entry.name} uses {spec.label}, but its table holds "
                    f"{table_dim}-dimensional vectors: fix the embedder in the registry.",
                )
        except BaseException:
            for work in (early, pending):
                if work is not None:
                    work.cancel()
            raise
        if loaded is not None and pending is not None:
            try:
                result = await search_embedded(opened, query, limit, pending, options)
            except DimensionMismatchError as error:
                raise _model_width_error(error, loaded.used) from None
            total_ms = (time.perf_counter() - started) * 1000
            return SearchReport(entry, result, loaded.used, total_ms - result.search_ms, total_ms)
        embedded = await (early if early is not None else self._embed(spec, table_dim, query))
        search_input = RecallSearchInput(
            entry.uri, entry.table_name, int(embedded.vector.shape[0]), query, embedded.vector, limit
        )
        try:
            result = await search_hits(search_input, options, opened=opened)
        except DimensionMismatchError as error:
            raise _model_width_error(error, embedded.embedder.used) from None
        total_ms = (time.perf_counter() - started) * 1000
        return SearchReport(entry, result, embedded.embedder.used, embedded.embed_ms, total_ms)

    async def _embed(self, spec: EmbedderSpec, table_dim: int | None, query: str) -> _Embedded:
        embedder = await self.embedders.get(spec, table_dim)
        embed_started = time.perf_counter()
        vector = await embedder.embed_query(query)
        return _Embedded(embedder, vector, (time.perf_counter() - embed_started) * 1000)

    async def aclose(self) -> None:
        await self.embedders.aclose()
