"""Every place recall-gui relies on another library's internals, each guarded by the versions it was tested
with. On an untested version the public (slower) way is taken, never a wrong one, and
``tests/core/test_compat.py`` fails loudly so the guard is looked at before a release.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

#: Release series each internal was checked against (``major.minor``).
TESTED = {
    "lancedb": ("0.40",),
    "lance-namespace-urllib3-client": ("0.13",),
    "fastembed": ("0.7", "0.8", "0.9"),
    "openTSNE": ("1.0",),
    "onnxruntime": ("1.32",),
    "tokenizers": ("0.23",),
    "ray": ("2.60",),
    # The window's libraries: no internals, but the series the window was tested with (pyproject bounds them).
    "PySide6-Essentials": ("6.11",),
    "qasync": ("0.28",),
    "pyqtgraph": ("0.13", "0.14"),
}
#: fastembed series whose embedding of the packaged model ``embedders/direct.py`` reproduces (its loading,
#: tokenizing, pooling and normalising: the same in 0.9.0 and 0.9.1).
DIRECT_EMBEDDING_FASTEMBED = ("0.9",)


def _series(package: str) -> str | None:
    from importlib import metadata  # read when a guard is first asked, not when the app starts

    try:
        parts = metadata.version(package).split(".")
    except metadata.PackageNotFoundError:
        return None
    return ".".join(parts[:2])


@functools.cache
def is_tested(package: str) -> bool:
    """Whether the installed ``package`` is a release series the internals here were checked against."""
    return _series(package) in TESTED.get(package, ())


def direct_embedding_checked() -> bool:
    """Whether ``embedders/direct.py`` was checked to give fastembed's vectors bit for bit with the installed
    onnxruntime, tokenizers and fastembed (``tests/core/test_direct_embedding.py``). Read from the packages'
    metadata: nothing is imported. On any other version fastembed embeds, as it did before."""
    return (
        is_tested("onnxruntime")
        and is_tested("tokenizers")
        and _series("fastembed") in DIRECT_EMBEDDING_FASTEMBED
    )


#: The generated REST client of Lance namespaces. ``import lancedb`` imports it (``lancedb.db`` imports
#: ``lance_namespace``, which imports the client's models), and the client's ``__init__`` imports all of
#: its API classes too: most of what ``import lancedb`` costs, for REST namespaces that local and
#: object-store tables never use (docs/PERFORMANCE_LOG.md#compat-defer_lance_rest_client).
LANCE_REST_CLIENT = "lance_namespace_urllib3_client"


def defer_lance_rest_client() -> bool:
    """Make the REST client's package load its ``__init__`` (all of its API classes) only when something
    asks for one of its names; its submodules (the models ``lance_namespace`` needs) load as usual.

    Call it before anything imports LanceDB (entry points do, through ``runtime.configure_process``).
    Returns whether the client is deferred: not on an untested LanceDB or client, not when it is loaded
    already. Whatever asks for the client's names later gets the real package, loaded then.
    """
    if LANCE_REST_CLIENT in sys.modules or "lancedb" in sys.modules:
        return False
    if not (is_tested("lancedb") and is_tested("lance-namespace-urllib3-client")):
        return False
    spec = importlib.util.find_spec(LANCE_REST_CLIENT)
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return False
    sys.modules[LANCE_REST_CLIENT] = _DeferredPackage(spec)
    return True


def defer_lance_rest_client_on_import() -> None:
    """Have :func:`defer_lance_rest_client` run when LanceDB is first imported, whenever that is: a command
    or a window that never imports it never reads the packages' versions either (the guard's
    ``importlib.metadata`` costs a fresh process tens of milliseconds)."""
    if "lancedb" not in sys.modules and not any(isinstance(f, _DeferOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _DeferOnImport())


class _DeferOnImport(importlib.abc.MetaPathFinder):
    """Defers the REST client when ``lancedb`` is first looked for, then does nothing. It stays in
    ``sys.meta_path``: removing it could make an import in another thread skip the finder after it."""

    def __init__(self) -> None:
        self._done = False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == "lancedb" and not self._done:
            self._done = True
            defer_lance_rest_client()
        return None  # the usual finders find it


class _DeferredPackage(ModuleType):
    """A package whose ``__init__`` runs the first time a name it defines is asked for.

    Its submodules import as usual meanwhile (the spec's search path is set). If the ``__init__`` fails,
    the package leaves ``sys.modules``, so the next import runs it afresh, as after any failed import.
    """

    def __init__(self, spec: importlib.machinery.ModuleSpec) -> None:
        super().__init__(spec.name)
        self.__dict__.update(importlib.util.module_from_spec(spec).__dict__)
        self.__dict__["_deferred_lock"] = threading.RLock()
        self.__dict__["_deferred_state"] = "deferred"

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("__"):
            self.load()
            if name in self.__dict__:
                return self.__dict__[name]
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def load(self) -> None:
        """Run the package's real ``__init__`` (once; a lookup while it runs finds what it set so far)."""
        with self.__dict__["_deferred_lock"]:
            if self.__dict__["_deferred_state"] != "deferred":
                return
            self.__dict__["_deferred_state"] = "loading"
            spec = self.__spec__
            assert spec is not None and spec.loader is not None
            try:
                spec.loader.exec_module(self)
            except BaseException:
                if sys.modules.get(self.__name__) is self:
                    del sys.modules[self.__name__]
                raise
            self.__dict__["_deferred_state"] = "loaded"


#: PySide6's module that reads the source of every module imported after PySide6 (for its ``__feature__``
#: switches), to see whether it names PySide6.
PYSIDE_FEATURE = "shibokensupport.feature"


def faster_pyside_module_check() -> bool:
    """Have PySide6 answer "does this module's source name PySide6?" from the file's bytes instead of
    ``inspect.getsource``, which decodes every module imported after PySide6 line by line (a few hundred
    at the window's start: docs/PERFORMANCE_LOG.md#start-up). Same answer; a module without a ``.py`` file is
    asked the original way. Only on a tested PySide6 that is imported already; returns whether it is done.
    """
    feature, pyside = sys.modules.get(PYSIDE_FEATURE), sys.modules.get("PySide6")
    original = getattr(feature, "_mod_uses_pyside", None)
    version = str(getattr(pyside, "__version__", ""))
    if original is None or getattr(original, "from_bytes", False):
        return False
    if ".".join(version.split(".")[:2]) not in TESTED["PySide6-Essentials"]:
        return False

    def module_uses_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            return bool(original(module))
        try:
            with open(path, "rb") as source:
                return b"PySide6" in source.read()
        except OSError:
            return bool(original(module))

    module_uses_pyside.from_bytes = True  # type: ignore[attr-defined]
    feature._mod_uses_pyside = module_uses_pyside  # type: ignore[union-attr]
    return True


def lancedb_row_id_executor(query: Any) -> Callable[..., Any] | None:
    """The Rust query's ``execute`` for a LanceDB query that asks for row ids, else ``None``.

    LanceDB's ``to_arrow`` reads the table's schema once more before every query, to add row ids when blob
    columns need them; a query that asks for row ids itself never needs that, and executing it directly
    saves a round trip to LanceDB's runtime (see docs/PERFORMANCE_LOG.md#tables-read_query).
    """
    if not is_tested("lancedb"):
        return None
    execute = getattr(getattr(query, "_inner", None), "execute", None)
    if execute is None or getattr(query, "_with_row_id", None) is not True:
        return None
    return execute  # type: ignore[no-any-return]


#: onnxruntime's thread pools busy-wait after every run by default, taking the cores the window and the
#: search need (docs/PERFORMANCE_LOG.md#local-no_spinning); fastembed exposes no option for it.
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


def fastembed_tokenizer(embedding: Any) -> Any | None:
    """The tokenizer a loaded fastembed ``TextEmbedding`` encodes with (its model's ``tokenizer``), to cut
    texts where cosh does; ``None`` on an untested fastembed or where it is not to be found."""
    if not is_tested("fastembed"):
        return None
    tokenizer = getattr(getattr(embedding, "model", None), "tokenizer", None)
    return tokenizer if callable(getattr(tokenizer, "enable_truncation", None)) else None


def lancedb_native() -> ModuleType | None:
    """LanceDB's compiled module (``lancedb._lancedb``) loaded without the Python package around it, for a
    process that only counts rows: it loads in milliseconds, where ``import lancedb`` (PyArrow, pandas,
    the namespace clients) takes most of a second. ``None`` on an untested LanceDB, when the package is
    loaded already, or when the module is not where the tested series keeps it.

    A process that imports ``lancedb`` afterwards gets this module inside the package. It is loaded under
    the import system's own lock for its name, which an import of the package by another thread meanwhile
    takes too: that one waits, then finds it (a compiled module initialised twice fails).
    """
    if not is_tested("lancedb") or "lancedb" in sys.modules:
        return None
    name = "lancedb._lancedb"
    module_lock = getattr(importlib._bootstrap, "_ModuleLockManager", None)
    if module_lock is None:
        return None
    with module_lock(name):
        loaded = sys.modules.get(name)
        return loaded if loaded is not None else _load_alone(name)


def _load_alone(name: str) -> ModuleType | None:
    package = importlib.util.find_spec("lancedb")  # finds the package without importing it
    if package is None or not package.submodule_search_locations:
        return None
    for folder in package.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_lancedb" + suffix)
            if os.path.isfile(path):
                spec = importlib.util.spec_from_file_location(name, path)
                if spec is None or spec.loader is None:
                    return None
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                sys.modules[name] = module
                return module
    return None


def lancedb_compiled() -> ModuleType | None:
    """LanceDB's compiled module for opening and describing tables: the package's own once ``lancedb`` is
    imported, else loaded alone (:func:`lancedb_native`); ``None`` on an untested LanceDB (the package's
    public API is used then)."""
    if not is_tested("lancedb"):
        return None
    if "lancedb" in sys.modules:
        import lancedb  # noqa: F401 (another thread may be importing it: wait until it has)

        return sys.modules.get("lancedb._lancedb")
    return lancedb_native()


async def native_connect(native: ModuleType, uri: str, storage_options: dict[str, str]) -> Any:
    """A connection through the compiled module, as ``lancedb.connect_async(uri,
    read_consistency_interval=timedelta(0), storage_options=...)`` makes it (see :func:`native_open_table`
    for the arguments)."""
    return await native.connect(
        uri, None, "us-east-1", None, None, 0.0, None, storage_options or None, None, False, None, None
    )


async def lance_connection(uri: str, storage_options: dict[str, str], *, compiled: bool) -> tuple[Any, bool]:
    """A read connection that sees other programs' writes at once, and whether it is a compiled one: with
    ``compiled`` (a local folder) and the tested LanceDB, through the compiled module alone (milliseconds
    to load, where ``import lancedb`` takes most of a second), else through ``lancedb.connect_async``.
    A compiled connection opens tables with :func:`native_open`, the other with ``open_table``."""
    native = lancedb_compiled() if compiled else None
    if native is not None:
        return await native_connect(native, uri, storage_options), True
    import datetime as dt

    import lancedb

    opening = lancedb.connect_async(
        uri, read_consistency_interval=dt.timedelta(0), storage_options=storage_options or None
    )
    return await opening, False


async def native_open(connection: Any, table: str) -> Any:
    """``table`` of a :func:`native_connect` connection, as ``AsyncConnection.open_table(table)`` opens it."""
    return await connection.open_table(
        table,
        namespace_path=[],
        storage_options=None,
        index_cache_size=None,
        location=None,
        namespace_client=None,
        managed_versioning=None,
    )


def python_table(native_table: Any) -> Any:
    """LanceDB's Python table (``AsyncTable``, its query builders) over a compiled table: the package is
    imported now, if it was not."""
    import lancedb  # noqa: F401 (the package first: a thread importing it meanwhile is waited for, not half seen)
    from lancedb.table import AsyncTable

    return AsyncTable(native_table)


def python_connection(native_connection: Any) -> Any:
    """LanceDB's Python connection (``AsyncConnection``) over a :func:`native_connect` connection."""
    import lancedb  # noqa: F401 (the package first: see python_table)
    from lancedb.db import AsyncConnection

    return AsyncConnection(native_connection)


def index_metric(stats: Any) -> str | None:
    """The metric of a vector index from its statistics: the compiled table's are a dict, the Python
    table's an ``IndexStatistics``."""
    metric = stats.get("distance_type") if isinstance(stats, dict) else getattr(stats, "distance_type", None)
    return str(metric) if metric else None


class CompiledQuery:
    """A query of LanceDB's compiled table built as LanceDB's Python builders (``AsyncQuery``,
    ``AsyncVectorQuery``) build it, without importing the ``lancedb`` package: each method used here calls
    the compiled method of the same name (a list of columns: ``select_columns``), as theirs do. It keeps
    ``_inner`` and ``_with_row_id`` as theirs, so :func:`lancedb_row_id_executor` reads it."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._with_row_id: bool | None = None

    def nearest_to(self, vector: Any) -> CompiledQuery:
        """A vector query for a float32 NumPy vector; the Arrow array is made from its bytes, as
        ``pyarrow.array`` would make it, without that function's look for pandas (which imports it where it
        is installed, to ask whether it was handed a DataFrame)."""
        import numpy as np
        import pyarrow as pa

        values = np.ascontiguousarray(vector, dtype=np.float32)
        array = pa.Array.from_buffers(pa.float32(), len(values), [None, pa.py_buffer(values)])
        return CompiledQuery(self._inner.nearest_to(array))

    def column(self, name: str) -> CompiledQuery:
        self._inner.column(name)
        return self

    def distance_type(self, metric: str) -> CompiledQuery:
        self._inner.distance_type(metric)
        return self

    def bypass_vector_index(self) -> CompiledQuery:
        self._inner.bypass_vector_index()
        return self

    def refine_factor(self, factor: int) -> CompiledQuery:
        self._inner.refine_factor(factor)
        return self

    def ef(self, candidates: int) -> CompiledQuery:
        self._inner.ef(candidates)
        return self

    def where(self, predicate: str) -> CompiledQuery:
        self._inner.where(predicate)
        return self

    def select(self, columns: list[str]) -> CompiledQuery:
        self._inner.select_columns(columns)
        return self

    def limit(self, limit: int) -> CompiledQuery:
        self._inner.limit(limit)
        return self

    def with_row_id(self) -> CompiledQuery:
        self._with_row_id = True
        self._inner.with_row_id()
        return self

    async def explain_plan(self, verbose: bool = False) -> str:
        return str(await self._inner.explain_plan(verbose))


async def native_open_table(native: ModuleType, uri: str, table: str, storage_options: dict[str, str]) -> Any:
    """A table opened through :func:`lancedb_native`'s module, as ``lancedb.connect_async(uri,
    storage_options=...)`` and ``open_table(table)`` open it (its ``count_rows(where)`` and ``checkout``
    are LanceDB's own). The compiled ``connect`` of the tested series takes uri, api_key, region,
    host_override, sql_host_override, read_consistency_interval, client_config, storage_options, session,
    manifest_enabled, namespace_client_properties and oauth_config."""
    connection = await native.connect(
        uri, None, None, None, None, None, None, storage_options or None, None, False, None, None
    )
    return await connection.open_table(
        table,
        namespace_path=[],
        storage_options=None,
        index_cache_size=None,
        location=None,
        namespace_client=None,
        managed_versioning=None,
    )
