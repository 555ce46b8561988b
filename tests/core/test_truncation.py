"""Texts are cut where cosh cuts them: fastembed-rs (what cosh runs) truncates at the smaller of its
``max_length`` (512 unless set; cosh sets none) and the model's ``model_max_length`` — for
all-MiniLM-L6-v2, 512 tokens.

The app's float32 model reproduces fastembed-rs's own test of that model at ``max_length`` 384, and at the
default limit it gives the independent float32 reference's vectors for texts longer than 256 and than 512
tokens (``tests/minilm_reference.py``, which shares no code with the app)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.embedders.direct import FASTEMBED_MAX_LENGTH, truncation_limit
from recall_gui.core.embedders.model_choice import load_local_model
from recall_gui.core.embedders.published_weights import load_weights_model, package_weights
from tests.minilm_reference import ReferenceMiniLM

SAMPLE_TEXT = Path(__file__).parents[1] / "assets" / "fastembed_rs_sample_text.txt"
#: The first ten components of all-MiniLM-L6-v2's vector of the sample text at ``with_max_length(384)``, as
#: fastembed-rs's ``test_allminilml6v2_match_python_counterpart`` gives them (tests/text-embeddings.rs,
#: https://github.com/Anush008/fastembed-rs, commit 320f88f244e316887b730cb16241938fe293c4ea; Apache-2.0).
#: fastembed-rs asserts its own vector within 1e-6 of these.
FASTEMBED_RS_384 = (
    3.510_517_6e-2,
    1.046_043e-2,
    3.767_998_5e-2,
    7.073_633_4e-2,
    9.097_775e-2,
    -2.507_714_7e-2,
    -2.214_382e-2,
    -1.016_435_9e-2,
    4.660_127_3e-2,
    7.431_366e-2,
)
TOLERANCE = 1e-6


def sample_text() -> str:
    return SAMPLE_TEXT.read_text(encoding="utf-8")


def token_count(text: str) -> int:
    """The tokens of ``text``, none cut (the model's own tokenizer)."""
    from tokenizers import Tokenizer

    from tests.minilm_reference import weights_folder

    tokenizer = Tokenizer.from_file(str(weights_folder() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return len(tokenizer.encode(text).ids)


def long_text(more_than: int, fewer_than: int) -> str:
    """The first of Python's help topics with more than ``more_than`` and fewer than ``fewer_than`` tokens."""
    import pydoc_data.topics

    for _, topic in sorted(pydoc_data.topics.topics.items()):
        if more_than + 20 < token_count(topic) < fewer_than:
            return topic
    raise AssertionError("no help topic of that length")


@pytest.fixture(scope="module")
def reference() -> ReferenceMiniLM:
    return ReferenceMiniLM()


def test_the_sample_text_is_longer_than_384_tokens() -> None:
    assert sample_text().endswith("BBC News, 29th July 2004")
    assert token_count(sample_text()) > 384


def test_the_app_reproduces_fastembed_rs_at_max_length_384() -> None:
    weights = package_weights()
    assert weights is not None
    model = load_weights_model(weights, 1, max_length=384)
    vector = next(iter(model.embed([sample_text()])))
    assert np.abs(vector[:10] - np.array(FASTEMBED_RS_384, np.float32)).max() < TOLERANCE


def test_the_reference_reproduces_fastembed_rs_at_384_and_not_at_256() -> None:
    """The oracle itself is right: at 384 tokens it gives fastembed-rs's numbers; at 256 (what the app used
    to cut at) it does not."""
    at_384 = ReferenceMiniLM(max_tokens=384).embed([sample_text()])[0]
    assert np.abs(at_384[:10] - np.array(FASTEMBED_RS_384, np.float32)).max() < TOLERANCE
    at_256 = ReferenceMiniLM(max_tokens=256).embed([sample_text()])[0]
    assert np.abs(at_256[:10] - np.array(FASTEMBED_RS_384, np.float32)).max() > 1e-3


@pytest.mark.parametrize(("more_than", "fewer_than"), [(256, 500), (512, 3_000)])
def test_the_default_limit_gives_the_references_vector_of_a_long_text(
    reference: ReferenceMiniLM, more_than: int, fewer_than: int
) -> None:
    text = long_text(more_than, fewer_than)
    model = load_local_model("AllMiniLML6V2")
    assert model.model_info.exact
    ours = model.embed_sync(text)
    assert np.abs(ours - reference.embed([text])[0]).max() <= 1e-5
    # The text is long enough for the limit to matter: cut at 256 it is another vector.
    assert np.abs(ours - ReferenceMiniLM(max_tokens=256).embed([text])[0]).max() > 1e-3


@pytest.mark.parametrize(
    ("config", "max_length", "expected"),
    [
        ({"model_max_length": 512}, FASTEMBED_MAX_LENGTH, 512),
        ({"model_max_length": 8192}, FASTEMBED_MAX_LENGTH, 512),
        ({"model_max_length": 128}, FASTEMBED_MAX_LENGTH, 128),
        ({"model_max_length": 1e30}, FASTEMBED_MAX_LENGTH, 512),  # transformers' "no limit"
        ({"model_max_length": 512}, 384, 384),
        # fastembed-rs reads model_max_length alone; max_length stands in only where it is missing.
        ({"model_max_length": 512, "max_length": 128}, FASTEMBED_MAX_LENGTH, 512),
        ({"max_length": 256}, FASTEMBED_MAX_LENGTH, 256),
        ({"model_max_length": 0, "max_length": 300}, FASTEMBED_MAX_LENGTH, 300),
        ({"model_max_length": True}, FASTEMBED_MAX_LENGTH, 512),
        ({}, FASTEMBED_MAX_LENGTH, 512),
    ],
)
def test_the_limit_is_fastembed_rs_s(config: dict[str, Any], max_length: int, expected: int) -> None:
    assert truncation_limit(config, max_length) == expected


@pytest.mark.slow
def test_fastembed_is_told_to_cut_where_cosh_cuts(reference: ReferenceMiniLM, tmp_path: Path) -> None:
    """cosh's file loaded through Python fastembed, whose ``tokenizer_config.json`` allows 8192 tokens:
    Python fastembed alone would read them all; cosh's fastembed-rs reads 512, and so does the app."""
    import json

    from recall_gui.core.embedders.cosh_files import cosh_file
    from recall_gui.core.embedders.fastembed_files import load_fastembed, register_cosh_model
    from tests.cosh_model_file import write_cosh_files

    write_cosh_files(tmp_path)
    config_path = tmp_path / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config_path.write_text(json.dumps({**config, "model_max_length": 8192}), encoding="utf-8")
    wanted = cosh_file("AllMiniLML6V2")
    assert wanted is not None
    model = load_fastembed(register_cosh_model("AllMiniLML6V2", wanted, 384), tmp_path, threads=1)
    text = long_text(512, 3_000)
    vector = next(iter(model.embed([text])))
    assert np.abs(vector - reference.embed([text])[0]).max() <= 1e-5
