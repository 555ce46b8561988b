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
    for name, tensor in expected.items():
        assert mapped.tensors[name].dtype == tensor.dtype
        assert np.array_equal(mapped.tensors[name], tensor), name


def safetensors_bytes(header: dict[str, object], data: bytes) -> bytes:
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + data


def test_a_tensor_off_a_four_byte_boundary_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    header = {"x": {"dtype": "F32", "shape": [2], "data_offsets": [1, 9]}, "__metadata__": {"format": "np"}}
    path.write_bytes(safetensors_bytes(header, b"\0" + struct.pack("<2f", 1.5, -2.25)))
    assert map_tensors(path, 1000).tensors["x"].tolist() == [1.5, -2.25]


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
        (b"", "empty file"),
    ],
    ids=["no header", "bfloat16", "too short for its shape", "past the end", "not JSON", "empty"],
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
