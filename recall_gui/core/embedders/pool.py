"""Embedders by registry spec: local fastembed models and cloud providers, kept by a session's pool.

Local models load on the session's embedding thread (loading is CPU- and disk-heavy). Cloud embedders are
cheap objects around an HTTP client.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from concurrent.futures import Executor

from recall_gui.core.base.collector import collection_paused
from recall_gui.core.base.errors import ModelUnavailableError
from recall_gui.core.embedders.base import EmbeddedQuery, QueryVector, Vector
from recall_gui.core.embedders.cloud import CloudEmbedder, configuration_problem
from recall_gui.core.embedders.local import (
    LocalEmbedder,
    hub_reachable,
    load_local_model,
    load_offline_model,
    local_model_problem,
)
from recall_gui.core.registry.models import CLOUD_PROVIDERS, local_model
from recall_gui.core.registry.registry_types import EmbedderSpec

__all__ = [
    "CloudEmbedder",
    "EmbeddedQuery",
    "Embedder",
    "EmbedderPool",
    "LocalEmbedder",
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
    info = local_model(spec.model)
    if info is None:
        return f'unknown local model "{spec.model}"'
    if info.fastembed_id is None:
        return f"{spec.model} is not available in Python fastembed"
    return None


Embedder = LocalEmbedder | CloudEmbedder

#: How long the answer to "does the model hub answer?" is kept.
HUB_ANSWER_KEPT_S = 60.0


class EmbedderPool:
    """The embedders of one session: local models loaded once (on ``executor``, the session's embedding
    thread, so two searches that need a model at once load it once), cloud embedders by spec and width."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self._lock = threading.Lock()
        self._local: dict[str, LocalEmbedder] = {}
        self._cloud: dict[tuple[EmbedderSpec, int | None], CloudEmbedder] = {}
        self._hub_answer: tuple[float, bool] | None = None

    def loaded_local(self, spec: EmbedderSpec) -> LocalEmbedder | None:
        """The local model for ``spec`` if it is loaded already (no waiting), else ``None``."""
        with self._lock:
            return self._local.get(spec.model) if spec.kind == "local" else None

    async def problem(self, spec: EmbedderSpec) -> ModelUnavailableError | None:
        """Why ``spec`` cannot embed here, found without loading the model (what :func:`model_problem`
        knows, then whether a local model is packaged, cached or can be downloaded now); ``None`` if it
        can. The blocking part runs on the embedding thread."""
        reason = model_problem(spec)
        if reason is not None:
            return ModelUnavailableError(reason)
        if spec.kind != "local" or self.loaded_local(spec) is not None:
            return None
        return await asyncio.wrap_future(
            self.executor.submit(local_model_problem, spec.model, self._hub_reachable)
        )

    def _hub_reachable(self) -> bool:
        """Whether the model hub answers, asked at most once per :data:`HUB_ANSWER_KEPT_S` (a health
        check of many databases asks once)."""
        now = time.monotonic()
        with self._lock:
            kept = self._hub_answer
        if kept is not None and now - kept[0] < HUB_ANSWER_KEPT_S:
            return kept[1]
        reachable = hub_reachable()
        with self._lock:
            self._hub_answer = (now, reachable)
        return reachable

    def _load_local(self, cosh_name: str) -> LocalEmbedder:
        """Blocking; runs on the embedding thread, so a model is never loaded twice at once."""
        with self._lock:
            cached = self._local.get(cosh_name)
        if cached is not None:
            return cached
        with collection_paused():
            model = load_local_model(cosh_name)
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

    def _embed_local(self, cosh_name: str, text: str) -> EmbeddedQuery:
        embedder = self._load_local(cosh_name)
        return EmbeddedQuery(embedder.embed_checked(text), embedder.used)

    async def aclose(self) -> None:
        with self._lock:
            clouds = list(self._cloud.values())
            self._cloud.clear()
            self._local.clear()
        for embedder in clouds:
            await embedder.aclose()


async def _embed_cloud(embedder: CloudEmbedder, text: str) -> EmbeddedQuery:
    return EmbeddedQuery(await embedder.embed_query(text), embedder.used)


def _unknown(spec: EmbedderSpec) -> ModelUnavailableError:
    return ModelUnavailableError(
        f'unknown embedder "{spec.model}"', hint='Fix the database\'s "embedder" in the registry.'
    )
