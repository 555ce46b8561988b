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
class ModelInfo:
    """Which model embeds a database's queries here, and whether it is the one cosh's agent uses.

    ``exact``: the model cosh embeds with, in cosh's precision (cosh's own model file or its published
    weights, proved so: ``evidence`` says how; or a cloud provider cosh calls the same way); otherwise a
    *stand-in*, which ``stands_in_for`` names (the file cosh would run) and ``agreement`` measures where
    that was measured.
    """

    #: What the registry calls the model (cosh's name, or ``provider / model`` for a cloud one).
    name: str
    exact: bool
    #: Where the model comes from, in words (a package, a cache folder, a provider).
    source: str
    stands_in_for: str = ""
    agreement: str = ""
    #: For an exact local model: how that was established (its sha256, or its vectors against a reference).
    evidence: str = ""

    @property
    def used(self) -> str:
        """One line for a status bar or a log."""
        if self.exact:
            return f"{self.name}, exact ({self.source})"
        return f"{self.name}, STAND-IN: {self.source}"

    def note(self) -> str | None:
        """What a reader of results must know about a stand-in (``None`` for an exact model)."""
        if self.exact:
            return None
        measured = f" ({self.agreement})" if self.agreement else ""
        return (
            f"{self.name} is embedded with a stand-in here, {self.source}, not the model cosh's agent uses "
            f"({self.stands_in_for}): results may differ from the agent's{measured}. "
            f"recall-gui models get {self.name} brings the exact model."
        )

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"name": self.name, "exact": self.exact, "source": self.source}
        if not self.exact:
            data["stands_in_for"] = self.stands_in_for
            if self.agreement:
                data["agreement"] = self.agreement
        return data


@dataclass(frozen=True)
class EmbeddedQuery:
    """A query's vector and what actually embedded it (shown in the status bar, e.g. the packaged copy).

    ``model`` is ``None`` for a vector at hand (a stored row's), which no model embedded here.
    """

    vector: Vector
    used: str
    model: ModelInfo | None = None


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
