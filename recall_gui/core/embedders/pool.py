"""Embedders by registry spec: local models (``local.py``: cosh's own file, the published weights or a
stand-in) and cloud providers, kept by a session's pool.

Local models load on the session's embedding thread (loading is CPU- and disk-heavy). Cloud embedders are
cheap objects around an HTTP client.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from recall_gui.core.base.collector import collection_paused
from recall_gui.core.base.errors import EmbedderError, ModelUnavailableError
from recall_gui.core.embedders.base import EmbeddedQuery, ModelInfo, QueryVector, Vector
from recall_gui.core.embedders.cloud import CloudEmbedder, cloud_model_info, configuration_problem
from recall_gui.core.embedders.local import LocalEmbedder, load_offline_model
from recall_gui.core.embedders.model_choice import load_local_model, local_model_problem
from recall_gui.core.embedders.model_reading import ModelReading
from recall_gui.core.embedders.model_verdicts import Verdicts
from recall_gui.core.registry.models import CLOUD_PROVIDERS, local_model
from recall_gui.core.registry.registry_types import EmbedderSpec

__all__ = [
    "CloudEmbedder",
    "EmbeddedQueries",
    "EmbeddedQuery",
    "Embedder",
    "EmbedderPool",
    "LocalEmbedder",
    "ModelInfo",
    "QueryVector",
    "Vector",
    "load_local_model",
    "load_offline_model",
    "model_problem",
]


def model_problem(spec: EmbedderSpec) -> str | None:
    """Why ``spec`` surely cannot embed here, without loading anything; ``None`` if it may work."""
    if spec.kind == "unknown":
        return f'unknown embedder "{spec.model}"'
    if spec.kind == "cloud":
        provider = spec.provider or ""
        if provider not in CLOUD_PROVIDERS:
            return f'unknown embedding provider "{provider}"'
        return configuration_problem(provider, os.environ)
    if local_model(spec.model) is None:
        return f'unknown local model "{spec.model}"'
    return None


Embedder = LocalEmbedder | CloudEmbedder

#: Queries per job of :meth:`EmbedderPool.embed_queries` on the embedding thread (about half a second).
BULK_JOB = 128
#: Requests to a cloud provider in flight at once while embedding many queries.
CLOUD_REQUESTS = 4


@dataclass(frozen=True)
class EmbeddedQueries:
    """Many queries' vectors (one float32 row each, in the order asked) and what embedded them."""

    vectors: Vector
    used: str
    #: What embedded them (exact, or a stand-in), as :class:`EmbeddedQuery` says it of one query.
    model: ModelInfo | None = None


class EmbedderPool:
    """The embedders of one session: local models loaded once (on ``executor``, the session's embedding
    thread, so two searches that need a model at once load it once), cloud embedders by spec and width."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self._lock = threading.Lock()
        self._local: dict[str, LocalEmbedder] = {}
        self._cloud: dict[tuple[EmbedderSpec, int | None], CloudEmbedder] = {}
        #: What each model copy was judged to be; a copy that did not load is not loaded again.
        self.verdicts = Verdicts()

    def loaded_local(self, spec: EmbedderSpec) -> LocalEmbedder | None:
        """The local model for ``spec`` if it is loaded already (no waiting), else ``None``."""
        with self._lock:
            return self._local.get(spec.model) if spec.kind == "local" else None

    async def problem(self, spec: EmbedderSpec) -> ModelUnavailableError | None:
        """Why ``spec`` cannot embed here, found without loading the model (what :func:`model_problem`
        knows, then whether some copy of a local model is on this machine); ``None`` if it can. The
        blocking part (reading folders) runs on the embedding thread."""
        reason = model_problem(spec)
        if reason is not None:
            return ModelUnavailableError(reason)
        if spec.kind != "local" or self.loaded_local(spec) is not None:
            return None
        return await asyncio.wrap_future(self.executor.submit(local_model_problem, spec.model, self.verdicts))

    def model_info(self, spec: EmbedderSpec) -> ModelInfo | None:
        """What embeds ``spec``'s queries here: a cloud model's at once, a local model's once it is loaded
        (``None`` before)."""
        if spec.kind == "cloud":
            return cloud_model_info(spec.provider or "", spec.model)
        loaded = self.loaded_local(spec)
        return loaded.model_info if loaded is not None else None

    async def reading(self, spec: EmbedderSpec) -> ModelReading | None:
        """What ``spec``'s model reads of a text (its local model loaded if need be); ``None`` for a cloud
        model, whose tokenizer is not here. Raises :class:`ModelUnavailableError` like a search."""
        if spec.kind != "local":
            return None
        embedder = await self.get(spec)
        assert isinstance(embedder, LocalEmbedder)
        # Made once per model, on the embedding thread: copying a tokenizer takes tens of milliseconds.
        return await asyncio.wrap_future(self.executor.submit(embedder.reading))

    def forget(self, cosh_name: str) -> None:
        """Let the next search load ``cosh_name`` afresh (after another copy of it was brought here)."""
        with self._lock:
            self._local.pop(cosh_name, None)
        self.verdicts.forget()

    def _load_local(self, cosh_name: str) -> LocalEmbedder:
        """Blocking; runs on the embedding thread, so a model is never loaded twice at once."""
        with self._lock:
            cached = self._local.get(cosh_name)
        if cached is not None:
            return cached
        with collection_paused():
            model = load_local_model(cosh_name, self.verdicts)
        with self._lock:
            return self._local.setdefault(cosh_name, model)

    def _cloud_embedder(self, spec: EmbedderSpec, table_dim: int | None) -> CloudEmbedder:
        key = (spec, spec.dim or table_dim)
        with self._lock:
            embedder = self._cloud.get(key)
            if embedder is None:
                embedder = CloudEmbedder(
                    spec.provider or "", spec.model, dim=key[1], dim_from_table=spec.dim is None
                )
                self._cloud[key] = embedder
        return embedder

    async def get(self, spec: EmbedderSpec, table_dim: int | None = None) -> Embedder:
        """The embedder for ``spec``, loaded if need be; a cloud model of unknown width is asked for
        ``table_dim``."""
        if spec.kind == "local":
            loaded = self.loaded_local(spec)
            if loaded is not None:
                return loaded
            return await asyncio.wrap_future(self.executor.submit(self._load_local, spec.model))
        if spec.kind == "cloud":
            return self._cloud_embedder(spec, table_dim)
        raise _unknown(spec)

    def start_query(self, spec: EmbedderSpec, text: str, table_dim: int | None = None) -> QueryVector:
        """Start embedding ``text`` now: a local model on the embedding thread (loading it first if need
        be, in the same job), a cloud model as a task of the running event loop."""
        if spec.kind == "local":
            job = self.executor.submit(self._embed_local, spec.model, text)
            return QueryVector(job, on_worker=True)
        if spec.kind == "cloud":
            embedder = self._cloud_embedder(spec, table_dim)
            loop = asyncio.get_running_loop()
            return QueryVector(asyncio.run_coroutine_threadsafe(_embed_cloud(embedder, text), loop))
        raise _unknown(spec)

    async def embed_queries(
        self,
        spec: EmbedderSpec,
        texts: Sequence[str],
        table_dim: int | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> EmbeddedQueries:
        """Many queries' vectors, each the one :meth:`start_query` gives it alone: a local model's in
        jobs of :data:`BULK_JOB` queries on the embedding thread (a search started meanwhile waits for one
        job, not all), a cloud model's one request per query, :data:`CLOUD_REQUESTS` at a time.
        ``on_progress(done, total)`` after each job; cancelling stops between jobs."""
        import numpy as np

        vectors: list[Vector] = []
        used, model = "", None
        if spec.kind == "local":
            embedder = await self.get(spec)
            assert isinstance(embedder, LocalEmbedder)
            used, model = embedder.used, embedder.model_info
            for start in range(0, len(texts), BULK_JOB):
                job = self.executor.submit(embedder.embed_queries, list(texts[start : start + BULK_JOB]))
                embedded: list[Vector] = await asyncio.wrap_future(job)
                vectors.extend(embedded)
                if on_progress is not None:
                    on_progress(len(vectors), len(texts))
        elif spec.kind == "cloud":
            cloud = self._cloud_embedder(spec, table_dim)
            used, model = cloud.used, cloud.model_info
            for start in range(0, len(texts), CLOUD_REQUESTS):
                requests = (cloud.embed_query(text) for text in texts[start : start + CLOUD_REQUESTS])
                vectors.extend(await asyncio.gather(*requests))
                if on_progress is not None:
                    on_progress(len(vectors), len(texts))
        else:
            raise _unknown(spec)
        if not vectors:
            return EmbeddedQueries(np.zeros((0, table_dim or spec.dim or 0), np.float32), used, model)
        if len({np.shape(vector) for vector in vectors}) > 1:
            raise EmbedderError(f"{used} returned vectors of different widths for different queries")
        return EmbeddedQueries(np.vstack(vectors).astype(np.float32, copy=False), used, model)

    def _embed_local(self, cosh_name: str, text: str) -> EmbeddedQuery:
        embedder = self._load_local(cosh_name)
        return EmbeddedQuery(embedder.embed_checked(text), embedder.used, embedder.model_info)

    async def aclose(self) -> None:
        with self._lock:
            clouds = list(self._cloud.values())
            self._cloud.clear()
            self._local.clear()
        for embedder in clouds:
            await embedder.aclose()


async def _embed_cloud(embedder: CloudEmbedder, text: str) -> EmbeddedQuery:
    return EmbeddedQuery(await embedder.embed_query(text), embedder.used, embedder.model_info)


def _unknown(spec: EmbedderSpec) -> ModelUnavailableError:
    return ModelUnavailableError(
        f'unknown embedder "{spec.model}"', hint='Fix the database\'s "embedder" in the registry.'
    )
