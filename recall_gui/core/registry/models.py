"""What cosh's embedding models are called, how cosh labels them, and how wide their vectors are.

cosh names local models with fastembed-rs enum names; Python fastembed knows some of the same models
under Hugging Face ids. ``fastembed_id`` is ``None`` where Python fastembed has no equivalent: such a
database can still be browsed, but not searched with a local model.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The dimension cosh assumes for a cloud model it does not know.
COSH_UNKNOWN_CLOUD_DIM = 384

#: The cosh model names the packaged offline model can serve (DESIGN.md §5).
OFFLINE_SERVABLE = frozenset({"AllMiniLML6V2", "AllMiniLML6V2Q"})


#: What a quantized variant's name ends with (fastembed-rs's names), and the word for it.
QUANTIZED_SUFFIXES = (("Q4", "4-bit quantized"), ("Q", "quantized"))


@dataclass(frozen=True)
class LocalModel:
    """A local (fastembed) model as cosh knows it."""

    cosh_name: str
    #: cosh's label, as its tool suffix prints it: a quantized variant's is its model's.
    label: str
    dim: int
    fastembed_id: str | None

    @property
    def shown_label(self) -> str:
        """:attr:`label` for a reader, which tells a quantized variant from its model
        ("All-MiniLM-L6-v2 (384d, quantized)")."""
        for suffix, word in QUANTIZED_SUFFIXES:
            base = self.cosh_name.removesuffix(suffix)
            if base != self.cosh_name and base in LOCAL_MODELS:
                return f"{self.label[:-1]}, {word})" if self.label.endswith(")") else f"{self.label}, {word}"
        return self.label


def _family(names: tuple[str, ...], label: str, dim: int, fastembed_id: str | None) -> dict[str, LocalModel]:
    return {name: LocalModel(name, label, dim, fastembed_id) for name in names}


LOCAL_MODELS: dict[str, LocalModel] = {
    **_family(
        ("AllMiniLML6V2", "AllMiniLML6V2Q"),
        "All-MiniLM-L6-v2 (384d)",
        384,
        "sentence-transformers/all-MiniLM-L6-v2",
    ),
    **_family(("AllMiniLML12V2", "AllMiniLML12V2Q"), "All-MiniLM-L12-v2 (384d)", 384, None),
    **_family(("AllMpnetBaseV2",), "all-mpnet-base-v2 (768d)", 768, None),
    **_family(("BGESmallENV15", "BGESmallENV15Q"), "BGE-Small-EN-v1.5 (384d)", 384, "BAAI/bge-small-en-v1.5"),
    **_family(("BGEBaseENV15", "BGEBaseENV15Q"), "BGE-Base-EN-v1.5 (768d)", 768, "BAAI/bge-base-en-v1.5"),
    **_family(
        ("BGELargeENV15", "BGELargeENV15Q"), "BGE-Large-EN-v1.5 (1024d)", 1024, "BAAI/bge-large-en-v1.5"
    ),
    **_family(("BGESmallZHV15",), "BGE-Small-ZH-v1.5 (512d)", 512, "BAAI/bge-small-zh-v1.5"),
    **_family(("BGELargeZHV15",), "BGE-Large-ZH-v1.5 (1024d)", 1024, None),
    **_family(("BGEM3",), "BGE-M3 (1024d)", 1024, None),
    **_family(("NomicEmbedTextV1",), "nomic-embed-text-v1 (768d)", 768, "nomic-ai/nomic-embed-text-v1"),
    **_family(("NomicEmbedTextV15",), "nomic-embed-text-v1.5 (768d)", 768, "nomic-ai/nomic-embed-text-v1.5"),
    **_family(
        ("NomicEmbedTextV15Q",), "nomic-embed-text-v1.5 (768d)", 768, "nomic-ai/nomic-embed-text-v1.5-Q"
    ),
    **_family(
        ("ParaphraseMLMiniLML12V2", "ParaphraseMLMiniLML12V2Q"),
        "paraphrase-MiniLM-L12-v2 (384d)",
        384,
        "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
    ),
    **_family(
        ("ParaphraseMLMpnetBaseV2",),
        "paraphrase-multilingual-mpnet-base-v2 (768d)",
        768,
        "sentence-transformers/paraphrase-multilingual-mpnet-base-v2",
    ),
    **_family(("MultilingualE5Small",), "multilingual-e5-small (384d)", 384, None),
    **_family(("MultilingualE5Base",), "multilingual-e5-base (768d)", 768, None),
    **_family(
        ("MultilingualE5Large",), "multilingual-e5-large (1024d)", 1024, "intfloat/multilingual-e5-large"
    ),
    **_family(
        ("MxbaiEmbedLargeV1", "MxbaiEmbedLargeV1Q"),
        "mxbai-embed-large-v1 (1024d)",
        1024,
        "mixedbread-ai/mxbai-embed-large-v1",
    ),
    **_family(("GTEBaseENV15", "GTEBaseENV15Q"), "GTE-Base-EN-v1.5 (768d)", 768, None),
    **_family(("GTELargeENV15", "GTELargeENV15Q"), "GTE-Large-EN-v1.5 (1024d)", 1024, None),
    **_family(("ModernBertEmbedLarge",), "modernbert-embed-large (1024d)", 1024, None),
    **_family(
        ("JinaEmbeddingsV2BaseCode",),
        "jina-embeddings-v2-base-code (768d)",
        768,
        "jinaai/jina-embeddings-v2-base-code",
    ),
    **_family(
        ("JinaEmbeddingsV2BaseEN",),
        "jina-embeddings-v2-base-en (768d)",
        768,
        "jinaai/jina-embeddings-v2-base-en",
    ),
    # cosh labels EmbeddingGemma 3584d; the model's real width is 768.
    **_family(
        ("EmbeddingGemma300M", "EmbeddingGemma300MQ4", "EmbeddingGemma300MQ"),
        "EmbeddingGemma-300M (3584d)",
        768,
        "google/embeddinggemma-300m",
    ),
    **_family(("ClipVitB32",), "CLIP-ViT-B-32 (text, 512d)", 512, "Qdrant/clip-ViT-B-32-text"),
    **_family(
        ("SnowflakeArcticEmbedXS", "SnowflakeArcticEmbedXSQ"),
        "snowflake-arctic-embed-xs (384d)",
        384,
        "snowflake/snowflake-arctic-embed-xs",
    ),
    **_family(
        ("SnowflakeArcticEmbedS", "SnowflakeArcticEmbedSQ"),
        "snowflake-arctic-embed-s (384d)",
        384,
        "snowflake/snowflake-arctic-embed-s",
    ),
    **_family(
        ("SnowflakeArcticEmbedM", "SnowflakeArcticEmbedMQ"),
        "snowflake-arctic-embed-m (768d)",
        768,
        "snowflake/snowflake-arctic-embed-m",
    ),
    **_family(
        ("SnowflakeArcticEmbedMLong", "SnowflakeArcticEmbedMLongQ"),
        "snowflake-arctic-embed-m-long (768d)",
        768,
        "snowflake/snowflake-arctic-embed-m-long",
    ),
    **_family(
        ("SnowflakeArcticEmbedL", "SnowflakeArcticEmbedLQ"),
        "snowflake-arctic-embed-l (1024d)",
        1024,
        "snowflake/snowflake-arctic-embed-l",
    ),
}

#: Known widths of cloud models, by (provider, model).
CLOUD_MODEL_DIMS: dict[tuple[str, str], int] = {
    ("openai", "text-embedding-3-small"): 1536,
    ("openai", "text-embedding-3-large"): 3072,
    ("openai", "text-embedding-ada-002"): 1536,
    ("gemini", "text-embedding-004"): 768,
    ("gemini", "gemini-embedding-001"): 768,
    ("ollama", "nomic-embed-text"): 768,
    ("ollama", "mxbai-embed-large"): 1024,
    ("ollama", "all-minilm"): 384,
    ("ollama", "snowflake-arctic-embed"): 1024,
    ("ollama", "bge-m3"): 1024,
}

CLOUD_PROVIDERS = ("openai", "gemini", "ollama")


def local_model(cosh_name: str) -> LocalModel | None:
    return LOCAL_MODELS.get(cosh_name)


def cloud_dim(provider: str, model: str) -> int | None:
    """The model's known width, or ``None`` when neither cosh nor this app knows it."""
    return CLOUD_MODEL_DIMS.get((provider.lower(), model))


def cloud_label(provider: str, model: str) -> str:
    """cosh's label for a cloud model; cosh assumes 384 dimensions for a model it does not know."""
    dim = cloud_dim(provider, model) or COSH_UNKNOWN_CLOUD_DIM
    return f"{provider} / {model} ({dim}d)"
