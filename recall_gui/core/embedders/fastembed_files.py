"""Python fastembed's side of local models: which file it runs for a model id, and how it is told to run
cosh's file instead (a custom model, loaded from the folder the file was found in, never downloaded).

Importing this module imports fastembed (about a second): only the loaders and ``recall-gui models`` do.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

from recall_gui.core.base.compat import fastembed_model_descriptions
from recall_gui.core.base.errors import ModelUnavailableError
from recall_gui.core.embedders.cosh_files import CoshFile
from recall_gui.core.embedders.direct import folder_truncation_limit

_register_lock = threading.Lock()


def fastembed_file(fastembed_id: str) -> tuple[str, str] | None:
    """The Hugging Face repository and file Python fastembed runs for ``fastembed_id``."""
    for description in fastembed_model_descriptions():
        if description.model.lower() == fastembed_id.lower() and description.sources.hf:
            return str(description.sources.hf), str(description.model_file)
    return None


def legacy_model_file(fastembed_id: str, cache: Path, file: str) -> Path | None:
    """The model file in a folder of fastembed's older layout (an unpacked archive named after the model)."""
    name = fastembed_id.rsplit("/", maxsplit=1)[-1]
    for folder in (cache / name, cache / f"fast-{name}"):
        path = folder / file
        with contextlib.suppress(OSError):
            if path.is_file() and path.stat().st_size > 0:
                return path
    return None


def cosh_model_id(cosh_name: str) -> str:
    """The name cosh's file for ``cosh_name`` is registered under in fastembed."""
    return f"recall-gui/cosh-{cosh_name}"


def register_cosh_model(cosh_name: str, wanted: CoshFile, dim: int) -> str:
    """Tell fastembed to run ``wanted`` for ``cosh_name`` as fastembed-rs does (its pooling, normalised);
    once per process (registering twice raises). Returns the id to load it by."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    model_id = cosh_model_id(cosh_name)
    with _register_lock:  # fastembed's list of models belongs to the process
        if model_id.lower() in {m.model.lower() for m in fastembed_model_descriptions()}:
            return model_id
        TextEmbedding.add_custom_model(
            model=model_id,
            pooling=PoolingType.MEAN if wanted.pooling == "mean" else PoolingType.CLS,
            normalization=True,
            sources=ModelSource(hf=wanted.repo),
            dim=dim,
            model_file=wanted.file,
            additional_files=list(wanted.additional),
            description=f"cosh's {cosh_name}: {wanted.describe()}",
        )
    return model_id


def load_fastembed(model_id: str, folder: Path, **kwargs: Any) -> Any:
    """fastembed's model ``model_id`` from the files in ``folder`` (no download), cutting texts where cosh's
    fastembed-rs does (``direct.truncation_limit``): Python fastembed has no limit of its own, so a model
    whose ``tokenizer_config.json`` allows more than 512 tokens would read further than cosh's.

    Raises :class:`ModelUnavailableError` where fastembed would cut elsewhere and cannot be told not to.
    """
    from recall_gui.core.base.compat import fastembed_tokenizer, onnxruntime_sessions_without_spinning

    quiet_fastembed()
    from fastembed import TextEmbedding

    with onnxruntime_sessions_without_spinning():
        embedding = TextEmbedding(model_id, specific_model_path=str(folder), local_files_only=True, **kwargs)
    limit = folder_truncation_limit(folder)
    tokenizer = fastembed_tokenizer(embedding)
    if tokenizer is not None:
        direction = (tokenizer.truncation or {}).get("direction", "right")
        tokenizer.enable_truncation(max_length=limit, direction=direction)
    elif _fastembed_limit(folder) != limit:
        raise ModelUnavailableError(
            f"this fastembed cannot be told to cut texts at {limit} tokens as cosh does",
            hint="Install a fastembed of the series recall-gui was tested with (see pyproject.toml).",
        )
    return embedding


def _fastembed_limit(folder: Path) -> int | None:
    """Where Python fastembed cuts on its own: the smaller of the config's two limits."""
    try:
        from fastembed.common.preprocessor_utils import load_tokenizer

        tokenizer, _ = load_tokenizer(folder)
    except Exception:  # moved in another fastembed, or the folder is not what it reads
        return None
    limit = (tokenizer.truncation or {}).get("max_length")
    return limit if isinstance(limit, int) else None


def quiet_fastembed() -> None:
    """fastembed logs an ERROR line for every cache miss; those are expected here and reported better."""
    try:
        from loguru import logger
    except ImportError:
        return
    logger.disable("fastembed")
