"""A safetensors file's tensors as NumPy views of a read-only mapping of the file: nothing copied.

onnxruntime takes the float32 model's weights by name and keeps them in a form of its own, so the
mapping's pages are read while the session is made and not after (tests/core/test_mapped_tensors.py);
:meth:`MappedTensors.release_pages` then gives them back to the file. Read into copies,
as the safetensors library reads them, they stayed in memory beside onnxruntime's for as long as the
model was loaded (~87 MB for all-MiniLM-L6-v2).

The layout (huggingface/safetensors, "Format"): an 8-byte little-endian header length, a JSON header
giving each tensor's dtype, shape and byte range within the data, then the data.
"""

from __future__ import annotations

import contextlib
import json
import math
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.regular_files import open_regular

_HEADER_LENGTH = struct.Struct("<Q")
#: The safetensors dtypes read here (those of model weights NumPy holds as stored: not bfloat16).
_DTYPES = {
    name: np.dtype(code)
    for name, code in {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}.items()
}


@dataclass(frozen=True)
class MappedTensors:
    """The mapping of a weights file and its tensors, by name (views into the mapping)."""

    mapping: mmap.mmap
    tensors: dict[str, npt.NDArray[Any]]

    def release_pages(self) -> None:
        """Give the mapping's resident pages back to the file; a later read fetches them again."""
        if hasattr(mmap, "MADV_DONTNEED"):  # not on Windows, which trims a process's pages itself
            self.mapping.madvise(mmap.MADV_DONTNEED)


def map_tensors(path: Path, cap: int) -> MappedTensors:
    """The tensors of the safetensors file at ``path`` (a regular file of at most ``cap`` bytes). Raises
    ``OSError`` for a file that cannot be opened or mapped, ``ValueError`` for one that is not a safetensors
    file (or holds a tensor of a dtype NumPy has not)."""
    mapping: mmap.mmap | None = None
    try:
        with open_regular(path, cap=cap) as handle:
            mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)  # ValueError: an empty file
        return MappedTensors(mapping, _tensors(mapping))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, struct.error) as error:
        if mapping is not None:
            with contextlib.suppress(BufferError):  # views made before the fault still point into it
                mapping.close()
        raise ValueError(f"{path} is not a safetensors file NumPy can read ({error})") from error


def _tensors(mapping: mmap.mmap) -> dict[str, npt.NDArray[Any]]:
    (length,) = _HEADER_LENGTH.unpack_from(mapping, 0)
    data_start = _HEADER_LENGTH.size + length
    if data_start > len(mapping):
        raise ValueError("its header runs past the end of the file")
    header = json.loads(mapping[_HEADER_LENGTH.size : data_start])
    if not isinstance(header, dict):
        raise ValueError("its header is not a JSON object")
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, about in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(about["dtype"])
        if dtype is None:
            raise ValueError(f"{name} is {about['dtype']}")
        shape = tuple(int(size) for size in about["shape"])
        begin, end = (data_start + int(offset) for offset in about["data_offsets"])
        fits = data_start <= begin <= end <= len(mapping)
        if not fits or end - begin != dtype.itemsize * math.prod(shape):
            raise ValueError(f"{name}'s byte range does not hold its shape {list(shape)}")
        view = np.frombuffer(mapping, dtype, count=math.prod(shape), offset=begin).reshape(shape)
        # A mapping starts on a page: a tensor off its item size's boundary in the file is so in memory too.
        tensors[name] = view if begin % dtype.itemsize == 0 else view.copy()
    return tensors
