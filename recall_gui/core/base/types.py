"""The typed input and output of a recall search (cosh's `recall::types`).

The JSON shapes are a contract with agents: an output serialises to exactly
``{"query": ..., "results": [{"id": ..., "content": ...}]}`` and nothing else. The richer data the window
needs (distances, timings, other columns) lives in :class:`SearchHit` and :class:`SearchResult`, which
convert down to :class:`RecallOutput` without losing the order.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recall_gui.core.base.errors import InvalidInputError

if TYPE_CHECKING:
    from typing import TypeAlias

    import numpy as np
    import numpy.typing as npt

    #: A stored vector: a NumPy row as searches return it, or plain floats.
    Vector: TypeAlias = Sequence[float] | npt.NDArray[np.floating[Any]]

DEFAULT_LIMIT = 5
#: The most results one search returns. LanceDB takes a 32-bit limit; a larger one (cosh accepts any
#: u64) asks for "every row" just the same on any table this app can open.
MAX_LIMIT = 2**31 - 1
#: The longest query searched, in characters: what the window's query box holds. Longer than any model
#: served reads whole, and bounded so one call cannot take the server's memory
#: (docs/PERFORMANCE_LOG.md#bounds-behind-constants).
MAX_QUERY_CHARS = 102_400
#: The most of a golden file (or a file of queries) read: hundreds of thousands of checks.
GOLDEN_MAX_BYTES = 64 << 20
QUERY_TOO_LONG_HINT = (
    "Search with the question itself: an embedding model reads only the first few hundred to few "
    "thousand words of a text."
)


def query_too_long(chars: int) -> str:
    """Why a query of ``chars`` characters is refused (the same words in every front end)."""
    return f"the query is {chars:,} characters long; at most {MAX_QUERY_CHARS:,} are searched"


def effective_limit(limit: int | None) -> int:
    """The number of results asked for: a missing (or negative) limit means 5, as in cosh's harness; a
    limit beyond :data:`MAX_LIMIT` means every row, as it does in cosh."""
    if limit is None or limit < 0:
        return DEFAULT_LIMIT
    return min(limit, MAX_LIMIT)


@dataclass(frozen=True)
class RecallSearchInput:
    """Everything the low-level search needs; the harness fills it from the registry and the embedder."""

    db_uri: str
    table_name: str
    vector_dim: int
    query: str
    #: A list of floats, or a NumPy array (what embedders return; it is used without copying).
    query_vector: Sequence[float] | npt.NDArray[np.floating[Any]]
    limit: int | None = None

    @property
    def effective_limit(self) -> int:
        return effective_limit(self.limit)

    def to_dict(self) -> dict[str, Any]:
        return {
            "db_uri": self.db_uri,
            "table_name": self.table_name,
            "vector_dim": self.vector_dim,
            "query": self.query,
            "query_vector": [float(x) for x in self.query_vector],
            "limit": self.limit,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RecallSearchInput:
        """Build an input from its JSON object, rejecting wrong types with a clear message."""
        try:
            db_uri = _require(data, "db_uri", str)
            table_name = _require(data, "table_name", str)
            vector_dim = _require(data, "vector_dim", int)
            query = _require(data, "query", str)
            raw_vector = data["query_vector"]
        except KeyError as missing:
            raise InvalidInputError(f"missing {missing.args[0]!r}") from None
        if not isinstance(raw_vector, list) or not all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in raw_vector
        ):
            raise InvalidInputError("'query_vector' must be a list of numbers")
        limit = data.get("limit")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
            raise InvalidInputError("'limit' must be a non-negative integer or null")
        return cls(db_uri, table_name, vector_dim, query, [float(x) for x in raw_vector], limit)

    @classmethod
    def from_json(cls, text: str) -> RecallSearchInput:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise InvalidInputError("a search input must be a JSON object")
        return cls.from_dict(data)


def _require(data: Mapping[str, Any], key: str, kind: type) -> Any:
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InvalidInputError(f"{key!r} must be of type {kind.__name__}")
    return value


@dataclass(frozen=True)
class RecallEntry:
    """One result as the agent sees it."""

    id: str
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "content": self.content}


@dataclass(frozen=True)
class RecallOutput:
    """The agent-facing result: the query and its entries, nearest first."""

    query: str
    results: tuple[RecallEntry, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "results": [entry.to_dict() for entry in self.results]}

    def to_json(self) -> str:
        """Compact JSON, byte-for-byte what the agent receives."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> RecallOutput:
        data = json.loads(text)
        return cls(
            data["query"], tuple(RecallEntry(str(r["id"]), str(r["content"])) for r in data["results"])
        )


@dataclass(frozen=True)
class SearchHit:
    """One result with what the window shows besides id and content."""

    id: str
    content: str
    distance: float
    row_id: int | None = None
    #: Every other non-vector column of the row, by name (metadata).
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: The stored vector: a row of the NumPy matrix the search read (converting it to Python floats would
    #: cost more than an indexed search itself). Not compared: two hits are equal by what they say.
    vector: Vector | None = field(default=None, compare=False)

    def to_entry(self) -> RecallEntry:
        return RecallEntry(self.id, self.content)

    @property
    def vector_norm(self) -> float | None:
        """The stored vector's Euclidean length (about 1.0 for normalised embeddings); ``None`` without one.

        A norm far from 1 on a table built with a normalising model points at a corrupt or foreign row."""
        if self.vector is None:
            return None
        astype = getattr(self.vector, "astype", None)
        if astype is not None:  # a NumPy row: one product in float64, not a Python loop over its values
            row = astype("float64")
            return math.sqrt(float(row @ row))
        return math.sqrt(math.fsum(float(x) * float(x) for x in self.vector))


@dataclass(frozen=True)
class SearchResult:
    """A low-level search's full answer: hits with distances and how they were found."""

    query: str
    hits: tuple[SearchHit, ...]
    #: The distance metric of ``SearchHit.distance`` ("l2" is squared L2, LanceDB's convention).
    metric: str
    #: How the hits were found: "exact" (in-memory scan), "flat" (LanceDB scan) or "index:<type>".
    method: str
    search_ms: float
    table_version: int | None = None
    #: Why a slower path was taken, when it was (e.g. the table is too big for the exact-search memory).
    note: str | None = None

    def to_output(self) -> RecallOutput:
        return RecallOutput(self.query, tuple(hit.to_entry() for hit in self.hits))

    @property
    def method_label(self) -> str:
        """How the hits were found, in words: "all rows compared in memory", "LanceDB's flat scan",
        "index IVF_HNSW_SQ"."""
        return method_words(self.method)

    @property
    def metric_label(self) -> str:
        return METRIC_NAMES.get(self.metric, self.metric)


#: How a search ranked, in words. "Exact" is kept for the model (cosh's own, or a stand-in): the search
#: in memory is named by what it does, so that the two are never read as one.
METHOD_NAMES = {"exact": "all rows compared in memory", "flat": "LanceDB's flat scan"}


def method_words(method: str) -> str:
    """A search's method ("exact", "flat", "index:<type>") in words."""
    if method.startswith("index:"):
        return f"index {method.removeprefix('index:')}"
    return METHOD_NAMES.get(method, method)


#: Distance metrics in words ("l2" is squared L2, LanceDB's convention).
METRIC_NAMES = {"l2": "squared L2", "cosine": "cosine", "dot": "dot"}
