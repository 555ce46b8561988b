"""The demo knowledge base: Python's own help topics, so a new user sees real search on the first start.

The text is the standard library's ``pydoc_data.topics`` (present in every Python), split into passages
with stable ids (``topic#n``), embedded with the local model cosh uses by default, and written in cosh's
schema. It is built in a temporary folder and moved into place only when complete, so a cancelled or
failed build leaves the previous demo (or nothing) behind, never half a table.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from recall_gui.core.errors import DemoBuildCancelled
from recall_gui.core.paths import RegistryLocation, demo_db_dir
from recall_gui.core.registry import Registry, register_database

DEMO_NAME = "python-docs"
DEMO_DESCRIPTION = (
    "Python language reference: the help topics shipped with Python (statements, expressions, "
    "data model, built-in types). Built-in demo of recall-gui."
)
DEMO_MODEL = "AllMiniLML6V2"
MAX_PASSAGE_CHARS = 900
#: Small batches of passages of similar length waste least work on padding
#: (docs/PERFORMANCE.md#demo-batch).
BATCH = 8

_UNDERLINE = re.compile(r"^\s*([*=\-~^])\1{2,}\s*$")


@dataclass(frozen=True)
class Passage:
    id: str
    content: str


def _blocks(text: str) -> Iterator[str]:
    """Paragraphs of a topic, with heading underlines dropped and oversized paragraphs cut at lines."""
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line.rstrip() for line in paragraph.splitlines() if not _UNDERLINE.match(line)]
        block = "\n".join(lines).strip("\n")
        if not block.strip():
            continue
        while len(block) > MAX_PASSAGE_CHARS:
            cut = block.rfind("\n", 0, MAX_PASSAGE_CHARS)
            cut = cut if cut > MAX_PASSAGE_CHARS // 3 else MAX_PASSAGE_CHARS
            yield block[:cut].rstrip()
            block = block[cut:].lstrip("\n")
        if block.strip():
            yield block


def _topic_passages(topic: str, text: str) -> list[Passage]:
    """One topic's paragraphs grouped into passages of at most about :data:`MAX_PASSAGE_CHARS`."""
    blocks = list(_blocks(text))
    if not blocks:
        return []
    title = blocks[0].splitlines()[0].strip()
    groups: list[list[str]] = [[]]
    for block in blocks:
        current = groups[-1]
        if current and sum(len(b) + 2 for b in current) + len(block) > MAX_PASSAGE_CHARS:
            groups.append(current := [])
        current.append(block)
    passages = []
    for number, group in enumerate(groups):
        body = "\n\n".join(group)
        content = body if number == 0 else f"{title} (continued)\n\n{body}"
        passages.append(Passage(f"{topic}#{number}", content))
    return passages


def demo_passages() -> list[Passage]:
    """Every passage of the demo, in a stable order with stable ids."""
    from pydoc_data.topics import topics

    return [passage for topic in sorted(topics) for passage in _topic_passages(topic, topics[topic])]


ProgressCallback = Callable[[int, int], None]


def build_demo(
    registry_dir: Path,
    target: Path | None = None,
    *,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Build (or rebuild) the demo and register it, active, in ``registry_dir``. Blocking; returns the
    database folder. Raises :class:`DemoBuildCancelled` when ``cancel`` is set."""
    import lancedb
    import numpy as np
    import pyarrow as pa

    from recall_gui.core.embedders.local import load_local_model

    target = Path(target) if target is not None else demo_db_dir()
    passages = demo_passages()
    total = len(passages)
    report = progress or (lambda done, total: None)
    report(0, total)
    embedder = load_local_model(DEMO_MODEL)
    by_length = sorted(range(total), key=lambda i: len(passages[i].content))
    matrix = np.zeros((total, embedder.dim or 384), dtype=np.float32)
    for start in range(0, total, BATCH):
        if cancel is not None and cancel.is_set():
            raise DemoBuildCancelled("building the demo knowledge base was cancelled")
        batch = by_length[start : start + BATCH]
        vectors = embedder.embed_many([passages[i].content for i in batch], batch_size=BATCH)
        matrix[batch] = np.vstack(vectors)
        report(min(start + BATCH, total), total)
    table = pa.table(
        {
            "id": pa.array([p.id for p in passages], pa.utf8()),
            "content": pa.array([p.content for p in passages], pa.utf8()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1]),
        }
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".demo-building-", dir=target.parent))
    try:
        lancedb.connect(str(staging)).create_table(DEMO_NAME, table)
        if cancel is not None and cancel.is_set():
            raise DemoBuildCancelled("building the demo knowledge base was cancelled")
        old = target.with_name(f".{target.name}-old-{int(time.time() * 1000)}")
        if target.exists():
            target.rename(old)
        staging.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    register_database(
        registry_dir,
        {
            "name": DEMO_NAME,
            "uri": str(target),
            "description": DEMO_DESCRIPTION,
            "embedder": {"Local": {"model": DEMO_MODEL}},
            "created_at": int(time.time() * 1000),
        },
    )
    return target


def demo_exists(target: Path | None = None) -> bool:
    target = Path(target) if target is not None else demo_db_dir()
    return (target / f"{DEMO_NAME}.lance").is_dir()


def demo_wanted(location: RegistryLocation, registry: Registry) -> bool:
    """Whether to offer building the demo at start-up: only in the app's own registry, and only while it
    lists no database at all (a user with a cosh registry, or who chose one, never gets it unasked)."""
    return location.is_app_registry and not registry.databases and not registry.problems
