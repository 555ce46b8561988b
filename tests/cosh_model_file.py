"""A copy of the file cosh runs for AllMiniLML6V2 (``Qdrant/all-MiniLM-L6-v2-onnx``: ``model.onnx`` and its
tokenizer files), made here from the published weights, since the hub cannot be reached from the tests.

The ONNX file is the encoder's graph with the float32 weights inside, as an ONNX export holds them; the
tokenizer files are the model's own (``model_max_length`` 512, as in the repository cosh downloads). It is
used where a test needs cosh's file in a cache or on a model hub.
"""

from __future__ import annotations

import shutil
from pathlib import Path

COSH_REPO = "Qdrant/all-MiniLM-L6-v2-onnx"
ROOT = Path(__file__).resolve().parents[1]


def write_cosh_files(folder: Path) -> dict[str, Path]:
    """``model.onnx`` and the tokenizer files in ``folder``; returns {name in the repo: file}."""
    import onnx
    from onnx import numpy_helper
    from safetensors.numpy import load_file

    from tests.minilm_reference import weights_folder

    folder.mkdir(parents=True, exist_ok=True)
    weights = weights_folder()
    tensors = load_file(str(weights / "model.safetensors"))
    model = onnx.load_from_string((ROOT / "recall_gui/core/embedders/minilm_graph.onnx").read_bytes())
    kept = []
    for initializer in model.graph.initializer:
        if initializer.data_location == onnx.TensorProto.EXTERNAL:
            kept.append(numpy_helper.from_array(tensors[initializer.name], initializer.name))
        else:
            kept.append(initializer)
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    onnx.save_model(model, str(folder / "model.onnx"))
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json"):
        shutil.copyfile(weights / name, folder / name)
    return {path.name: path for path in sorted(folder.iterdir())}


def hf_cache_with(
    root: Path, files: dict[str, Path], repo: str = COSH_REPO, revision: str = "abc123"
) -> Path:
    """``files`` as a snapshot of ``repo`` in a Hugging Face cache layout under ``root`` (fastembed-rs's and
    Python fastembed's layout); returns the snapshot folder."""
    repo_folder = root / ("models--" + repo.replace("/", "--"))
    snapshot = repo_folder / "snapshots" / revision
    snapshot.mkdir(parents=True, exist_ok=True)
    for name, path in files.items():
        shutil.copyfile(path, snapshot / name)
    (repo_folder / "refs").mkdir(exist_ok=True)
    (repo_folder / "refs" / "main").write_text(revision, encoding="utf-8")
    return snapshot
