"""Calls into the core for tests that need one answer and no state between calls: each runs in a
session of its own, opened and closed around it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from recall_gui.core.base.types import RecallOutput, RecallSearchInput, SearchHit, SearchResult
    from recall_gui.core.session.session import Session
    from recall_gui.core.storage.target import TableOptions
    from recall_gui.core.tables.browse import Page, TableInfo

T = TypeVar("T")


def in_session(call: Callable[[Session], Awaitable[T]]) -> T:
    """``call(session)`` on a fresh session, run to its end."""
    from recall_gui.core.session.session import Session

    async def run() -> T:
        async with Session() as session:
            return await call(session)

    return asyncio.run(run())


def target(uri: str, table: str, options: TableOptions | None = None) -> Any:
    from recall_gui.core.storage.target import TableOptions, TableTarget

    return TableTarget(str(uri), table, options or TableOptions())


def describe(uri: str, table: str, options: TableOptions | None = None) -> TableInfo:
    from recall_gui.core.tables.browse import describe_table

    return in_session(lambda session: describe_table(session, target(uri, table, options)))


def read_page(
    uri: str,
    table: str,
    *,
    offset: int,
    limit: int,
    filter_text: str = "",
    options: TableOptions | None = None,
) -> Page:
    from recall_gui.core.tables.browse import fetch_page

    where = target(uri, table, options)
    return in_session(
        lambda session: fetch_page(session, where, offset=offset, limit=limit, filter_text=filter_text)
    )


def read_row(uri: str, table: str, row_id: int, options: TableOptions | None = None) -> SearchHit | None:
    from recall_gui.core.tables.browse import fetch_row

    return in_session(lambda session: fetch_row(session, target(uri, table, options), row_id))


def search(input: RecallSearchInput, options: TableOptions | None = None) -> RecallOutput:
    from recall_gui.core.search.nearest import search as nearest_search

    return in_session(lambda session: nearest_search(session, input, options))


def search_hits(input: RecallSearchInput, options: TableOptions | None = None) -> SearchResult:
    from recall_gui.core.search.nearest import search_hits as nearest_search_hits

    return in_session(lambda session: nearest_search_hits(session, input, options))


def query_session(embedder: Any) -> Any:
    """The onnxruntime session a local model embeds queries with: the direct model's own (the published
    weights, the packaged stand-in), or fastembed's (``TextEmbedding`` -> its ONNX model -> the session)."""
    return onnx_session(embedder._model)


def onnx_session(model: Any) -> Any:
    """The onnxruntime session of a loaded model (see :func:`query_session`)."""
    from recall_gui.core.embedders.direct import DirectQueryModel

    return model.session if isinstance(model, DirectQueryModel) else model.model.model
