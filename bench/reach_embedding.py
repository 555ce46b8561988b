"""``reach_embed_qps``: the reach report's pseudo-queries embedded as the report embeds them (the session's
model pool, :meth:`ModelPool.embed_queries`: jobs on the embedding thread, each text once, texts of like
length four to a batch), in queries per second, beside a bare ONNX Runtime loop over the same graph, texts
and batches: the tokenizer file, one ``InferenceSession.run`` per batch, mean pooling and normalisation in
NumPy, nothing else. The ratio (bare queries per second over the app's) says what the app adds to the
model's own speed; the goal is at most 1.2. The two give the same vectors (checked).

The texts are the first sentences of the bench's real passages (``core.reach.pseudo_queries``), each made
distinct as every entry of a table is ("Item i of the notes: …", as the ``reach_100k`` table holds).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.context import BenchContext
from bench.results import Metric

QUERIES = 2_000
GOAL_RATIO = 1.2
#: Rounds of each side, alternated; the fastest round of each is kept.
ROUNDS = 2


def run(ctx: BenchContext) -> list[Metric]:
    from recall_gui.core.reach.pseudo_queries import QueryRule, query_of

    texts, _vectors = ctx.base
    count = ctx.size.count(QUERIES) if ctx.size.toy else QUERIES
    rule = QueryRule()
    queries = [query_of(f"Item {i} of the notes: {texts[i % len(texts)]}", rule) for i in range(count)]
    return asyncio.run(measure(queries))


def _bare_model() -> tuple[Any, Any, tuple[Any, ...]]:
    """The graph the app runs for AllMiniLML6V2 (the shipped encoder graph with the published weights
    handed over by name) in a session of its own, one thread as the app's query model, and the tokenizer
    from its file set as fastembed sets it (truncation at the configured limit, padding to the longest)."""
    import onnxruntime as ort
    from safetensors import safe_open
    from tokenizers import Tokenizer

    from recall_gui.core.embedders import published_weights

    weights = published_weights.package_weights()
    if weights is None:
        raise SystemExit("reach_embed_qps needs the published weights: " + published_weights.WEIGHTS_INSTALL)
    names, values = [], []
    with safe_open(str(weights), framework="numpy") as tensors:
        for name in tensors.keys():  # noqa: SIM118 - safe_open is no mapping
            if not name.startswith("pooler.") and name != "embeddings.position_ids":
                names.append(name)
                values.append(ort.OrtValue.ortvalue_from_numpy(tensors.get_tensor(name)))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    for key in ("session.intra_op.allow_spinning", "session.inter_op.allow_spinning"):
        options.add_session_config_entry(key, "0")
    options.add_external_initializers(names, values)
    graph = published_weights._graph()
    session = ort.InferenceSession(graph, providers=["CPUExecutionProvider"], sess_options=options)
    folder = Path(str(published_weights._tokenizer_folder()))
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=int(config["model_max_length"]))
    tokenizer.enable_padding(pad_id=tokenizer.token_to_id(config["pad_token"]), pad_token=config["pad_token"])
    return session, tokenizer, tuple(values)


def bare_loop(session: Any, tokenizer: Any, texts: list[str], batch: int) -> np.ndarray[Any, Any]:
    """Every text's vector: texts of like length together, ``batch`` at a time, as the app batches them."""
    order = sorted(range(len(texts)), key=lambda number: len(texts[number]))
    found = np.empty((len(texts), 384), np.float32)
    for start in range(0, len(order), batch):
        numbers = order[start : start + batch]
        encoded = tokenizer.encode_batch([texts[number] for number in numbers])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        hidden = session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        found[numbers] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return found


async def measure(queries: list[str]) -> list[Metric]:
    from recall_gui.core.embedders.local import QUERY_BATCH
    from recall_gui.core.registry.registry_types import EmbedderSpec
    from recall_gui.core.session.session import Session

    session = Session()
    spec = EmbedderSpec("local", "AllMiniLML6V2")
    try:
        await session.models.embed_queries(spec, ["warm the model up"], 384)
        bare_session, tokenizer, _weights = _bare_model()
        bare_loop(bare_session, tokenizer, ["warm the model up"], QUERY_BATCH)
        app_s, bare_s = [], []
        app_vectors: Any = None
        bare_vectors: Any = None
        for _round in range(ROUNDS):
            started = time.perf_counter()
            embedded = await session.models.embed_queries(spec, queries, 384)
            app_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            bare_vectors = bare_loop(bare_session, tokenizer, queries, QUERY_BATCH)
            bare_s.append(time.perf_counter() - started)
            app_vectors = embedded.vectors
        used = embedded.used
    finally:
        await session.aclose()
    apart = float(np.max(np.abs(app_vectors - bare_vectors)))
    app_qps, bare_qps = len(queries) / min(app_s), len(queries) / min(bare_s)
    ratio = bare_qps / app_qps
    print(
        f"  {len(queries):,} pseudo-queries with {used}: the app {app_qps:,.1f} queries/s, a bare ONNX "
        f"Runtime loop {bare_qps:,.1f} queries/s (ratio {ratio:.2f}); vectors apart by at most {apart:.1e}",
        flush=True,
    )
    return [
        Metric(
            "reach_embed_qps",
            app_qps,
            "queries/s",
            bare_qps,
            # The table's ratio is the app's speed over the bare loop's: at least 1 / GOAL_RATIO.
            f"bare/app <= {GOAL_RATIO} (ratio >= {1 / GOAL_RATIO:.2f}), same vectors",
            ratio <= GOAL_RATIO and apart <= 1e-5,
            {
                "queries": len(queries),
                "batch": QUERY_BATCH,
                "model": used,
                "max_abs_difference": apart,
                "ratio_bare_over_app": round(ratio, 3),
            },
        )
    ]
