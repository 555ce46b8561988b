"""The float32 weights read as views of a mapping of their file: the tensors the safetensors library reads,
and a file that is not one refused, naming it."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from recall_gui.core.embedders.mapped_tensors import map_tensors
from recall_gui.core.embedders.published_weights import WEIGHTS_SIZE, package_weights


def test_the_published_weights_map_to_the_tensors_safetensors_reads() -> None:
    from safetensors.numpy import load_file

    path = package_weights()
    assert path is not None
    expected = load_file(str(path))
    mapped = map_tensors(path, WEIGHTS_SIZE)
    assert sorted(mapped.tensors) == sorted(expected)
    mapped.release_pages()  # read again from the file
    assert not any(tensor.flags.owndata for tensor in mapped.tensors.values())  # views, nothing copied
    for name, tensor in expected.items():
        assert mapped.tensors[name].dtype == tensor.dtype
        assert np.array_equal(mapped.tensors[name], tensor), name


def safetensors_bytes(header: dict[str, object], data: bytes) -> bytes:
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + data


def test_a_tensor_off_a_four_byte_boundary_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    for pad in range(4):  # a header of the length that puts the tensor's first byte off a 4-byte boundary
        tensor = {"dtype": "F32", "shape": [2], "data_offsets": [1, 9]}
        header = {"x": tensor, "__metadata__": {"p": "x" * pad}}
        if (8 + len(json.dumps(header)) + 1) % 4:
            break
    path.write_bytes(safetensors_bytes(header, b"\0" + struct.pack("<2f", 1.5, -2.25)))
    tensor = map_tensors(path, 1000).tensors["x"]
    assert tensor.tolist() == [1.5, -2.25]
    assert tensor.flags.owndata  # copied out of the mapping


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"not a weights file at all", "header runs past the end"),
        (
            safetensors_bytes({"x": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}, bytes(4)),
            "x is BF16",
        ),
        (
            safetensors_bytes({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, bytes(8)),
            "x's byte range does not hold its shape [3]",
        ),
        (
            safetensors_bytes({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, bytes(8)),
            "x's byte range does not hold its shape [4]",
        ),
        (struct.pack("<Q", 2) + b"{]", "Expecting property name"),
        (struct.pack("<Q", 2) + b"[]", "its header is not a JSON object"),
        (b"", "empty file"),
    ],
    ids=["no header", "bfloat16", "too short for its shape", "past the end", "not JSON", "a list", "empty"],
)
def test_a_file_that_is_not_safetensors_numpy_reads_is_refused_naming_it(
    tmp_path: Path, content: bytes, why: str
) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="is not a safetensors file NumPy can read") as refused:
        map_tensors(path, 1000)
    assert str(path) in str(refused.value) and why in str(refused.value)


def test_a_file_over_the_cap_or_not_a_regular_file_is_refused_unread(tmp_path: Path) -> None:
    large = tmp_path / "large.safetensors"
    large.write_bytes(bytes(2000))
    with pytest.raises(OSError, match="larger than"):
        map_tensors(large, 1000)
    with pytest.raises(OSError, match="folder"):
        map_tensors(tmp_path, 1000)


def resident_kb_of(path: Path) -> int:
    """How much of the file at ``path`` this process's mappings hold in memory, in kB."""
    import psutil

    return sum(mapped.rss for mapped in psutil.Process().memory_maps() if mapped.path == str(path)) // 1024


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="mappings' sizes: Linux's smaps")
def test_the_float32_model_holds_none_of_its_file_once_made_not_even_after_embedding() -> None:
    """onnxruntime keeps the weights in a form of its own: the mapping's pages, given back once the
    session is made, are never read again (so a file changed afterwards cannot change the vectors)."""
    from recall_gui.core.embedders.published_weights import load_weights_model

    path = package_weights()
    assert path is not None
    model = load_weights_model(path, threads=1)
    texts = ["capital of France", "word " * 600, "🚀 ش emoji", ""]
    vectors = [next(iter(model.embed([text]))) for text in texts] + list(model.embed(texts))
    assert len(vectors) == 8
    assert resident_kb_of(path) == 0
