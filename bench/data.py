"""The benchmark's own data, built once and cached under ``bench/data/`` (git-ignored).

Real text, real model: the base passages are paragraphs of Python's own documentation (the help topics
of ``pydoc_data`` and the docstrings of standard modules), embedded with cosh's default all-MiniLM-L6-v2
model, and the queries are questions written for them. Embedding a million passages would take about six
hours on this machine, so the big tables are *derived* from the real embeddings: each row blends two real
passage vectors (plus a little noise, re-normalised like the model's output) and carries the text of its
main passage. One row in a hundred repeats an earlier row's vector exactly, as duplicated chunks do in
real knowledge bases, so distance ties occur and their order is checked.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import json
import re
import shutil
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DATA_DIR = Path(__file__).resolve().parent / "data"
DB_DIR = DATA_DIR / "lancedb"
DIM = 384
#: Bump when the generated data changes, so stale caches are rebuilt.
DATA_VERSION = 2
BASE_PASSAGES = 2000
SEED = 20240611

#: Rows carry the part of the documentation their main passage comes from (passages are in the order of
#: the help topics, then of the modules): a column to colour the map by.
TOPICS = 12

#: Questions a user of these docs might ask (the "real text" queries).
QUESTIONS = (
    "how do generators work",
    "what does the yield statement do",
    "how to open a file and read it line by line",
    "difference between a list and a tuple",
    "how do I sort a dictionary by value",
    "what is a context manager",
    "how does exception handling work with try and except",
    "how to define a class with properties",
    "what are decorators",
    "how to run a subprocess and capture its output",
    "parse command line arguments",
    "format a date as a string",
    "how do I join paths on any operating system",
    "read and write JSON files",
    "how to make an HTTP request",
    "compute the mean and median of numbers",
    "generate random numbers",
    "what is the global interpreter lock",
    "how does asyncio schedule coroutines",
    "how do threads share data safely",
    "match strings with regular expressions",
    "compare two text files and show the differences",
    "create a temporary directory",
    "copy a directory tree",
    "what happens when a module is imported",
    "how are default argument values evaluated",
    "what is the difference between is and ==",
    "how does garbage collection handle reference cycles",
    "serialise objects with pickle",
    "hash a password securely",
    "how to log messages to a file",
    "iterate over two lists at the same time",
    "what does the with statement guarantee",
    "how are floating point numbers rounded",
    "use decimal for exact money calculations",
    "queue tasks between producer and consumer threads",
    "open a network socket and listen for connections",
    "what are slots in a class",
    "how does multiple inheritance resolve methods",
    "how do I unpack a zip archive",
)

_STDLIB_MODULES = """
    os re json collections itertools functools asyncio pathlib typing datetime decimal fractions
    statistics string textwrap argparse logging email sqlite3 csv zipfile tarfile shutil subprocess
    threading socket heapq bisect struct codecs enum dataclasses inspect ast pickle copy pprint random
    math hashlib secrets uuid urllib.parse configparser tempfile glob fnmatch io contextlib abc operator
    weakref traceback warnings calendar difflib queue selectors signal http.client smtplib imaplib
    ftplib xml.dom.minidom unittest doctest
"""


@dataclass(frozen=True)
class BenchTable:
    """One generated table: where it is, its size, and the exact vectors it holds (for the floors)."""

    db_dir: Path
    name: str
    rows: int
    index: str | None

    @property
    def vectors_path(self) -> Path:
        return DATA_DIR / f"{self.name}.npy"

    def load_vectors(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        return np.load(self.vectors_path)


def _paragraphs(text: str) -> Iterator[str]:
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        if 60 <= len(flat) <= 400:
            yield flat


def real_passages(limit: int = BASE_PASSAGES) -> list[str]:
    """Paragraphs of Python's documentation, deduplicated, in a fixed order."""
    import pydoc_data.topics

    found: list[str] = []
    for _, text in sorted(pydoc_data.topics.topics.items()):
        found.extend(_paragraphs(text))
    for name in _STDLIB_MODULES.split():
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        with warnings.catch_warnings():  # reading deprecated names (typing.io) warns
            warnings.simplefilter("ignore", DeprecationWarning)
            attributes = [module, *(getattr(module, n) for n in sorted(dir(module)) if not n.startswith("_"))]
            for attribute in attributes:
                if inspect.ismodule(attribute) or inspect.isclass(attribute) or inspect.isroutine(attribute):
                    found.extend(_paragraphs(inspect.getdoc(attribute) or ""))
    unique = list(dict.fromkeys(found))
    step = max(1, len(unique) // limit)
    return unique[::step][:limit]


def use(data_dir: Path, base_passages: int) -> None:
    """Build and read the data in ``data_dir``, from ``base_passages`` real passages (a toy run's data, in a
    folder of its own, leaves the real run's cache alone)."""
    global DATA_DIR, DB_DIR, BASE_PASSAGES
    DATA_DIR, DB_DIR, BASE_PASSAGES = data_dir, data_dir / "lancedb", base_passages


def load_embedder() -> Any:
    """cosh's default model as the app serves it on a fresh install: float32, from its published weights."""
    from recall_gui.core.embedders.pool import load_local_model

    return load_local_model("AllMiniLML6V2")


def base_embeddings(embedder: Any) -> tuple[list[str], np.ndarray[Any, np.dtype[np.float32]]]:
    """The real passages and their vectors from the model (cached: ~40 s to build here)."""
    texts_path, vectors_path = DATA_DIR / "base_texts.json", DATA_DIR / "base_vectors.npy"
    stamp = {"version": DATA_VERSION, "passages": BASE_PASSAGES, "model": embedder.used}
    if texts_path.exists() and vectors_path.exists():
        cached = json.loads(texts_path.read_text(encoding="utf-8"))
        if cached.get("stamp") == stamp:
            return list(cached["texts"]), np.load(vectors_path)
    texts = real_passages(BASE_PASSAGES)
    print(f"  embedding {len(texts)} real passages with {embedder.used} ...", flush=True)
    started = time.perf_counter()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths pad least
    vectors = np.empty((len(texts), DIM), np.float32)
    embedded = embedder.embed_many([texts[i] for i in order], batch_size=8)
    for position, vector in zip(order, embedded, strict=True):
        vectors[position] = vector
    print(f"  ... {time.perf_counter() - started:.0f} s", flush=True)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    np.save(vectors_path, vectors)
    texts_path.write_text(json.dumps({"stamp": stamp, "texts": texts}), encoding="utf-8")
    return texts, vectors


def question_vectors(embedder: Any) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.vstack([embedder.embed_sync(question) for question in QUESTIONS]).astype(np.float32)


def blended_vectors(
    base: np.ndarray[Any, np.dtype[np.float32]], count: int, rng: np.random.Generator
) -> tuple[np.ndarray[Any, np.dtype[np.float32]], np.ndarray[Any, np.dtype[np.int64]]]:
    """``count`` unit vectors near the real ones: a blend of two passages plus noise; and the main passage."""
    main = rng.integers(0, len(base), count)
    other = rng.integers(0, len(base), count)
    weight = rng.uniform(0.6, 1.0, (count, 1)).astype(np.float32)
    vectors = weight * base[main] + (1 - weight) * base[other]
    vectors += rng.normal(0, 0.015, vectors.shape).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32), main


def held_out_queries(base: np.ndarray[Any, np.dtype[np.float32]], count: int) -> np.ndarray[Any, Any]:
    """Query vectors drawn like the rows but never stored (their nearest rows are not themselves)."""
    return blended_vectors(base, count, np.random.default_rng(SEED + 1))[0]


def _batches(texts: list[str], base: np.ndarray[Any, Any], rows: int, chunk: int = 50_000) -> Iterator[Any]:
    import pyarrow as pa

    rng = np.random.default_rng(SEED)
    for start in range(0, rows, chunk):
        size = min(chunk, rows - start)
        vectors, main = blended_vectors(base, size, rng)
        ids = [f"doc-{start + i:07d}" for i in range(size)]
        contents = [texts[m] for m in main]
        # One row in a hundred repeats an earlier row's vector: exact distance ties.
        for i in range(100, size, 100):
            vectors[i] = vectors[int(rng.integers(0, i))]
            contents[i] = f"{contents[i]} (repeated chunk)"
        yield pa.record_batch(
            {
                "id": pa.array(ids, pa.utf8()),
                "content": pa.array(contents, pa.utf8()),
                "topic": pa.array([f"topic {m * TOPICS // len(texts):02d}" for m in main], pa.utf8()),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM),
            }
        )


def ensure_table(
    texts: list[str], base: np.ndarray[Any, Any], rows: int, index: str | None = None
) -> BenchTable:
    """The table of ``rows`` derived rows (optionally with an ANN index), built if missing or stale."""
    import lancedb
    import pyarrow as pa

    label = (
        f"{rows // 1_000_000}m" if rows >= 1_000_000 else f"{rows // 1000}k" if rows >= 1000 else f"{rows}"
    )
    name = f"{index.lower()}_{label}" if index else f"rows_{label}"
    table = BenchTable(DB_DIR, name, rows, index)
    stamp_path = DATA_DIR / f"{name}.json"
    stamp = {"version": DATA_VERSION, "rows": rows, "index": index, "base": len(base)}
    fresh = stamp_path.exists() and table.vectors_path.exists()
    if fresh and json.loads(stamp_path.read_text(encoding="utf-8")) == stamp:
        return table
    print(f"  building {name} ({rows:,} rows{', ' + index if index else ''}) ...", flush=True)
    started = time.perf_counter()
    stamp_path.unlink(missing_ok=True)
    shutil.rmtree(DB_DIR / f"{name}.lance", ignore_errors=True)
    # The same vectors, kept as .npy, are what the floors scan.
    matrix = np.lib.format.open_memmap(table.vectors_path, mode="w+", dtype=np.float32, shape=(rows, DIM))
    batches = _batches(texts, base, rows)
    first = next(batches)

    def all_batches() -> Iterator[Any]:
        position = 0
        for batch in itertools.chain([first], batches):
            matrix[position : position + batch.num_rows] = (
                batch.column("vector").values.to_numpy().reshape(-1, DIM)
            )
            position += batch.num_rows
            yield batch

    created = lancedb.connect(str(DB_DIR)).create_table(
        name, pa.RecordBatchReader.from_batches(first.schema, all_batches())
    )
    matrix.flush()
    if index is not None:
        created.create_index("vector", config=_index_config(index))
    stamp_path.write_text(json.dumps(stamp), encoding="utf-8")
    print(f"  ... {time.perf_counter() - started:.0f} s", flush=True)
    return table


def _index_config(index: str) -> Any:
    from lancedb.index import IvfHnswSq, IvfPq

    if index == "IvfHnswSq":
        return IvfHnswSq(distance_type="cosine")
    if index == "IvfPq":
        return IvfPq()  # LanceDB's defaults (l2): the case that needs tuning at query time
    raise ValueError(f"unknown index {index}")
