"""Which columns of a table hold the id, the text and the vector.

cosh writes ``id``, ``content`` and ``vector``; LangChain, LlamaIndex and LanceDB's embedding API use other
names (``text``, ``embedding``, ...). Detection looks at the Arrow schema only; a registry entry can name the
columns explicitly when detection guesses wrong or cannot decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recall_gui.core.base.errors import ColumnError

if TYPE_CHECKING:  # pyarrow loads lazily: the registry (and so the window's start) needs none of it
    import pyarrow as pa

ID_NAMES = ("id", "doc_id", "document_id", "chunk_id", "uuid", "_id", "key", "node_id")
CONTENT_NAMES = ("content", "text", "page_content", "document", "chunk", "body", "passage", "contents")
VECTOR_NAMES = ("vector", "embedding", "embeddings", "vec", "emb", "dense_vector")

_OVERRIDE_HINT = (
    "Name the columns in the registry entry with the optional keys "
    '"id_column", "content_column" and "vector_column".'
)


@dataclass(frozen=True)
class ColumnOverrides:
    """Column names given by the user (``None``: detect)."""

    id: str | None = None
    content: str | None = None
    vector: str | None = None


@dataclass(frozen=True)
class ColumnMapping:
    """The resolved roles; ``id`` is ``None`` when the table has no id column (the row number serves)."""

    id: str | None
    content: str
    vector: str
    vector_dim: int

    def without_vector(self, names: Sequence[str]) -> list[str]:
        """Every column but the vector (the bulk of a row)."""
        return [name for name in names if name != self.vector]

    def metadata(self, names: Sequence[str]) -> list[str]:
        """Every column that is neither id, content nor vector: the row's metadata."""
        taken = {self.id, self.content, self.vector}
        return [name for name in names if name not in taken]


def vector_width(field: pa.Field) -> int | None:
    """The width of a fixed-size list of floats, else ``None``."""
    import pyarrow as pa

    kind = field.type
    if pa.types.is_fixed_size_list(kind) and pa.types.is_floating(kind.value_type):
        return int(kind.list_size)
    return None


def _is_text(field: pa.Field) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(field.type) or pa.types.is_large_string(field.type))


def _is_single_value(field: pa.Field) -> bool:
    """A column whose values print as one id: not a list, struct, map or union."""
    import pyarrow as pa

    return not pa.types.is_nested(field.type)


def _pick(schema: pa.Schema, override: str | None, names: tuple[str, ...], role: str) -> str | None:
    if override is not None:
        if override not in schema.names:
            raise ColumnError(
                f'{role} column "{override}" is not in the table (columns: {", ".join(schema.names)})',
                hint="Correct the column name in the registry entry.",
            )
        return override
    lowered = {name.lower(): name for name in schema.names}
    return next((lowered[name] for name in names if name in lowered), None)


def _refuse(role: str, name: str, reason: str) -> ColumnError:
    return ColumnError(
        f'{role} column "{name}" {reason}',
        hint=f'Name another column as "{role}_column" in the registry entry, or remove the key to detect it.',
    )


def detect_columns(schema: pa.Schema, overrides: ColumnOverrides | None = None) -> ColumnMapping:
    """Resolve the id, content and vector columns of ``schema``; raises :class:`ColumnError`.

    A column named in the registry must be able to play its role: the vector column a fixed-size list of
    floats, the content column text, the id column single values, and no column two roles. A column
    found by its name alone is passed over when it cannot.
    """
    overrides = overrides or ColumnOverrides()
    vector = _pick(schema, overrides.vector, VECTOR_NAMES, "vector")
    if vector is None or (overrides.vector is None and vector_width(schema.field(vector)) is None):
        candidates = [f.name for f in schema if vector_width(f) is not None]
        if len(candidates) != 1:
            found = ", ".join(candidates) if candidates else "none"
            raise ColumnError(
                f"cannot tell which column holds the vectors (fixed-size float list columns: {found})",
                hint=_OVERRIDE_HINT,
            )
        vector = candidates[0]
    width = vector_width(schema.field(vector))
    if width is None:
        raise ColumnError(
            f'column "{vector}" is not a fixed-size list of floats (it is {schema.field(vector).type})',
            hint=_OVERRIDE_HINT,
        )
    content = _content_column(schema, overrides, vector)
    identifier = _pick(schema, overrides.id, ID_NAMES, "id")
    if overrides.id is not None:
        if identifier == vector:
            raise _refuse("id", overrides.id, "is the vector column")
        if identifier == content:
            raise _refuse("id", overrides.id, "is the content column")
        if not _is_single_value(schema.field(overrides.id)):
            raise _refuse("id", overrides.id, f"holds {schema.field(overrides.id).type}, not a single value")
    elif identifier is not None and (
        identifier in (content, vector) or not _is_single_value(schema.field(identifier))
    ):
        identifier = None  # found by name only: the row number serves instead
    return ColumnMapping(identifier, content, vector, width)


def _content_column(schema: pa.Schema, overrides: ColumnOverrides, vector: str) -> str:
    named = _pick(schema, overrides.content, CONTENT_NAMES, "content")
    if overrides.content is not None:
        if named == vector:
            raise _refuse("content", overrides.content, "is the vector column")
        if not _is_text(schema.field(overrides.content)):
            raise _refuse(
                "content", overrides.content, f"holds {schema.field(overrides.content).type}, not text"
            )
        return overrides.content
    if named is not None and named != vector and _is_text(schema.field(named)):
        return named
    id_guess = _pick(schema, overrides.id, ID_NAMES, "id")
    texts = [f.name for f in schema if _is_text(f) and f.name != id_guess]
    if len(texts) != 1:
        found = ", ".join(texts) if texts else "none"
        raise ColumnError(
            f"cannot tell which column holds the text (string columns: {found})", hint=_OVERRIDE_HINT
        )
    return str(texts[0])
