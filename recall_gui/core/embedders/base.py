"""What an embedder hands the search: the query's vector, and an honest name of what embedded it."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class EmbeddedQuery:
    """A query's vector and what actually embedded it (shown in the status bar, e.g. the packaged copy)."""

    vector: Vector
    used: str


@dataclass
class QueryVector:
    """A query's vector, being embedded (or given): the one form the search pipeline takes it in.

    ``on_worker``: it is computed on a worker thread, so another worker thread may wait for it (ranking
    then starts the moment it is ready, without a round trip through the event loop). A vector computed
    by the event loop itself (a cloud request) must be awaited there instead.
    """

    future: Future[EmbeddedQuery]
    on_worker: bool = False
    #: A vector at hand rather than a model's answer (no model width to check against the table).
    given_vector: bool = False
    #: When the vector was ready (``time.perf_counter()``), once it is.
    ready_at: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.future.add_done_callback(self._mark_ready)

    def _mark_ready(self, _future: Future[EmbeddedQuery]) -> None:
        self.ready_at = time.perf_counter()

    @classmethod
    def given(cls, vector: Vector, used: str) -> QueryVector:
        """A vector at hand (a stored row's, or one a caller computed)."""
        future: Future[EmbeddedQuery] = Future()
        future.set_result(EmbeddedQuery(vector, used))
        return cls(future, on_worker=True, given_vector=True)

    async def wait(self) -> EmbeddedQuery:
        """The vector, awaited on the event loop; one already there costs no turn of the loop."""
        if self.future.done() and not self.future.cancelled():
            return self.future.result()
        return await asyncio.wrap_future(self.future)

    def cancel(self) -> None:
        self.future.cancel()
