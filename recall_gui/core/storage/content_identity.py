"""An entry told apart by its content: the sha256 of its text, which survives a new version and
re-indexing, and tells apart rows that share an id (cosh's own tables give every row the id "content").

The text is the content column's value as the app shows it (a missing one is the empty text), encoded as
UTF-8; the digest is written as 64 lowercase hex digits, and shown short as the id and the first eight
(``content·3f2a9c1e``). A whole column's digests are best asked of LanceDB, which computes them as it
reads (``select({"digest": "sha256(content)"})``, DataFusion's ``sha256``: the same digest, see
:mod:`recall_gui.core.review.snapshot`).
"""

from __future__ import annotations

import hashlib
import re

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
