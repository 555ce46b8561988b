"""Which embedding model a table was made with, when nobody registered it.

A table says so itself when it was written through LanceDB's embedding registry (the schema's
``embedding_functions`` metadata, a JSON list of ``{"name", "model", "source_column", "vector_column"}``).
Otherwise (LangChain, LlamaIndex and most scripts write none) the model is chosen by the vector width
among the local models that load here without a download. Every choice carries its reason, which the
window and the command line show; when no model fits, browsing still works and a search says why not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from recall_gui.core.base.errors import InvalidInputError, ModelUnavailableError
from recall_gui.core.embedders.model_choice import local_model_problem
from recall_gui.core.registry.models import (
    CLOUD_MODEL_DIMS,
    CLOUD_PROVIDERS,
    LOCAL_MODELS,
    LocalModel,
)
from recall_gui.core.registry.registry_types import DatabaseEntry, EmbedderSpec

if TYPE_CHECKING:
    import pyarrow as pa

#: The spec of an opened table no available model fits: browsing works, searching says why not.
NO_MODEL = EmbedderSpec("unknown", "")
#: cosh's default local model, preferred when several local models have a table's width.
COSH_DEFAULT = "AllMiniLML6V2"
METADATA_KEY = b"embedding_functions"

#: LanceDB embedding functions that run a local (Hugging Face) model, with the model each uses by default.
_LOCAL_FUNCTIONS = {"sentence-transformers": "all-MiniLM-L6-v2", "huggingface": "", "fastembed": ""}
#: LanceDB embedding functions of providers cosh can call, with the provider's name in cosh and the
#: model each uses by default.
_CLOUD_FUNCTIONS = {
    "openai": ("openai", "text-embedding-ada-002"),
    "ollama": ("ollama", "nomic-embed-text"),
    "gemini-text": ("gemini", "gemini-embedding-001"),
}

Source = Literal["metadata", "width", "chosen", "none"]


@dataclass(frozen=True)
class ModelDetection:
    """The model to search a table with (``NO_MODEL`` when none fits) and why it was chosen."""

    spec: EmbedderSpec
    reason: str
    source: Source

    @property
    def found(self) -> bool:
        return self.spec != NO_MODEL


@dataclass(frozen=True)
class NamedModel:
    """What a table's embedding-function metadata says: the function, its model, the columns."""

    function: str
    model: str
    source_column: str | None
    vector_column: str | None

    @property
    def text(self) -> str:
        return f"{self.function} {self.model}".strip()


def named_model(schema: pa.Schema, vector_column: str) -> NamedModel | None:
    """The model the schema's metadata names for ``vector_column`` (or its only one); ``None`` if none
    is named or the metadata is not LanceDB's."""
    metadata: Mapping[Any, Any] = schema.metadata or {}
    raw = metadata.get(METADATA_KEY, metadata.get(METADATA_KEY.decode()))
    if raw is None:
        return None
    try:
        listed = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except (UnicodeDecodeError, ValueError):
        return None
    functions = [f for f in listed if isinstance(f, dict)] if isinstance(listed, list) else []
    chosen = next((f for f in functions if f.get("vector_column") == vector_column), None)
    if chosen is None and len(functions) == 1:
        chosen = functions[0]
    if chosen is None or not isinstance(chosen.get("name"), str):
        return None
    function = chosen["name"]
    config = chosen.get("model")
    model = config.get("name") if isinstance(config, dict) else None
    if not isinstance(model, str) or not model:
        model = _LOCAL_FUNCTIONS.get(function) or _CLOUD_FUNCTIONS.get(function, ("", ""))[1]
    source, vector = chosen.get("source_column"), chosen.get("vector_column")
    return NamedModel(
        function,
        model,
        source if isinstance(source, str) else None,
        vector if isinstance(vector, str) else None,
    )


def local_by_name(name: str) -> LocalModel | None:
    """The cosh local model called ``name``: a cosh name (``AllMiniLML6V2``), a Hugging Face id
    (``sentence-transformers/all-MiniLM-L6-v2``) or its last part (``all-MiniLM-L6-v2``), any case."""
    wanted = name.strip().lower()
    if not wanted:
        return None
    for model in LOCAL_MODELS.values():
        if model.cosh_name.lower() == wanted:
            return model
    for model in LOCAL_MODELS.values():  # the first of a family is its full-precision model
        hub_id = (model.fastembed_id or "").lower()
        if hub_id and wanted in (hub_id, hub_id.rsplit("/", 1)[-1]):
            return model
    return None


def spec_for_named(named: NamedModel) -> EmbedderSpec | None:
    """The cosh spec for a model named in a table's metadata, if cosh can run it."""
    if named.function in _CLOUD_FUNCTIONS:
        provider, _default = _CLOUD_FUNCTIONS[named.function]
        return EmbedderSpec("cloud", named.model.removeprefix("models/"), provider)
    local = local_by_name(named.model)
    return EmbedderSpec("local", local.cosh_name) if local is not None else None


def available_local_models() -> list[LocalModel]:
    """One model per family that some copy on this machine serves (a model cache, the published weights,
    the packaged stand-in)."""
    found: dict[str, LocalModel] = {}
    for model in LOCAL_MODELS.values():
        family = model.fastembed_id
        if family and family not in found and _loads_without_download(model):
            found[family] = model
    return list(found.values())


def _loads_without_download(model: LocalModel) -> bool:
    """Packaged, or in fastembed's cache (the model hub is not asked)."""
    return local_model_problem(model.cosh_name) is None


def detect_model(
    schema: pa.Schema, vector_column: str, width: int, available: list[LocalModel] | None = None
) -> ModelDetection:
    """The model for a table whose vectors are ``vector_column``, ``width`` wide."""
    named = named_model(schema, vector_column)
    if named is not None:
        spec = spec_for_named(named)
        if spec is None:
            return ModelDetection(
                NO_MODEL,
                f"the table's metadata names {named.text}, which cosh cannot run",
                "none",
            )
        if spec.dim is not None and spec.dim != width:
            return ModelDetection(
                NO_MODEL,
                f"the table's metadata names {named.text}, which gives {spec.dim}-dimensional vectors, "
                f"but the table holds {width}-dimensional ones",
                "none",
            )
        return ModelDetection(spec, f"from the table's metadata ({named.text})", "metadata")
    fitting = [m for m in (available_local_models() if available is None else available) if m.dim == width]
    if not fitting:
        return ModelDetection(NO_MODEL, f"no local model of {width} dimensions is available here", "none")
    chosen = next((m for m in fitting if m.cosh_name == COSH_DEFAULT), fitting[0])
    spec = EmbedderSpec("local", chosen.cosh_name)
    if len(fitting) == 1:
        reason = f"by width: the only local model of {width} dimensions available"
    else:
        reason = (
            f"by width: one of {len(fitting)} local models of {width} dimensions available "
            "(choose another if the table was made with it)"
        )
    return ModelDetection(spec, reason, "width")


def chosen(spec: EmbedderSpec) -> ModelDetection:
    """A model the user chose."""
    return ModelDetection(spec, "chosen by you", "chosen")


# --- choosing a model by hand ------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelChoice:
    """A model a user may choose for a table of some width: whether it fits and can run here."""

    spec: EmbedderSpec
    #: Loads here without a download (local), or its provider's key is set (cloud).
    ready: bool
    #: Why not, when not ready.
    note: str = ""


def model_choices(width: int) -> list[ModelChoice]:
    """The local and cloud models that give ``width``-dimensional vectors, the ready ones first."""
    from recall_gui.core.embedders.pool import model_problem

    choices: list[ModelChoice] = []
    available = {m.fastembed_id for m in available_local_models()}
    seen: set[str] = set()
    for model in LOCAL_MODELS.values():
        family = model.fastembed_id
        if model.dim != width or family is None or family in seen:
            continue
        seen.add(family)
        ready = family in available
        note = "" if ready else "not downloaded: needs the network once"
        choices.append(ModelChoice(EmbedderSpec("local", model.cosh_name), ready, note))
    for (provider, name), dim in CLOUD_MODEL_DIMS.items():
        if dim != width:
            continue
        spec = EmbedderSpec("cloud", name, provider)
        problem = model_problem(spec)
        choices.append(ModelChoice(spec, problem is None, problem or ""))
    return sorted(choices, key=lambda choice: (not choice.ready, choice.spec.kind != "local"))


def parse_model(text: str) -> EmbedderSpec:
    """A model as typed on the command line: a local model (``AllMiniLML6V2``, ``all-MiniLM-L6-v2``,
    ``BAAI/bge-small-en-v1.5``) or a cloud one as ``provider/model`` (``openai/text-embedding-3-small``)."""
    provider, _, model = text.strip().replace(":", "/", 1).partition("/")
    if provider.lower() in CLOUD_PROVIDERS and model:
        return EmbedderSpec("cloud", model, provider.lower())
    local = local_by_name(text)
    if local is None:
        raise InvalidInputError(
            f'unknown model "{text}"',
            hint="Name a local model as cosh does (e.g. AllMiniLML6V2 or all-MiniLM-L6-v2), or a cloud "
            "model as provider/model (e.g. openai/text-embedding-3-small; providers: "
            + ", ".join(CLOUD_PROVIDERS)
            + ").",
        )
    return EmbedderSpec("local", local.cosh_name)


def model_text(spec: EmbedderSpec) -> str | None:
    """``spec`` as :func:`parse_model` reads it back; ``None`` for no known model."""
    if spec.kind == "cloud":
        return f"{spec.provider}/{spec.model}"
    return spec.model if spec.kind == "local" else None


def require_fit(spec: EmbedderSpec, width: int, table: str) -> None:
    """Refuse a model whose known width is not the table's."""
    if spec.dim is not None and spec.dim != width:
        raise InvalidInputError(
            f'{spec.label} gives {spec.dim}-dimensional vectors, but table "{table}" holds '
            f"{width}-dimensional ones",
            hint=_choose_hint(width),
        )


def _choose_hint(width: int) -> str:
    names = [c.spec.label for c in model_choices(width)][:4]
    if not names:
        return (
            f"No model recall-gui knows gives {width}-dimensional vectors; a cloud model of that width can "
            "be named with --model provider/model on the command line."
        )
    return (
        f"Choose the model the table was made with, one of {width} dimensions (the Model button in the "
        f"window, --model on the command line), e.g. {', '.join(names)}."
    )


def no_model_error(entry: DatabaseEntry, width: int) -> ModelUnavailableError:
    """Why an opened table cannot be searched yet, and what to do."""
    return ModelUnavailableError(
        f"cannot search {entry.name} without a model: {_why_none(entry, width)}",
        hint="The table can still be browsed. " + _choose_hint(width),
    )


def no_model_problem(entry: DatabaseEntry, width: int) -> tuple[str, str]:
    """:func:`no_model_error` as a health check says it (after the database's name): message and hint."""
    return (
        f"no model to search with: {_why_none(entry, width)}",
        "The table can still be browsed. " + _choose_hint(width),
    )


def _why_none(entry: DatabaseEntry, width: int) -> str:
    return entry.model_reason or f"no model of {width} dimensions was chosen"
