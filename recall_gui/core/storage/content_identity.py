"""An entry told apart by its content: the sha256 of its text, which survives a new version and
re-indexing, and tells apart rows that share an id (cosh's own tables give every row the id "content").

The text is the content column's value as the app shows it (a missing one is the empty text), encoded as
UTF-8; the digest is written as 64 lowercase hex digits, and shown short as the id and the first eight
(``content·3f2a9c1e``).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

#: Hex digits of the short form.
SHORT_HEX = 8
#: Between an id and the short digest of its content.
SEPARATOR = "·"
DIGEST_BYTES = 32
_HEX = re.compile(r"[0-9a-f]{1,64}")


def content_sha256(text: str) -> str:
    """The sha256 of ``text`` encoded as UTF-8, in lowercase hex (a lone surrogate, which no table can
    hold, is encoded as it stands rather than refused)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def short_sha(sha: str) -> str:
    """The first eight hex digits of a content's sha256."""
    return sha[:SHORT_HEX]


def entry_label(entry_id: str, sha: str) -> str:
    """An entry as it is shown where ids repeat: ``content·3f2a9c1e``."""
    return f"{entry_id}{SEPARATOR}{short_sha(sha)}"


def is_sha_prefix(text: str) -> bool:
    """Whether ``text`` is 1 to 64 lowercase hex digits (a content's sha256, or the start of one)."""
    return _HEX.fullmatch(text) is not None


def sha256_column(values: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.uint8]:
    """The sha256 of every text of a string column, one row of 32 bytes each (a missing text digests as
    the empty one). Arrow holds the texts as UTF-8 already: each is hashed where it lies, without making
    a Python string of it."""
    import numpy as np
    import pyarrow as pa

    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    digests = np.empty((sum(len(chunk) for chunk in chunks), DIGEST_BYTES), np.uint8)
    start = 0
    for chunk in chunks:
        digests[start : start + len(chunk)] = _chunk_digests(chunk)
        start += len(chunk)
    return digests


def _chunk_digests(chunk: pa.Array) -> npt.NDArray[np.uint8]:
    import numpy as np
    import pyarrow as pa

    if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)):
        chunk = chunk.cast(pa.string())
    rows = len(chunk)
    buffers = chunk.buffers()
    out = b""
    if rows:
        width = 8 if pa.types.is_large_string(chunk.type) else 4
        kind = np.int64 if width == 8 else np.int32
        offsets = np.frombuffer(buffers[1], kind, rows + 1, chunk.offset * width).tolist()
        data = memoryview(buffers[2]) if buffers[2] is not None else memoryview(b"")
        sha = hashlib.sha256
        out = b"".join([sha(data[start:end]).digest() for start, end in itertools.pairwise(offsets)])
    digests = np.frombuffer(out, np.uint8).reshape(rows, DIGEST_BYTES)
    if chunk.null_count:  # a null may still span bytes of the data: it is the empty text
        digests = digests.copy()
        digests[chunk.is_null().to_numpy(zero_copy_only=False)] = np.frombuffer(_EMPTY, np.uint8)
    return digests


_EMPTY = hashlib.sha256(b"").digest()
