"""The preload (`core/preload.py`): what the MCP server loads before its first call, and what it never does.

It warms every active local-model database (model loaded, table open, vectors in memory), asks no cloud
provider anything, never raises, and leaves every search answering exactly as without it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.registry.registry_types import EmbedderSpec
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.preloading import preload
from tests.kbtools import KnowledgeBase, cosh_entry, view_entry, write_registry

ARGUMENTS = {"db_name": "notes", "query": "How do I change my password?"}


def preloaded(registry: Path) -> Any:
    """What the preload of a harness on ``registry`` reports."""

    async def go() -> Any:
        harness = Harness(registry)
        try:
            return await preload(harness)
        finally:
            await harness.aclose()

    return asyncio.run(go())


def test_a_preloaded_harness_has_the_model_and_vectors_and_answers_as_a_cold_one(kb: KnowledgeBase) -> None:
    async def go() -> tuple[Any, bool, int, str, str]:
        cold = Harness(kb.registry_dir)
        warm = Harness(kb.registry_dir)
        try:
            report = await preload(warm)
            loaded = warm.session.models.loaded_local(EmbedderSpec("local", "AllMiniLML6V2")) is not None
            vectors_held = len(warm.session.vectors.cached_tables())
            warm_json = await warm.recall_search(ARGUMENTS)
            return report, loaded, vectors_held, warm_json, await cold.recall_search(ARGUMENTS)
        finally:
            await warm.aclose()
            await cold.aclose()

    report, loaded, vectors_held, warm_json, cold_json = asyncio.run(go())
    assert report.warmed == ("notes",) and report.failed == ()
    assert loaded
    assert vectors_held == 1
    assert warm_json == cold_json


def test_a_cloud_database_is_prepared_without_a_single_request(
    kb: KnowledgeBase, fake_provider: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for key, value in fake_provider.environment("openai").items():
        monkeypatch.setenv(key, value)
    entry = cosh_entry("cloud-notes", kb.db_dir) | {
        "embedder": {"Cloud": {"provider": "openai", "model": "text-embedding-3-small"}},
        "table": kb.name,
    }
    registry = write_registry(tmp_path / "registry", [entry])
    report = preloaded(registry)
    assert report.warmed == ("cloud-notes",)
    assert fake_provider.requests == []


def test_failures_are_reported_in_the_preload_not_raised(kb: KnowledgeBase, tmp_path: Path) -> None:
    registry = write_registry(
        tmp_path / "registry",
        [
            cosh_entry("gone", tmp_path / "nowhere"),
            view_entry(kb, "uncached", model="BGESmallENV15"),
            view_entry(kb, "notes"),
        ],
    )
    report = preloaded(registry)
    assert report.warmed == ("notes",)
    assert [name for name, _ in report.failed] == ["gone", "uncached"]
    assert "does not exist" in dict(report.failed)["gone"]


def test_a_search_library_that_cannot_be_imported_is_reported_and_nothing_is_warmed(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # a broken install: its import fails
    report = preloaded(kb.registry_dir)
    assert report.warmed == ()
    assert len(report.failed) == 1
    what, why = report.failed[0]
    assert what == "(libraries)"
    assert why.startswith("ModuleNotFoundError:") and "tokenizers" in why
