"""What every embedder offers the harness: one query in, one vector out, and an honest name."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns a query into the vector the database was built with."""

    #: What actually embedded the query (shown in the status bar, e.g. the packaged offline copy).
    used: str
    #: The width of the vectors it returns, when known before the first call.
    dim: int | None

    async def embed_query(self, text: str) -> Vector:
        """The query's vector, embedded as cosh embeds it (a plain passage, no query prefix)."""
        ...

    async def aclose(self) -> None:
        """Release connections or other resources."""
        ...
