"""Embedders by registry spec, loaded once and shared by every search.

Local models load on the single embedding thread (loading is CPU- and disk-heavy), so two searches that
need the same model at once load it once. Cloud embedders are cheap objects around an HTTP client.
"""

from __future__ import annotations

import asyncio
import os
import threading

from recall_gui.core.collector import collection_paused
from recall_gui.core.embedders.base import Embedder, Vector
from recall_gui.core.embedders.cloud import CloudEmbedder, configuration_problem
from recall_gui.core.embedders.local import (
    LocalEmbedder,
    fastembed_cache_dir,
    load_local_model,
    load_offline_model,
)
from recall_gui.core.errors import ModelUnavailableError
from recall_gui.core.models import CLOUD_PROVIDERS, OFFLINE_SERVABLE, local_model
from recall_gui.core.registry import EmbedderSpec
from recall_gui.core.workers import embedding_executor

__all__ = [
    "CloudEmbedder",
    "Embedder",
    "EmbedderPool",
    "LocalEmbedder",
    "Vector",
    "embedding_executor",
    "forget_local_models",
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


def is_cached_locally(spec: EmbedderSpec) -> bool:
    """Whether a local model can load without network (packaged copy, or something in fastembed's cache)."""
    if spec.kind != "local":
        return False
    if spec.model in OFFLINE_SERVABLE:
        return True
    info = local_model(spec.model)
    if info is None or info.fastembed_id is None:
        return False
    cache = fastembed_cache_dir()
    needle = info.fastembed_id.split("/")[-1].lower()
    return cache.is_dir() and any(needle in child.name.lower() for child in cache.iterdir())


_local_lock = threading.Lock()
#: Local models by cosh name, shared by every pool of the process: a model is loaded once (about 0.3 s and
#: 100 MB each time), however many harnesses the window or a test creates.
_local_models: dict[str, LocalEmbedder] = {}


def _shared_local_model(cosh_name: str) -> LocalEmbedder:
    """Blocking; runs on the embedding thread, so two callers never load the same model twice."""
    with _local_lock:
        cached = _local_models.get(cosh_name)
    if cached is not None:
        return cached
    with collection_paused():
        model = load_local_model(cosh_name)
    with _local_lock:
        return _local_models.setdefault(cosh_name, model)


def forget_local_models() -> None:
    """Drop the loaded local models (a model file was replaced; tests that damage one)."""
    with _local_lock:
        _local_models.clear()


class EmbedderPool:
    """Loaded embedders by spec; thread-safe, usable from any event loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._embedders: dict[tuple[EmbedderSpec, int | None], Embedder] = {}

    def _cached(self, key: tuple[EmbedderSpec, int | None]) -> Embedder | None:
        with self._lock:
            return self._embedders.get(key)

    def _load_local(self, key: tuple[EmbedderSpec, int | None]) -> Embedder:
        cached = self._cached(key)
        if cached is not None:
            return cached
        embedder = _shared_local_model(key[0].model)
        with self._lock:
            self._embedders[key] = embedder
        return embedder

    def loaded_local(self, spec: EmbedderSpec) -> LocalEmbedder | None:
        """The local model for ``spec`` if this pool has it loaded already (no waiting), else ``None``."""
        embedder = self._cached((spec, None)) if spec.kind == "local" else None
        return embedder if isinstance(embedder, LocalEmbedder) else None

    async def get(self, spec: EmbedderSpec, table_dim: int | None = None) -> Embedder:
        """The embedder for ``spec``; a cloud model of unknown width is asked for ``table_dim``."""
        key: tuple[EmbedderSpec, int | None]
        if spec.kind == "local":
            key = (spec, None)
            cached = self._cached(key)
            if cached is not None:
                return cached
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(embedding_executor(), self._load_local, key)
        if spec.kind == "cloud":
            key = (spec, spec.dim or table_dim)
            with self._lock:
                embedder = self._embedders.get(key)
                if embedder is None:
                    embedder = CloudEmbedder(
                        spec.provider or "", spec.model, dim=key[1], dim_from_table=spec.dim is None
                    )
                    self._embedders[key] = embedder
            return embedder
        raise ModelUnavailableError(
            f'unknown embedder "{spec.model}"', hint='Fix the database\'s "embedder" in the registry.'
        )

    async def aclose(self) -> None:
        with self._lock:
            embedders = list(self._embedders.values())
        for embedder in embedders:
            await embedder.aclose()
