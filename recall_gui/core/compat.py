"""Every place recall-gui relies on another library's internals, each guarded by the versions it was tested
with. On an untested version the public (slower) way is taken, never a wrong one, and
``tests/core/test_compat.py`` fails loudly so the guard is looked at before a release.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from importlib import metadata
from typing import Any

#: Release series each internal was checked against (``major.minor``).
TESTED = {
    "lancedb": ("0.40",),
    "fastembed": ("0.7", "0.8", "0.9"),
    "openTSNE": ("1.0",),
}


def _series(package: str) -> str | None:
    try:
        parts = metadata.version(package).split(".")
    except metadata.PackageNotFoundError:
        return None
    return ".".join(parts[:2])


@functools.cache
def is_tested(package: str) -> bool:
    """Whether the installed ``package`` is a release series the internals here were checked against."""
    return _series(package) in TESTED.get(package, ())


def lancedb_row_id_executor(query: Any) -> Callable[..., Any] | None:
    """The Rust query's ``execute`` for a LanceDB query that asks for row ids, else ``None``.

    LanceDB's ``to_arrow`` reads the table's schema once more before every query, to add row ids when blob
    columns need them; a query that asks for row ids itself never needs that, and executing it directly
    saves a round trip to LanceDB's runtime (see docs/PERFORMANCE.md#tables-read_query).
    """
    if not is_tested("lancedb"):
        return None
    execute = getattr(getattr(query, "_inner", None), "execute", None)
    if execute is None or getattr(query, "_with_row_id", None) is not True:
        return None
    return execute  # type: ignore[no-any-return]


#: onnxruntime's thread pools busy-wait after every run by default, taking the cores the window and the
#: search need (docs/PERFORMANCE.md#local-no_spinning); fastembed exposes no option for it.
NO_SPINNING = {"session.intra_op.allow_spinning": "0", "session.inter_op.allow_spinning": "0"}
_session_options_lock = threading.Lock()


@contextlib.contextmanager
def onnxruntime_sessions_without_spinning() -> Iterator[None]:
    """fastembed models created in this block run their onnxruntime sessions without spinning threads.

    fastembed builds its session options with ``onnxruntime.SessionOptions()``: that name is swapped for
    the block (under a lock, since it is module state). Skipped on an untested fastembed.
    """
    if not is_tested("fastembed"):
        yield
        return
    import onnxruntime

    original = onnxruntime.SessionOptions

    def options_without_spinning() -> Any:
        options = original()
        for key, value in NO_SPINNING.items():
            options.add_session_config_entry(key, value)
        return options

    with _session_options_lock:
        onnxruntime.SessionOptions = options_without_spinning
        try:
            yield
        finally:
            onnxruntime.SessionOptions = original


def fastembed_model_descriptions() -> list[Any]:
    """fastembed's list of the text models it knows (a private listing; empty if it moved)."""
    try:
        from fastembed import TextEmbedding

        return list(TextEmbedding._list_supported_models())
    except Exception:  # a private listing may change or vanish: callers only use it for messages
        return []


def annoy_index(dim: int, seed: int) -> Any | None:
    """A seeded, empty Annoy index (Euclidean) from the copy of Annoy that openTSNE ships, else ``None``.

    openTSNE's own neighbour search adds, builds and queries in one uninterruptible call; with the index
    at hand the map queries it in chunks, so a long t-SNE reports progress and stops when cancelled.
    """
    if not is_tested("openTSNE"):
        return None
    try:
        from openTSNE.dependencies.annoy import AnnoyIndex
    except ImportError:
        return None
    index = AnnoyIndex(dim, "euclidean")
    index.set_seed(seed)
    return index
