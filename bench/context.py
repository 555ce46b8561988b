"""What every metric group shares: the generated data, the real model, the queries, the machine."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from bench import data


@dataclass(frozen=True)
class BenchSize:
    """How much data and work each group gets: the real run's, or a toy run (``make bench-smoke``) that
    goes through every group's code in seconds and measures nothing worth keeping."""

    toy: bool = False

    def rows(self, full: int) -> int:
        """Rows (or registry entries) for a group whose real run has ``full``."""
        return full if not self.toy else max(500, full // 200)

    def count(self, full: int) -> int:
        """Queries, runs or rounds for a group whose real run has ``full``."""
        return full if not self.toy else min(full, 3)


class BenchContext:
    """Built lazily: a group that needs no embedding never loads the model."""

    def __init__(self, size: BenchSize | None = None) -> None:
        self.size = size or BenchSize()
        self._tables: dict[tuple[int, str | None], data.BenchTable] = {}

    @cached_property
    def embedder(self) -> Any:
        return data.load_embedder()

    @cached_property
    def base(self) -> tuple[list[str], np.ndarray[Any, np.dtype[np.float32]]]:
        return data.base_embeddings(self.embedder)

    def table(self, rows: int, index: str | None = None) -> data.BenchTable:
        """The generated table the real run has with ``rows`` rows (at toy size, a smaller one)."""
        rows = self.size.rows(rows)
        key = (rows, index)
        if key not in self._tables:
            texts, vectors = self.base
            self._tables[key] = data.ensure_table(texts, vectors, rows, index)
        return self._tables[key]

    @cached_property
    def questions(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        """The real questions, embedded with cosh's default model as the app serves it."""
        return data.question_vectors(self.embedder)

    def queries(self, count: int) -> list[np.ndarray[Any, np.dtype[np.float32]]]:
        """``count`` query vectors: the real questions first, then held-out vectors drawn like the rows."""
        held_out = data.held_out_queries(self.base[1], max(0, count - len(self.questions)))
        # At toy size a group still gets the ``count`` it asks for: its code indexes into them.
        return list(np.vstack([self.questions, held_out])[:count])

    @property
    def registry_dir(self) -> Path:
        return data.DATA_DIR / "registry"


def machine() -> dict[str, Any]:
    """The machine the numbers were measured on."""
    import lancedb

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        ram_gb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 1024**3
    except (AttributeError, OSError, ValueError):
        ram_gb = float("nan")
    return {
        "cpus": os.cpu_count(),
        "cpu": cpu,
        "ram_gb": round(ram_gb, 1),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "lancedb": lancedb.__version__,
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
    }
