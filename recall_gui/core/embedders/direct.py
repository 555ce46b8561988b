"""The packaged model's queries embedded with onnxruntime and tokenizers alone, without fastembed.

Importing fastembed costs about a second (its model manager brings huggingface_hub, and ``fastembed.image``
brings Pillow) where a query needs only onnxruntime and tokenizers (docs/PERFORMANCE_LOG.md#direct). This
module does what fastembed 0.9 does for the packaged model (a custom model with mean pooling and
normalisation, loaded from the staged folder), operation for operation: the same tokenizer settings, the
same session options and inputs, the same pooling and normalisation in the same dtypes. Both cut a
text where cosh's fastembed-rs does (:func:`truncation_limit`; ``fastembed_files`` tells fastembed). Its
vectors are fastembed's bit for bit (``tests/core/test_direct_embedding.py``); it is used only on the
versions that was checked with (``compat.direct_embedding_checked``), and fastembed embeds in bulk.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.compat import NO_SPINNING
from recall_gui.core.base.regular_files import read_regular
from recall_gui.core.embedders.base import Vector

#: Files fastembed's tokenizer loading would read too if the folder held them (this one reads neither).
FASTEMBED_ONLY_FILES = ("config.json", "special_tokens_map.json")
#: The inputs fastembed feeds the model (all int64); a model with other inputs is left to fastembed.
MODEL_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})
#: The most of a ``tokenizer_config.json`` read: a few keys.
TOKENIZER_CONFIG_MAX_BYTES = 1 << 20


class DirectUnavailable(Exception):
    """The folder or the machine is not what the direct path was checked for: load through fastembed."""


#: fastembed-rs's own token limit (``DEFAULT_MAX_LENGTH`` of its text embedding), which cosh leaves as it is.
FASTEMBED_MAX_LENGTH = 512


def _usable_limit(value: Any) -> int | None:
    """A limit from ``tokenizer_config.json`` that can truncate: a positive number (a float too, as
    fastembed-rs reads it; transformers writes 1e30 for "no limit", which the smaller one then wins over)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return None
    return int(min(value, sys.maxsize))


def truncation_limit(config: dict[str, Any], max_length: int = FASTEMBED_MAX_LENGTH) -> int:
    """Where cosh cuts a text, in tokens: as fastembed-rs's ``load_tokenizer`` does, the smaller of its
    ``max_length`` (512 unless set) and the model's ``model_max_length``; ``max_length`` of the config
    stands in for a missing ``model_max_length`` (as Python fastembed reads it)."""
    model_limit = _usable_limit(config.get("model_max_length"))
    if model_limit is None:
        model_limit = _usable_limit(config.get("max_length"))
    return max_length if model_limit is None else min(max_length, model_limit)


def folder_truncation_limit(folder: Path, max_length: int = FASTEMBED_MAX_LENGTH) -> int:
    """:func:`truncation_limit` of ``folder``'s ``tokenizer_config.json`` (``max_length`` without one)."""
    try:
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return max_length
    return truncation_limit(config if isinstance(config, dict) else {}, max_length)


def load_tokenizer(folder: Path, max_length: int = FASTEMBED_MAX_LENGTH) -> Any:
    """``folder``'s tokenizer as fastembed sets it up: truncation where cosh cuts (:func:`truncation_limit`,
    the direction kept), padding to the longest text of a batch with the serialized pad token."""
    from tokenizers import Tokenizer

    if any((folder / name).exists() for name in FASTEMBED_ONLY_FILES):
        raise DirectUnavailable(f"{folder} holds files only fastembed reads")
    config = json.loads(read_regular(folder / "tokenizer_config.json", TOKENIZER_CONFIG_MAX_BYTES))
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    truncation = tokenizer.truncation or {}
    tokenizer.enable_truncation(
        max_length=truncation_limit(config, max_length),
        direction=config.get("truncation_side") or truncation.get("direction", "right"),
    )
    padding = tokenizer.padding or {}
    pad_token = padding.get("pad_token") or config.get("pad_token")
    if pad_token is None:
        raise DirectUnavailable("no pad token")
    pad_id = padding.get("pad_id")
    if pad_id is None:
        pad_id = tokenizer.token_to_id(pad_token)
    if pad_id is None:
        raise DirectUnavailable(f"no id for the pad token {pad_token!r}")
    tokenizer.enable_padding(
        direction=config.get("padding_side") or padding.get("direction", "right"),
        pad_id=pad_id,
        pad_type_id=padding.get("pad_type_id", 0),
        pad_token=pad_token,
        pad_to_multiple_of=padding.get("pad_to_multiple_of"),
        length=None,
    )
    return tokenizer


def session_options(threads: int) -> Any:
    """The options fastembed gives a session (all graph optimisations, ``threads`` for both pools; 0: as
    many as onnxruntime likes) and the app's no-spinning entries."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    for key, value in NO_SPINNING.items():
        options.add_session_config_entry(key, value)
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = threads
    return options


def open_session(model: Path | bytes, threads: int, options: Any = None, *, refuse_cuda: bool) -> Any:
    """An onnxruntime session of ``model`` (a file, or a graph's bytes) on the CPU, as fastembed runs it
    without CUDA; ``options`` from :func:`session_options` when the caller adds to them.

    ``refuse_cuda``: raise :class:`DirectUnavailable` where onnxruntime offers CUDA, for a path that must
    give fastembed's vectors (fastembed would run the model there with CUDA, not as this session does).
    """
    import onnxruntime as ort

    if refuse_cuda and "CUDAExecutionProvider" in ort.get_available_providers():
        raise DirectUnavailable("fastembed would run the model with CUDA")
    source = model if isinstance(model, bytes) else str(model)
    session = ort.InferenceSession(
        source, providers=["CPUExecutionProvider"], sess_options=options or session_options(threads)
    )
    if {node.name for node in session.get_inputs()} != MODEL_INPUTS:
        where = "the graph" if isinstance(model, bytes) else str(model)
        raise DirectUnavailable(f"{where} takes other inputs than {sorted(MODEL_INPUTS)}")
    return session


def mean_pooled_and_normalised(
    hidden: npt.NDArray[np.floating[Any]], attention_mask: npt.NDArray[np.int64]
) -> npt.NDArray[np.floating[Any]]:
    """fastembed's ``mean_pooling`` then ``normalize`` (both in float64), cast back to the model's dtype."""
    sums = np.sum(hidden, axis=1, where=attention_mask[:, :, np.newaxis].astype(bool), dtype=np.float64)
    counts = np.sum(attention_mask, axis=1, keepdims=True)
    pooled = sums / np.maximum(counts, 1e-9)
    norm = np.maximum(np.linalg.norm(pooled, ord=2, axis=1, keepdims=True), 1e-12)
    normalised: npt.NDArray[np.floating[Any]] = (pooled / norm).astype(hidden.dtype, copy=False)
    return normalised


class DirectQueryModel:
    """A tokenizer and an onnxruntime session that embed as fastembed does: tokenised, run, mean pooled and
    normalised (:func:`mean_pooled_and_normalised`).

    Blocking, and not safe to call from two threads at once (a session's pool owns its model).
    """

    def __init__(self, tokenizer: Any, session: Any, keep_alive: tuple[Any, ...] = ()) -> None:
        self.tokenizer = tokenizer
        self.session = session
        #: Buffers the session reads from without owning them (weights handed over by name).
        self._keep_alive = keep_alive

    @classmethod
    def from_folder(cls, folder: Path, threads: int, model_file: Path | None = None) -> DirectQueryModel:
        """The tokenizer files of ``folder`` and its ``model.onnx`` (or ``model_file``)."""
        tokenizer = load_tokenizer(folder)
        return cls(tokenizer, open_session(model_file or folder / "model.onnx", threads, refuse_cuda=True))

    def embed(self, documents: list[str]) -> Iterator[Vector]:
        """The vectors of ``documents``, embedded as one batch (padded to the longest)."""
        if not documents:
            return
        encoded = self.tokenizer.encode_batch(documents)
        input_ids = np.array([e.ids for e in encoded], dtype=np.int64)
        attention_mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        inputs = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "token_type_ids": np.zeros(input_ids.shape, dtype=np.int64),
        }
        hidden = self.session.run(None, inputs, _run_options(input_ids.size))[0]
        yield from mean_pooled_and_normalised(hidden, attention_mask)


#: A run of more tokens than a long query gives back what it took: onnxruntime's memory arena keeps the
#: largest run's memory for the session's life otherwise (16 texts of 512 tokens: ~0.9 GB, in a window or
#: a server for hours). Queries keep their arena, which spares them allocating on every run.
SHRINK_AFTER_TOKENS = 2048


def _run_options(tokens: int) -> Any:
    """onnxruntime's options for a run of ``tokens`` tokens: ``None`` (its defaults), or shrinking the
    arena once the run has ended."""
    if tokens <= SHRINK_AFTER_TOKENS:
        return None
    import onnxruntime as ort

    options = ort.RunOptions()
    options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return options
