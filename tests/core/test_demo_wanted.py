"""When the window builds the demo at start-up: the app's own, empty registry only."""

from __future__ import annotations

from pathlib import Path

from recall_gui.core.base.paths import RegistryLocation
from recall_gui.core.demo import demo_wanted
from recall_gui.core.registry.registry import load_registry
from tests.kbtools import KnowledgeBase


def test_an_empty_app_registry_wants_the_demo(tmp_path: Path) -> None:
    assert demo_wanted(RegistryLocation(tmp_path, "app"), load_registry(tmp_path))


def test_a_registry_with_a_database_does_not(kb: KnowledgeBase) -> None:
    assert not demo_wanted(RegistryLocation(kb.registry_dir, "app"), load_registry(kb.registry_dir))


def test_a_chosen_or_cosh_registry_never_does(tmp_path: Path) -> None:
    for source in ("cosh", "--registry", "RECALL_REGISTRY_DIR"):
        assert not demo_wanted(RegistryLocation(tmp_path, source), load_registry(tmp_path))


def test_a_registry_that_failed_to_parse_is_reported_not_replaced_by_the_demo(tmp_path: Path) -> None:
    (tmp_path / "rag_dbs.json").write_text("{ not json", encoding="utf-8")
    assert not demo_wanted(RegistryLocation(tmp_path, "app"), load_registry(tmp_path))
