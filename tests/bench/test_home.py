"""`python -m bench` runs in folders of its own: every place the app keeps or reads things is inside the
run's home, never the user's, and the user's settings are back as they were afterwards."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.home import FOLDERS, own_folders
from recall_gui.core.base import paths


def test_every_folder_the_app_uses_is_inside_the_runs_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user"
    for name in FOLDERS:
        monkeypatch.setenv(name, str(user / name.lower()))
    root = tmp_path / "home"
    (root / "cache").mkdir(parents=True)
    (root / "cache" / "map-from-last-run").write_text("stale", encoding="utf-8")
    with own_folders(root):
        places = [
            paths.app_cache_dir(),
            paths.app_data_dir(),
            paths.app_config_dir(),
            paths.app_models_dir(),
            paths.agent_log_dir(),
            paths.cosh_registry_dir(),
            paths.resolve_registry_dir().directory,
            paths.resolve_registry_dir(for_demo=True).directory,
            Path(os.environ["HF_HUB_CACHE"]),
            Path(os.environ["FASTEMBED_CACHE_PATH"]),
        ]
        assert all(place.is_relative_to(root) for place in places), places
        assert not any(place.is_relative_to(user) for place in places)
        assert not (root / "cache" / "map-from-last-run").exists()  # each run starts empty
    assert {name: os.environ[name] for name in FOLDERS} == {
        name: str(user / name.lower()) for name in FOLDERS
    }
    assert not root.exists()


def test_a_setting_the_user_did_not_have_is_gone_again_afterwards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RECALL_REGISTRY_DIR", raising=False)
    with own_folders(tmp_path / "home"):
        assert os.environ["RECALL_REGISTRY_DIR"] == str(tmp_path / "home" / "registry")
    assert "RECALL_REGISTRY_DIR" not in os.environ
