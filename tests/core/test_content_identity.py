"""An entry's content sha256 against published digests and hashlib over the UTF-8 text (a whole column's,
computed by LanceDB: tests/core/test_review.py)."""

from __future__ import annotations

import pytest

from recall_gui.core.storage.content_identity import content_sha256, entry_label, is_sha_prefix
from tests.reviewtools import sha

#: SHA-256 test vectors (FIPS 180-2): the empty text and "abc".
EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_a_content_sha256_is_the_published_digest_in_lowercase_hex() -> None:
    assert content_sha256("") == EMPTY
    assert content_sha256("abc") == ABC
    assert content_sha256("Grüße, 🚀 ش") == sha("Grüße, 🚀 ش")


def test_the_short_form_is_the_id_and_eight_hex_digits() -> None:
    assert entry_label("content", ABC) == "content·ba7816bf"


@pytest.mark.parametrize(
    "text,valid", [("ba7816bf", True), (ABC, True), ("BA78", False), ("", False), ("xyz", False)]
)
def test_a_sha_prefix_is_lowercase_hex(text: str, valid: bool) -> None:
    assert is_sha_prefix(text) is valid
