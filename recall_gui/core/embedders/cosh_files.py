"""The model file cosh runs for each of its local models, as fastembed-rs names it.

cosh embeds with fastembed-rs, which downloads each model from a Hugging Face repository and runs one ONNX
file of it (``models_list`` in fastembed-rs's ``src/models/text_embedding.rs``), pooled as
``get_default_pooling_method`` says and L2-normalised. A vector is cosh's exactly when it comes from that
file (or, for all-MiniLM-L6-v2, from the weights that file was exported from). Python fastembed sometimes
runs another file for the "same" model (its ``BAAI/bge-small-en-v1.5`` is the quantized file cosh calls
``BGESmallENV15Q``): such a file is a stand-in for cosh's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Pooling = Literal["mean", "cls"]


@dataclass(frozen=True)
class CoshFile:
    """Where cosh's model comes from: a Hugging Face repository, the ONNX file in it, and the files that
    file needs beside it; how its token vectors are pooled."""

    repo: str
    file: str
    pooling: Pooling
    additional: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"{self.repo} {self.file}"


def _files(pooling: Pooling, rows: dict[str, tuple[str, str]]) -> dict[str, CoshFile]:
    return {name: CoshFile(repo, file, pooling) for name, (repo, file) in rows.items()}


_ONNX = "onnx/model.onnx"
_ONNX_Q = "onnx/model_quantized.onnx"
_OPTIMIZED = "model_optimized.onnx"

COSH_FILES: dict[str, CoshFile] = {
    **_files(
        "mean",
        {
            "AllMiniLML6V2": ("Qdrant/all-MiniLM-L6-v2-onnx", "model.onnx"),
            "AllMiniLML6V2Q": ("Xenova/all-MiniLM-L6-v2", _ONNX_Q),
            "AllMiniLML12V2": ("Xenova/all-MiniLM-L12-v2", _ONNX),
            "AllMiniLML12V2Q": ("Xenova/all-MiniLM-L12-v2", _ONNX_Q),
            "AllMpnetBaseV2": ("Xenova/all-mpnet-base-v2", _ONNX),
            "NomicEmbedTextV1": ("nomic-ai/nomic-embed-text-v1", _ONNX),
            "NomicEmbedTextV15": ("nomic-ai/nomic-embed-text-v1.5", _ONNX),
            "NomicEmbedTextV15Q": ("nomic-ai/nomic-embed-text-v1.5", _ONNX_Q),
            "ParaphraseMLMiniLML12V2": ("Xenova/paraphrase-multilingual-MiniLM-L12-v2", _ONNX),
            "ParaphraseMLMiniLML12V2Q": ("Qdrant/paraphrase-multilingual-MiniLM-L12-v2-onnx-Q", _OPTIMIZED),
            "ParaphraseMLMpnetBaseV2": ("Xenova/paraphrase-multilingual-mpnet-base-v2", _ONNX),
            "ModernBertEmbedLarge": ("lightonai/modernbert-embed-large", _ONNX),
            "MultilingualE5Small": ("intfloat/multilingual-e5-small", _ONNX),
            "MultilingualE5Base": ("intfloat/multilingual-e5-base", _ONNX),
            "ClipVitB32": ("Qdrant/clip-ViT-B-32-text", "model.onnx"),
            "JinaEmbeddingsV2BaseCode": ("jinaai/jina-embeddings-v2-base-code", _ONNX),
            "JinaEmbeddingsV2BaseEN": ("jinaai/jina-embeddings-v2-base-en", "model.onnx"),
        },
    ),
    **_files(
        "cls",
        {
            "BGESmallENV15": ("Xenova/bge-small-en-v1.5", _ONNX),
            "BGESmallENV15Q": ("Qdrant/bge-small-en-v1.5-onnx-Q", _OPTIMIZED),
            "BGEBaseENV15": ("Xenova/bge-base-en-v1.5", _ONNX),
            "BGEBaseENV15Q": ("Qdrant/bge-base-en-v1.5-onnx-Q", _OPTIMIZED),
            "BGELargeENV15": ("Xenova/bge-large-en-v1.5", _ONNX),
            "BGELargeENV15Q": ("Qdrant/bge-large-en-v1.5-onnx-Q", _OPTIMIZED),
            "BGESmallZHV15": ("Xenova/bge-small-zh-v1.5", _ONNX),
            "BGELargeZHV15": ("Xenova/bge-large-zh-v1.5", _ONNX),
            "MxbaiEmbedLargeV1": ("mixedbread-ai/mxbai-embed-large-v1", _ONNX),
            "MxbaiEmbedLargeV1Q": ("mixedbread-ai/mxbai-embed-large-v1", _ONNX_Q),
            "GTEBaseENV15": ("Alibaba-NLP/gte-base-en-v1.5", _ONNX),
            "GTEBaseENV15Q": ("Alibaba-NLP/gte-base-en-v1.5", _ONNX_Q),
            "GTELargeENV15": ("Alibaba-NLP/gte-large-en-v1.5", _ONNX),
            "GTELargeENV15Q": ("Alibaba-NLP/gte-large-en-v1.5", _ONNX_Q),
            "SnowflakeArcticEmbedXS": ("snowflake/snowflake-arctic-embed-xs", _ONNX),
            "SnowflakeArcticEmbedXSQ": ("snowflake/snowflake-arctic-embed-xs", _ONNX_Q),
            "SnowflakeArcticEmbedS": ("snowflake/snowflake-arctic-embed-s", _ONNX),
            "SnowflakeArcticEmbedSQ": ("snowflake/snowflake-arctic-embed-s", _ONNX_Q),
            "SnowflakeArcticEmbedM": ("Snowflake/snowflake-arctic-embed-m", _ONNX),
            "SnowflakeArcticEmbedMQ": ("Snowflake/snowflake-arctic-embed-m", _ONNX_Q),
            "SnowflakeArcticEmbedMLong": ("snowflake/snowflake-arctic-embed-m-long", _ONNX),
            "SnowflakeArcticEmbedMLongQ": ("snowflake/snowflake-arctic-embed-m-long", _ONNX_Q),
            "SnowflakeArcticEmbedL": ("snowflake/snowflake-arctic-embed-l", _ONNX),
            "SnowflakeArcticEmbedLQ": ("snowflake/snowflake-arctic-embed-l", _ONNX_Q),
        },
    ),
    "BGEM3": CoshFile("BAAI/bge-m3", _ONNX, "cls", ("onnx/model.onnx_data",)),
    "MultilingualE5Large": CoshFile(
        "Qdrant/multilingual-e5-large-onnx", "model.onnx", "mean", ("model.onnx_data",)
    ),
    **{
        name: CoshFile("onnx-community/embeddinggemma-300m-ONNX", file, "mean", (file + "_data",))
        for name, file in (
            ("EmbeddingGemma300M", _ONNX),
            ("EmbeddingGemma300MQ4", "onnx/model_q4.onnx"),
            ("EmbeddingGemma300MQ", _ONNX_Q),
        )
    },
}


def cosh_file(cosh_name: str) -> CoshFile | None:
    """The file cosh runs for its local model ``cosh_name`` (``None`` for a name cosh does not know)."""
    return COSH_FILES.get(cosh_name)


#: The sha256 the model hub publishes for a file cosh downloads, where it could be established here
#: (repository, file) -> sha256. A file with this hash is cosh's; any other file at that name has to prove
#: itself against a reference (``model_verdicts``). Xenova's quantized all-MiniLM-L6-v2 is 22,972,370 bytes.
PUBLISHED_SHA256: dict[tuple[str, str], str] = {
    ("xenova/all-minilm-l6-v2", _ONNX_Q): "afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1",
}


def published_sha256(wanted: CoshFile) -> str | None:
    """The published sha256 of cosh's file ``wanted``, when it is known here."""
    return PUBLISHED_SHA256.get((wanted.repo.lower(), wanted.file))
