"""Health says "ok" only for a database a search can use: a model that cannot load and a table whose every
search fails are named, and ``recall-gui list`` exits 1 naming the active databases agents cannot search."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.cli import main as cli_main
from recall_gui.core.base.errors import RecallError
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.health import DatabaseHealth, check_health
from recall_gui.core.session.session import Session
from tests.core.test_local_models import fastembed_cache_with, packaged_model
from tests.kbtools import KnowledgeBase, cosh_entry, view_entry, write_lance_table, write_registry

#: Registry entries on the 12-passage table (and tables written beside it), named for what they try.
#: Each either searches, or fails every search whatever the query.
CASES: dict[str, dict[str, Any]] = {
    "plain": {},
    "cosine metric": {"metric": "COSINE"},
    "metric LanceDB has but not for floats": {"metric": "hamming"},
    "metric nobody has": {"metric": "manhattan"},
    "content column is the vector": {"content_column": "vector"},
    "id column is the vector": {"id_column": "vector"},
    "vector column holds text": {"vector_column": "content"},
    "half-precision vectors": {"table": "halves"},
    "double-precision vectors": {"table": "doubles"},
    "byte vectors": {"table": "bytes"},
    "empty table": {"table": "empty"},
}


def write_odd_tables(kb: KnowledgeBase) -> None:
    vectors = np.asarray(kb.vectors)
    write_lance_table(kb.db_dir, "halves", kb.ids, kb.contents, vectors.astype(np.float16))
    write_lance_table(kb.db_dir, "doubles", kb.ids, kb.contents, vectors.astype(np.float64))
    write_lance_table(kb.db_dir, "bytes", kb.ids, kb.contents, (vectors * 100).astype(np.int8))
    write_lance_table(kb.db_dir, "empty", (), (), vectors[:0])


def healths(registry_dir: Path) -> dict[str, DatabaseHealth]:
    registry = load_registry(registry_dir)

    async def check() -> dict[str, DatabaseHealth]:
        async with Session() as session:
            found = await asyncio.gather(*(check_health(session, entry) for entry in registry.databases))
        return {health.entry.name: health for health in found}

    return asyncio.run(check())


def search_fails(registry_dir: Path, name: str) -> str | None:
    """The error of a real search of ``name`` (any exception, as the user would meet it), or ``None``."""

    async def go() -> str | None:
        harness = Harness(registry_dir)
        try:
            await harness.run({"db_name": name, "query": "capital of France", "limit": 3})
        except Exception as error:
            return f"{type(error).__name__}: {error}"
        finally:
            await harness.aclose()
        return None

    return asyncio.run(go())


@pytest.mark.slow  # every kind of broken table, each searched and scanned: over 2 s on 2 cores
def test_health_is_ok_exactly_when_a_search_works(kb: KnowledgeBase) -> None:
    write_odd_tables(kb)
    entries = [view_entry(kb, name) | extra for name, extra in CASES.items()]
    write_registry(kb.registry_dir, entries)
    found = healths(kb.registry_dir)
    outcome = {name: (found[name].ok, search_fails(kb.registry_dir, name)) for name in CASES}
    for name, (ok, failure) in outcome.items():
        assert ok == (failure is None), (name, found[name].summary, failure)
    # and the cases do test both sides
    assert {ok for ok, _failure in outcome.values()} == {True, False}
    assert not found["metric LanceDB has but not for floats"].ok
    assert found["metric nobody has"].status("search") == "failed"
    assert 'unknown distance metric "manhattan"' in found["metric nobody has"].summary
    assert found["metric nobody has"].problems[0].hint is not None


def test_a_local_model_neither_cached_nor_downloadable_is_not_ok(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BGE-Small-EN-v1.5 has the table's width; before, health said ok and only a search found out."""
    cache = tmp_path / "fastembed"
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(cache))
    write_registry(
        kb.registry_dir,
        [
            cosh_entry(kb.name, kb.db_dir),
            view_entry(kb, "bge", model="BGESmallENV15"),
        ],
    )
    found = healths(kb.registry_dir)
    assert found[kb.name].ok  # its published weights serve cosh's default without any cache
    bge = found["bge"]
    assert bge.status("model") == "failed" and not bge.ok
    assert bge.problems[0].message == (
        "model unavailable: model BGESmallENV15 (BGE-Small-EN-v1.5 (384d)) is not on this machine (cosh's "
        "file Xenova/bge-small-en-v1.5 onnx/model.onnx was not found in any model cache)"
    )
    assert bge.problems[0].hint and "recall-gui models get BGESmallENV15" in bge.problems[0].hint
    with pytest.raises(RecallError, match="is not on this machine"):
        asyncio.run(_search(kb.registry_dir, "bge"))

    fastembed_cache_with(cache, packaged_model())  # once a copy is in the cache (a stand-in), it is ok
    assert healths(kb.registry_dir)["bge"].ok


def test_a_model_not_here_is_not_ok_even_where_downloads_are_allowed(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.s3server import free_port

    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fastembed"))
    monkeypatch.setenv("RECALL_GUI_DOWNLOAD_MODELS", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    write_registry(kb.registry_dir, [view_entry(kb, "bge", model="BGESmallENV15")])
    bge = healths(kb.registry_dir)["bge"]
    assert bge.status("model") == "failed"  # searching never downloads: what to run is said instead
    assert "BGESmallENV15 (BGE-Small-EN-v1.5 (384d)) is not on this machine" in bge.summary
    assert "recall-gui models get BGESmallENV15" in (bge.problems[0].hint or "")


async def _search(registry_dir: Path, name: str) -> None:
    harness = Harness(registry_dir)
    try:
        await harness.run({"db_name": name, "query": "x"})
    finally:
        await harness.aclose()


def _file(tmp: Path) -> tuple[Path, str]:
    (tmp / "a-file").write_text("x")
    return tmp / "a-file", "is a file, not a folder"


def _loop(tmp: Path) -> tuple[Path, str]:
    (tmp / "loop-a").symlink_to(tmp / "loop-b")
    (tmp / "loop-b").symlink_to(tmp / "loop-a")
    return tmp / "loop-a", "is a symbolic link loop (it leads back to itself)"


def _dangling(tmp: Path) -> tuple[Path, str]:
    (tmp / "dangling").symlink_to(tmp / "gone-away")
    return tmp / "dangling", f"is a symbolic link to {tmp / 'gone-away'}, which does not exist"


def _below_a_file(tmp: Path) -> tuple[Path, str]:
    below = _file(tmp)[0] / "below"
    return below, "does not exist (a part of its path is a file, not a folder)"


@pytest.mark.parametrize(
    "make",
    [
        _file,
        lambda tmp: (Path("/dev/null"), "is a device, not a folder"),
        _loop,
        _dangling,
        lambda tmp: (tmp / "never-made", "does not exist"),
        _below_a_file,
    ],
    ids=["file", "dev-null", "link-loop", "dangling-link", "missing", "below-a-file"],
)
def test_a_database_uri_that_is_no_folder_says_what_it_is(
    make: Callable[[Path], tuple[Path, str]], kb: KnowledgeBase, tmp_path: Path, capsys: Any
) -> None:
    """A file, /dev/null or a link loop used to be reported as a folder that "does not exist"."""
    uri, words = make(tmp_path)
    write_registry(kb.registry_dir, [cosh_entry("odd", uri)])
    health = healths(kb.registry_dir)["odd"]
    assert health.status("path") == "failed"
    assert health.problems[0].message == f"database folder {uri} {words}"
    assert cli_main(["search", "--registry", str(kb.registry_dir), "--db", "odd", "x"]) == 1
    assert (
        f"error: failed to connect to vector db: database folder {uri} {words}\n" in capsys.readouterr().err
    )


# --- recall-gui list ------------------------------------------------------------------------------------


def test_list_exits_1_naming_the_active_databases_agents_cannot_search(
    kb: KnowledgeBase, tmp_path: Path, capsys: Any
) -> None:
    write_registry(
        kb.registry_dir,
        [
            cosh_entry(kb.name, kb.db_dir),
            view_entry(kb, "odd-metric") | {"metric": "manhattan"},
            cosh_entry("gone", tmp_path / "deleted"),
            cosh_entry("old", tmp_path / "deleted-too"),
        ],
        active=[kb.name, "odd-metric", "gone"],
    )
    assert cli_main(["list", "--registry", str(kb.registry_dir)]) == 1
    out, err = capsys.readouterr()
    assert "odd-metric" in out and "FAILED search" in out
    assert "error: 2 active databases cannot be searched by agents: odd-metric (search), gone (path)" in err
    assert "old" not in err  # inactive: listed as failed, but agents never search it

    assert cli_main(["list", "--registry", str(kb.registry_dir), "--json"]) == 1
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["odd-metric"]["health"]["search"] == "failed" and rows["odd-metric"]["failed"] == ["search"]
    assert rows[kb.name]["health"] == dict.fromkeys(
        ("path", "table", "columns", "search", "model", "dimension"), "ok"
    )

    write_registry(
        kb.registry_dir, [cosh_entry(kb.name, kb.db_dir), cosh_entry("old", tmp_path / "x")], [kb.name]
    )
    assert cli_main(["list", "--registry", str(kb.registry_dir)]) == 0  # only an inactive one is broken
    assert "FAILED path" in capsys.readouterr().out


def test_list_labels_a_columns_problem_as_such(kb: KnowledgeBase, capsys: Any) -> None:
    """It used to print "FAILED storage" for a column it could not find."""
    write_registry(kb.registry_dir, [view_entry(kb, "cols") | {"content_column": "body"}])
    assert cli_main(["list", "--registry", str(kb.registry_dir)]) == 1
    out = capsys.readouterr().out
    assert "FAILED columns" in out and "storage" not in out


def test_a_table_whose_history_vanished_while_open_is_a_storage_problem(kb: KnowledgeBase) -> None:
    """The window keeps the table open; another program then removes its versions folder."""
    import shutil

    entry = load_registry(kb.registry_dir).get(kb.name)
    assert entry is not None

    async def check() -> DatabaseHealth:
        async with Session() as session:
            await session.tables.open(entry.target)
            shutil.rmtree(kb.db_dir / f"{kb.name}.lance" / "_versions")
            return await check_health(session, entry)

    health = asyncio.run(check())
    assert [problem.kind for problem in health.problems] == ["storage"]
    assert health.problems[0].message.startswith(f'reading table "{kb.name}" failed: ')
    assert health.info is None and not health.searchable
    assert health.status("table") == "unknown"


def test_a_model_of_another_width_is_a_dimension_mismatch(kb: KnowledgeBase) -> None:
    write_lance_table(kb.db_dir, "narrow", kb.ids, kb.contents, np.asarray(kb.vectors)[:, :8])
    write_registry(kb.registry_dir, [view_entry(kb, "narrow") | {"table": "narrow"}])
    health = healths(kb.registry_dir)["narrow"]
    assert [(problem.kind, problem.message) for problem in health.problems] == [
        ("dimension", "dimension mismatch: All-MiniLM-L6-v2 (384d) gives 384, the table holds 8")
    ]
    assert health.status("dimension") == "failed" and health.status("search") == "ok"


def test_an_opened_folder_whose_width_no_model_gives_says_so(kb: KnowledgeBase) -> None:
    from recall_gui.core.tables.folders import open_table

    write_lance_table(kb.db_dir, "narrow", kb.ids, kb.contents, np.asarray(kb.vectors)[:, :8])

    async def check() -> DatabaseHealth:
        async with Session() as session:
            opened = await open_table(session, str(kb.db_dir), table="narrow")
            return await check_health(session, opened.entry)

    health = asyncio.run(check())
    assert [problem.kind for problem in health.problems] == ["model"]
    assert (
        health.problems[0].message
        == "no model to search with: no local model of 8 dimensions is available here"
    )


def test_an_unexpected_error_of_the_search_check_is_reported_as_a_bug(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_gui.core.search import health as health_module

    async def broken(*_args: Any) -> None:
        raise KeyError("vector")  # a bug of the app's: no table can make one, so it is simulated

    monkeypatch.setattr(health_module, "check_searchable", broken)
    health = healths(kb.registry_dir)[kb.name]
    assert [(problem.kind, problem.message) for problem in health.problems] == [
        ("search", "cannot be searched: a search fails with KeyError: 'vector'")
    ]
    assert health.problems[0].hint == "This is a bug in recall-gui; please report it with the table's schema."
