"""An entry's content sha256: one text, and a whole column hashed where Arrow holds it, against hashlib
over the UTF-8 text (and published digests)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from recall_gui.core.storage.content_identity import (
    content_sha256,
    entry_label,
    is_sha_prefix,
    sha256_column,
)
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


def test_a_column_is_hashed_text_by_text_nulls_as_the_empty_text() -> None:
    texts = ["abc", None, "Grüße 🚀", "", "x" * 5000]
    sliced = pa.array(["skip me", *texts]).slice(1)  # an offset into the buffers
    chunked = pa.chunked_array([sliced, pa.array(["tail"])])
    found = [bytes(row).hex() for row in sha256_column(chunked)]
    assert found == [sha(text or "") for text in [*texts, "tail"]]
    assert found[1] == EMPTY and found[0] == ABC


def test_a_large_string_column_and_an_empty_one() -> None:
    large = pa.array(["abc", "de"], pa.large_string())
    assert [bytes(row).hex() for row in sha256_column(large)] == [ABC, sha("de")]
    assert sha256_column(pa.array([], pa.string())).shape == (0, 32)
