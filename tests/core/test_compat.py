"""Where the app relies on other libraries' internals (``recall_gui.core.compat``): on the versions it was
tested with, each internal is still there and used; on any other version the public way is taken and the
answers stay the same. A library upgrade fails the first test here loudly, before it can make a search
slower unnoticed, and never makes one wrong."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from recall_gui.core import compat
from recall_gui.core.session import Session
from recall_gui.core.tables import read_query
from recall_gui.core.target import TableTarget
from tests.kbtools import KnowledgeBase


@pytest.mark.parametrize("package", sorted(compat.TESTED))
def test_the_installed_libraries_are_the_versions_the_internals_were_checked_against(package: str) -> None:
    from importlib import metadata

    assert compat.is_tested(package), (
        f"{package} {metadata.version(package)} is not in compat.TESTED: check the internals "
        "recall_gui/core/compat.py relies on against it, then add its series"
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
    from recall_gui.core.embedders import load_offline_model

    def spinning(model: Any) -> str | None:
        options = model._model.model.model.get_session_options()  # fastembed -> its ONNX model -> session
        try:
            return str(options.get_session_config_entry("session.intra_op.allow_spinning"))
        except RuntimeError:  # not set: onnxruntime's default, spinning
            return None

    tested = load_offline_model()
    assert spinning(tested) == "0"
    monkeypatch.setattr(compat, "is_tested", lambda package: False)
    untested = load_offline_model()
    assert spinning(untested) is None
    text = "the capital of France"
    assert (tested.embed_sync(text) == untested.embed_sync(text)).all()
