"""Where the app relies on other libraries' internals (``recall_gui.core.base.compat``): on the versions it
was
tested with, each internal is still there and used; on any other version the public way is taken and the
answers stay the same. A library upgrade fails the first test here loudly, before it can make a search
slower unnoticed, and never makes one wrong."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from recall_gui.core.base import compat
from recall_gui.core.session.session import Session
from recall_gui.core.storage.lance_calls import read_query
from recall_gui.core.storage.target import TableTarget
from tests.headless_requirements import QT
from tests.kbtools import KnowledgeBase


@pytest.mark.parametrize("package", sorted(set(compat.TESTED) - set(QT)))
def test_the_installed_libraries_are_the_versions_the_internals_were_checked_against(package: str) -> None:
    """The core's libraries (the window's are checked in tests/qt/test_window_libraries.py: `make test-core`
    runs without them)."""
    assert_tested(package)


def assert_tested(package: str) -> None:
    from importlib import metadata

    assert compat.is_tested(package), (
        f"{package} {metadata.version(package)} is not in compat.TESTED: check the internals "
        "recall_gui/core/base/compat.py relies on against it (for the window's libraries: run the window's "
        "tests, e.g. with `make test-latest`), then add its series and move its cap in pyproject"
    )


def test_the_direct_query_embedding_was_checked_against_the_installed_fastembed() -> None:
    """``embedders/direct.py`` reproduces what fastembed does: a new fastembed (or onnxruntime, or
    tokenizers: see above) must be checked with tests/core/test_direct_embedding.py before it is listed."""
    from importlib import metadata

    assert compat.direct_embedding_checked(), (
        f"fastembed {metadata.version('fastembed')} is not in compat.DIRECT_EMBEDDING_FASTEMBED: compare "
        "recall_gui/core/embedders/direct.py with its loading, tokenizing, pooling and normalising, run "
        "tests/core/test_direct_embedding.py, then add its series"
    )


def rows_read(kb: KnowledgeBase, vector: Any) -> tuple[Any, list[Any]]:
    """The fast path's executor for a row-id query, and the rows ``read_query`` returns for it."""

    async def go() -> tuple[Any, list[Any]]:
        async with Session() as session:
            opened = await session.tables.open(TableTarget(str(kb.db_dir), kb.name))
            query = opened.table.query().nearest_to(vector).bypass_vector_index().limit(3).with_row_id()
            rows = await read_query(query, "searching")
            return compat.lancedb_row_id_executor(query), rows.column("id").to_pylist()

    return asyncio.run(go())


def test_lancedb_queries_take_the_short_way_when_tested_and_the_public_one_otherwise(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    executor, fast = rows_read(kb, kb.vectors[0])
    assert executor is not None  # the internal is there and used
    monkeypatch.setattr(compat, "is_tested", lambda package: False)
    executor, public = rows_read(kb, kb.vectors[0])
    assert executor is None
    assert fast == public and fast[0] == kb.ids[0]


def test_local_models_run_without_spinning_threads_when_tested_and_still_load_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recall_gui.core.embedders.local import load_offline_fastembed

    def spinning(model: Any) -> str | None:
        options = model._model.model.model.get_session_options()  # fastembed -> its ONNX model -> session
        try:
            return str(options.get_session_config_entry("session.intra_op.allow_spinning"))
        except RuntimeError:  # not set: onnxruntime's default, spinning
            return None

    tested = load_offline_fastembed()
    assert spinning(tested) == "0"
    monkeypatch.setattr(compat, "is_tested", lambda package: False)
    untested = load_offline_fastembed()
    assert spinning(untested) is None
    text = "the capital of France"
    assert (tested.embed_sync(text) == untested.embed_sync(text)).all()


def _python(code: str, *args: str) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", code, *args], check=True, capture_output=True, text=True, timeout=300
    )
    return done.stdout.strip()


@pytest.mark.process
def test_lancedb_imports_without_its_rest_client_which_loads_when_asked_for(kb: KnowledgeBase) -> None:
    """The deferral happens (a LanceDB that imports the client's API another way fails this loudly), a
    search finds the same rows, and whatever asks for the client later gets all of it."""
    code = """
import asyncio, sys
from recall_gui.core.base import compat
if sys.argv[-1] != "defer":
    import lancedb  # before the app asks for the deferral, which then does nothing
deferred = compat.defer_lance_rest_client()
from recall_gui.core.search.harness import Harness
async def go():
    harness = Harness(sys.argv[-3])
    try:
        return await harness.recall_search({"db_name": sys.argv[-2], "query": "reset my password"})
    finally:
        await harness.aclose()
found = asyncio.run(go())
unloaded = not [m for m in sys.modules if m.startswith("lance_namespace_urllib3_client.api")]
import lance_namespace_urllib3_client as client
print(repr((deferred, unloaded, found, client.ApiClient.__name__, client.Configuration.__name__)))
"""
    arguments = (str(kb.registry_dir), kb.name)
    deferred = eval(_python(code, *arguments, "defer"))
    assert deferred[:2] == (True, True)
    assert deferred[3:] == ("ApiClient", "Configuration")
    plain = eval(_python(code, *arguments, "plain"))
    assert plain[:2] == (False, False)
    assert deferred[2] == plain[2]
    assert json.loads(deferred[2])["results"][0]["id"] == kb.ids[0]


@pytest.mark.process
def test_the_deferral_waits_for_lancedb_s_first_import_and_reads_no_versions_before() -> None:
    """The entry points' set-up costs a process that never loads LanceDB nothing: the versions are read
    (``importlib.metadata``) only when LanceDB is first imported, and the client is deferred then."""
    code = """
import sys
from recall_gui.runtime import configure_process
configure_process()
before = "importlib.metadata" in sys.modules
import lancedb
unloaded = not [m for m in sys.modules if m.startswith("lance_namespace_urllib3_client.api")]
import lance_namespace_urllib3_client as client
print(repr((before, unloaded, "importlib.metadata" in sys.modules, client.ApiClient.__name__)))
"""
    assert eval(_python(code)) == (False, True, True, "ApiClient")


@pytest.mark.process
def test_lance_namespaces_still_work_with_the_client_deferred(tmp_path: Any) -> None:
    """LanceDB's namespace API (which uses the client's models) answers as without the deferral."""
    code = f"""
from recall_gui.core.base import compat
import sys
deferred = compat.defer_lance_rest_client() if sys.argv[-1] == "defer" else False
import lancedb, pyarrow as pa
db = lancedb.connect({str(tmp_path / "ns")!r})
db.create_table("t", pa.table({{"x": [1, 2, 3]}}), mode="overwrite")
namespace = lancedb.connect_namespace("dir", {{"root": {str(tmp_path / "ns")!r}}})
print(repr((deferred, list(namespace.list_tables().tables), namespace.open_table("t").count_rows())))
"""
    import subprocess
    import sys

    def run(mode: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-c", code, mode], check=True, capture_output=True, text=True, timeout=300
        )
        return eval(done.stdout.strip())

    deferred = run("defer")
    assert deferred[0] is True
    assert deferred[1:] == run("plain")[1:] == (["t"], 3)


@pytest.mark.process
def test_the_rest_client_is_imported_as_usual_on_an_untested_lancedb() -> None:
    code = """
from recall_gui.core.base import compat
compat.is_tested = lambda package: False
print(compat.defer_lance_rest_client())
import lancedb, sys
print("lance_namespace_urllib3_client.api" in sys.modules)
"""
    assert _python(code).split() == ["False", "True"]


@pytest.mark.process
def test_the_filter_worker_counts_with_lancedbs_compiled_module_alone_as_lancedb_counts(
    kb: KnowledgeBase,
) -> None:
    """The worker that first counts a user's filter loads LanceDB's compiled module, not the package (a
    fraction of a second instead of most of one); its counts and refusals are LanceDB's own."""
    import lancedb

    code = """
import asyncio, json, sys
from recall_gui.core.base import compat
native = compat.lancedb_native()
async def go():
    table = await compat.native_open_table(native, sys.argv[-2], sys.argv[-1], {})
    await table.checkout(1)
    counts = [await table.count_rows(where) for where in ("id = 'paris'", "content LIKE '%the%'", None)]
    try:
        await table.count_rows("nope = 1")
    except Exception as error:
        counts.append(str(error))
    return counts
counts = asyncio.run(go())
heavy = ("lancedb", "pyarrow", "pandas")
print(json.dumps([counts, sorted(m for m in sys.modules if m.split(".")[0] in heavy)]))
"""
    counts, loaded = json.loads(_python(code, str(kb.db_dir), kb.name))
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    expected = [table.count_rows("id = 'paris'"), table.count_rows("content LIKE '%the%'"), len(kb.ids)]
    assert counts[:3] == expected == [1, sum("the" in text for text in kb.contents), 12]
    with pytest.raises(Exception) as refused:
        table.count_rows("nope = 1")
    assert counts[3] == str(refused.value)
    assert loaded == ["lancedb._lancedb"]


@pytest.mark.process
def test_the_filter_worker_imports_lancedb_on_an_untested_lancedb() -> None:
    code = """
from recall_gui.core.base import compat
compat.is_tested = lambda package: False
print(compat.lancedb_native())
"""
    assert _python(code) == "None"


def test_a_local_table_read_through_lancedbs_package_answers_as_through_its_compiled_module(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an untested LanceDB the table cache opens local tables with ``lancedb.connect_async``, as before
    it opened them through the compiled module: the same description, health and agent's answer."""
    from recall_gui.core.search import check_health
    from recall_gui.core.search.harness import Harness
    from recall_gui.core.tables import describe_table

    async def read() -> tuple[Any, ...]:
        harness = Harness(kb.registry_dir)
        try:
            session, entry = harness.session, harness.registry.get(kb.name)
            assert entry is not None
            info = await describe_table(session, entry.target)
            health = await check_health(session, entry)
            found = await harness.recall_search({"db_name": kb.name, "query": "capital of France"})
            opened = await session.tables.open(entry.target)
            return info, health.problems, found, opened.compiled
        finally:
            await harness.aclose()

    *compiled, through_compiled = asyncio.run(read())
    monkeypatch.setattr(compat, "lancedb_compiled", lambda: None)
    *public, through_compiled_after = asyncio.run(read())
    assert (through_compiled, through_compiled_after) == (True, False)
    assert public == compiled
    assert json.loads(compiled[2])["results"][0]["id"] == "paris"
