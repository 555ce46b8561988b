"""Full-text and hybrid search beside the agent's vector search, where the table has a native full-text
index. Both are LanceDB's own: BM25 over the index, and vector plus full-text fused by LanceDB's RRF
reranker. No index is ever built: without one, the error says how a user would build it.

The agent's search stays vector-only; these answer "would words have found it?" next to what the agent
gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.types import RecallEntry, RecallOutput
from recall_gui.core.embedders.base import ModelInfo
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness
from recall_gui.core.storage.rows import columns_from_arrow
from recall_gui.core.storage.target import legacy_fts_folder

TextMethod = Literal["fts", "hybrid"]


@dataclass(frozen=True)
class TextSearchResult:
    output: RecallOutput
    #: LanceDB's score of each result: BM25 (``_score``) or the RRF relevance (``_relevance_score``).
    scores: tuple[float, ...]
    method: TextMethod
    #: What embedded the query for a hybrid search: exact (the agent's model) or a stand-in; ``None`` for
    #: full-text, which embeds nothing.
    model: ModelInfo | None = None


def _no_index(entry: DatabaseEntry) -> InvalidInputError:
    target = entry.target
    legacy = legacy_fts_folder(target.uri, target.table_name)
    build = 'build one in LanceDB, e.g. table.create_index("content", config=FTS())'
    if legacy is not None:
        return InvalidInputError(
            f'"{entry.name}" cannot be searched by its words: its full-text index is a legacy (Tantivy) '
            "one, which LanceDB 0.40 cannot search",
            hint=f"Delete {legacy}, then {build}; recall-gui never writes to a knowledge base.",
        )
    return InvalidInputError(
        f'"{entry.name}" cannot be searched by its words: it has no full-text index',
        hint=f"{build[0].upper()}{build[1:]}; recall-gui never writes to a knowledge base.",
    )


async def text_search(
    harness: Harness,
    entry: DatabaseEntry,
    query: str,
    limit: int,
    method: TextMethod,
    *,
    where: str | None = None,
) -> TextSearchResult:
    """LanceDB's full-text (``"fts"``) or hybrid (``"hybrid"``, vector and full-text fused by RRF) answer."""
    opened = await harness.session.tables.open(entry.target)
    if not any(index.index_type.upper() in ("FTS", "INVERTED") for index in opened.indexes):
        raise _no_index(entry)
    words = query.replace('"', " ")  # a quote would make LanceDB parse a phrase query it refuses here
    columns = opened.columns
    wanted = [name for name in (columns.id, columns.content) if name is not None]
    table: Any = opened.table
    model: ModelInfo | None = None
    if method == "fts":
        search = table.query().nearest_to_text(words)
        score = "_score"
    else:
        from lancedb.rerankers import RRFReranker

        # The query vector exactly as the agent's search makes it (same model, same width checks).
        vector_report = await harness.search_database(entry, query, limit, where=where)
        if vector_report.vector is None:  # pragma: no cover - a search always reports its vector
            raise InvalidInputError(f'"{entry.name}" gave no query vector to fuse with')
        model = vector_report.model
        search = (
            table.query()
            .nearest_to(vector_report.vector)
            .distance_type(vector_report.result.metric)
            .nearest_to_text(words)
            .rerank(RRFReranker())
        )
        score = "_relevance_score"
    if where is not None:
        await opened.check_filter(where)
        search = search.where(where)
    # Selecting the score (full-text) or nothing (hybrid, whose vector half would need _distance) keeps
    # LanceDB from warning on stderr that it adds the score column itself.
    chosen = search.select([*wanted, score]) if method == "fts" else search
    rows = await chosen.with_row_id().limit(limit).to_arrow()
    found = columns_from_arrow(rows.drop_columns([score]) if score in rows.column_names else rows, columns)
    scores = rows.column(score).to_pylist() if score in rows.column_names else [0.0] * rows.num_rows
    output = RecallOutput(
        query, tuple(RecallEntry(i, c) for i, c in zip(found.ids, found.contents, strict=True))
    )
    return TextSearchResult(output, tuple(float(s) for s in scores), method, model)
