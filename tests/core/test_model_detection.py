"""Which model an unregistered table was made with: from LanceDB's embedding-function metadata (as
LanceDB's own registry writes it), else by width among the local models that load here."""

from __future__ import annotations

from typing import Any

import pytest

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.registry.models import LOCAL_MODELS
from recall_gui.core.registry.registry_types import EmbedderSpec
from recall_gui.core.tables.model_detection import (
    NO_MODEL,
    available_local_models,
    detect_model,
    model_choices,
    named_model,
    parse_model,
    require_fit,
)
from tests.foldertools import registry_metadata


def schema(width: int, metadata: Any = None, vector: str = "vector") -> Any:
    import pyarrow as pa

    fields = [pa.field("text", pa.utf8()), pa.field(vector, pa.list_(pa.float32(), width))]
    return pa.schema(fields, metadata=metadata)


def test_lancedbs_metadata_for_a_sentence_transformers_model_maps_to_coshs_name() -> None:
    found = detect_model(
        schema(384, registry_metadata("sentence-transformers", "all-MiniLM-L6-v2")), "vector", 384
    )
    assert found.spec == EmbedderSpec("local", "AllMiniLML6V2")
    assert (found.source, found.reason) == (
        "metadata",
        "from the table's metadata (sentence-transformers all-MiniLM-L6-v2)",
    )
    bge = detect_model(
        schema(384, registry_metadata("sentence-transformers", "BAAI/bge-small-en-v1.5")), "vector", 384
    )
    assert bge.spec == EmbedderSpec("local", "BGESmallENV15")


def test_lancedbs_metadata_for_cloud_providers_maps_to_coshs_cloud_models() -> None:
    openai = detect_model(schema(1536, registry_metadata("openai", "text-embedding-3-small")), "vector", 1536)
    assert openai.spec == EmbedderSpec("cloud", "text-embedding-3-small", "openai")
    ollama = detect_model(schema(384, registry_metadata("ollama", "all-minilm")), "vector", 384)
    assert ollama.spec == EmbedderSpec("cloud", "all-minilm", "ollama")


def test_a_model_cosh_cannot_run_or_of_another_width_is_not_replaced_by_a_guess() -> None:
    cohere = detect_model(schema(768, registry_metadata("cohere", "embed-english-v3.0")), "vector", 768)
    assert cohere.spec == NO_MODEL
    assert cohere.reason == "the table's metadata names cohere embed-english-v3.0, which cosh cannot run"
    wrong = detect_model(
        schema(768, registry_metadata("sentence-transformers", "all-MiniLM-L6-v2")), "vector", 768
    )
    assert wrong.spec == NO_MODEL
    assert "gives 384-dimensional vectors, but the table holds 768-dimensional ones" in wrong.reason


def test_metadata_for_another_vector_column_or_garbage_is_ignored() -> None:
    other = registry_metadata("openai", "text-embedding-3-small", vector="title_vector")
    assert named_model(schema(384, other), "vector") is not None  # the only function: it is the one
    both = {
        b"embedding_functions": b'[{"name": "openai", "model": {}, "vector_column": "a"},'
        b' {"name": "ollama", "model": {}, "vector_column": "b"}]'
    }
    assert named_model(schema(384, both), "vector") is None
    found = named_model(schema(384, both, vector="b"), "b")
    assert found is not None and (found.function, found.model) == ("ollama", "nomic-embed-text")
    assert named_model(schema(384, {b"embedding_functions": b"not json"}), "vector") is None


def test_without_metadata_the_width_decides_among_the_models_available_here() -> None:
    assert [m.cosh_name for m in available_local_models()] == ["AllMiniLML6V2"]  # its published weights
    alone = detect_model(schema(384), "vector", 384)
    assert alone.spec == EmbedderSpec("local", "AllMiniLML6V2")
    assert alone.reason == "by width: the only local model of 384 dimensions available"
    several = [LOCAL_MODELS["BGESmallENV15"], LOCAL_MODELS["AllMiniLML6V2"]]
    prefers_cosh_default = detect_model(schema(384), "vector", 384, several)
    assert prefers_cosh_default.spec == EmbedderSpec("local", "AllMiniLML6V2")
    assert prefers_cosh_default.reason.startswith("by width: one of 2 local models of 384 dimensions")
    none = detect_model(schema(1000), "vector", 1000)
    assert (none.spec, none.reason) == (NO_MODEL, "no local model of 1000 dimensions is available here")


def test_choices_for_a_width_list_ready_models_first() -> None:
    choices = model_choices(384)
    assert choices[0].spec == EmbedderSpec("local", "AllMiniLML6V2") and choices[0].ready
    assert EmbedderSpec("cloud", "all-minilm", "ollama") in [c.spec for c in choices]
    bge = next(c for c in choices if c.spec.model == "BGESmallENV15")
    assert not bge.ready and bge.note == "not downloaded: needs the network once"
    assert all(c.spec.dim == 384 for c in choices)
    openai = next(c for c in model_choices(1536) if c.spec.model == "text-embedding-3-small")
    assert not openai.ready and openai.note == "OPENAI_API_KEY is not set"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("AllMiniLML6V2", EmbedderSpec("local", "AllMiniLML6V2")),
        ("all-minilm-l6-v2", EmbedderSpec("local", "AllMiniLML6V2")),
        ("sentence-transformers/all-MiniLM-L6-v2", EmbedderSpec("local", "AllMiniLML6V2")),
        ("BAAI/bge-small-en-v1.5", EmbedderSpec("local", "BGESmallENV15")),
        ("openai/text-embedding-3-small", EmbedderSpec("cloud", "text-embedding-3-small", "openai")),
        ("Ollama:nomic-embed-text", EmbedderSpec("cloud", "nomic-embed-text", "ollama")),
    ],
)
def test_a_model_is_named_as_cosh_or_hugging_face_names_it(text: str, expected: EmbedderSpec) -> None:
    assert parse_model(text) == expected


def test_an_unknown_model_or_one_of_another_width_is_refused_with_what_to_do() -> None:
    with pytest.raises(InvalidInputError, match='unknown model "gpt-9"') as caught:
        parse_model("gpt-9")
    assert caught.value.hint is not None and "openai/text-embedding-3-small" in caught.value.hint
    with pytest.raises(InvalidInputError) as wrong:
        require_fit(EmbedderSpec("local", "BGEBaseENV15"), 384, "notes")
    assert wrong.value.message == (
        'BGE-Base-EN-v1.5 (768d) gives 768-dimensional vectors, but table "notes" holds 384-dimensional ones'
    )
    assert wrong.value.hint is not None and "All-MiniLM-L6-v2 (384d)" in wrong.value.hint
    require_fit(EmbedderSpec("cloud", "some-new-model", "openai"), 384, "notes")  # width unknown: allowed
