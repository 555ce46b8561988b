"""The packaged model's queries are embedded without fastembed (``core/embedders/direct.py``), and the
vectors are fastembed's bit for bit: on the demo's passages, on text of every awkward kind, in batches, and
in what ``recall-gui search`` prints. fastembed is then not imported by a search on such a database."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recall_gui.core.base.errors import EmbedderError
from recall_gui.core.demo import read_prebuilt_demo
from recall_gui.core.embedders.direct import DirectQueryModel
from recall_gui.core.embedders.local import LocalEmbedder, load_offline_fastembed, load_offline_model
from recall_gui.core.embedders.model_choice import load_local_model
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry

ROOT = Path(__file__).resolve().parents[2]

AWKWARD_TEXTS = {
    "empty": "",
    "space": " ",
    "blank": " \t\n\r\n  \u00a0\u3000\u2003",
    "many spaces": " " * 5000,
    "control characters": "\x00\x01\x07bell\x1b[31mred\x1b[0m\x7f\x85\x9f end",
    "zero-width and marks": "zero\u200bwidth\u200c\u200d joiner\ufeffBOM \u00ad soft\u2028line\u2029para",
    "bidi controls": "\u202eevil\u202c \u2066isolate\u2069 \u200fRLM",
    "hebrew": "שלום עולם, מה שלומך היום?",
    "arabic": "مرحبا بالعالم، كيف حالك اليوم؟",
    "mixed direction": "The word שלום means peace; سلام too (123).",
    "combining": "e\u0301 a\u0308 o\u0302\u0323 Z\u0351\u0346\u036f\u0313a\u0317\u0324l\u0330g\u0359o",
    "nfd": "Cafe\u0301 re\u0301sume\u0301 nai\u0308ve",
    "nfc": "Café résumé naïve",
    "emoji": "😀 🎉 👍🏽 🇫🇷 👩‍👩‍👧‍👦 ❤️",
    "non-bmp": "𝕳𝖊𝖑𝖑𝖔 𝓦𝓸𝓻𝓵𝓭 𠜎𠜱𠝹 𐍈𐌰𐌹 🀄",
    "cjk": "日本語のテキストと中文文本，한국어 텍스트",
    "long": "How do I reset my password? " * 200,
    "long words": "x" * 20000,
    "long non-bmp": "🎉" * 600,
    "code": "def f(x: int) -> list[int]:\n    return [i ** 2 for i in range(x)]  # squares",
    "one word": "password",
}


@pytest.fixture(scope="module")
def models() -> tuple[LocalEmbedder, LocalEmbedder]:
    """The packaged model as the app loads it (direct queries) and through fastembed alone."""
    direct, fastembed = load_offline_model(), load_offline_fastembed()
    assert isinstance(direct._model, DirectQueryModel)
    assert type(fastembed._model.model).__name__ == "CustomTextEmbedding"  # the path direct.py follows
    return direct, fastembed


def same_bits(first: Any, second: Any) -> bool:
    return bool(
        first.dtype == second.dtype and first.shape == second.shape and first.tobytes() == second.tobytes()
    )


@pytest.mark.slow
def test_the_demo_passages_embed_to_fastembeds_vectors(models: tuple[LocalEmbedder, LocalEmbedder]) -> None:
    """Real passages, short and long alike (every fourth of the demo's: a passage takes ~50 ms to embed on
    one thread): the direct path gives fastembed's vectors bit for bit."""
    direct, fastembed = models
    texts = read_prebuilt_demo().texts()
    assert len(texts) > 600
    sample = range(0, len(texts), 4)
    differing = [
        i for i in sample if not same_bits(direct.embed_sync(texts[i]), fastembed.embed_sync(texts[i]))
    ]
    assert differing == []


@pytest.mark.parametrize("kind", sorted(AWKWARD_TEXTS))
def test_awkward_text_embeds_to_fastembeds_vector(
    kind: str, models: tuple[LocalEmbedder, LocalEmbedder]
) -> None:
    direct, fastembed = models
    text = AWKWARD_TEXTS[kind]
    vector = direct.embed_sync(text)
    assert vector.shape == (384,) and vector.dtype == np.float32 and np.isfinite(vector).all()
    assert same_bits(vector, fastembed.embed_sync(text))


def test_text_beyond_512_tokens_is_cut_at_512_as_cosh_cuts_it(
    models: tuple[LocalEmbedder, LocalEmbedder],
) -> None:
    direct, fastembed = models
    assert isinstance(direct._model, DirectQueryModel)
    long = "How do I reset my password? " * 200
    assert len(direct._model.tokenizer.encode_batch([long])[0].ids) == 512
    cut = direct._model.tokenizer.decode(direct._model.tokenizer.encode_batch([long])[0].ids)
    assert same_bits(direct.embed_sync(long), direct.embed_sync(long + " and something else entirely"))
    assert not same_bits(direct.embed_sync(long), direct.embed_sync(cut[: len(cut) // 2]))
    assert same_bits(direct.embed_sync(long + " tail"), fastembed.embed_sync(long + " tail"))


@pytest.mark.slow
def test_a_batch_pads_to_its_longest_text_as_fastembeds_does() -> None:
    # One text past the model's limit among short ones: every row is padded to its 512 tokens. Each row of
    # such a batch costs onnxruntime ~100 MB of attention scores, kept in its arena for the session's life:
    # each side gets a model of its own, let go before the other's is loaded.
    texts = [AWKWARD_TEXTS[kind] for kind in ("empty", "long", "emoji")]
    direct = load_offline_model()._model
    batch = np.vstack(list(direct.embed(texts)))
    assert list(direct.embed([])) == []
    del direct
    theirs = np.vstack(list(load_offline_fastembed()._model.embed(texts, batch_size=len(texts))))
    assert same_bits(batch, theirs)


def test_text_the_tokenizer_refuses_fails_as_it_does_with_fastembed(
    models: tuple[LocalEmbedder, LocalEmbedder],
) -> None:
    messages = []
    for model in models:
        with pytest.raises(EmbedderError) as caught:
            model.embed_checked("a lone surrogate \ud800 here")
        messages.append(caught.value.message)
    assert messages[0] == messages[1]


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
@pytest.mark.slow
def test_any_text_embeds_to_fastembeds_vector(models: tuple[LocalEmbedder, LocalEmbedder], text: str) -> None:
    direct, fastembed = models
    assert same_bits(direct.embed_sync(text), fastembed.embed_sync(text))


def test_the_query_session_has_fastembeds_options_and_does_not_spin(
    models: tuple[LocalEmbedder, LocalEmbedder],
) -> None:
    import onnxruntime

    direct, fastembed = models
    assert isinstance(direct._model, DirectQueryModel)
    ours, theirs = direct._model.session, fastembed._model.model.model
    for session in (ours, theirs):
        options = session.get_session_options()
        assert options.intra_op_num_threads == options.inter_op_num_threads == 1
        assert options.graph_optimization_level == onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"
    assert ours.get_providers() == theirs.get_providers()


def test_bulk_embedding_still_goes_through_fastembed(models: tuple[LocalEmbedder, LocalEmbedder]) -> None:
    direct, _ = models
    texts = ["Paris is the capital of France.", "Berlin is the capital of Germany."]
    bulk = direct.embed_many(texts)
    assert type(direct._bulk_model.model).__name__ == "CustomTextEmbedding"
    assert all(same_bits(b, direct.embed_sync(t)) for b, t in zip(bulk, texts, strict=True))


def test_an_untested_library_version_loads_fastembed_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    from recall_gui.core.base import compat

    text = "the capital of France"
    direct = load_offline_model()
    monkeypatch.setattr(compat, "is_tested", lambda package: False)
    untested = load_offline_model()
    assert isinstance(direct._model, DirectQueryModel)
    assert type(untested._model).__name__ == "TextEmbedding"
    assert same_bits(direct.embed_sync(text), untested.embed_sync(text))


def test_the_exact_model_and_the_stand_in_are_served_without_fastembed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cosh's default model runs from its weights and the stand-in from the packaged file, both through
    the direct path; the tokenizer is the app's own copy, never a staged folder that may hold more."""
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fastembed"))
    exact, stand_in = load_local_model("AllMiniLML6V2"), load_local_model("AllMiniLML6V2Q")
    assert isinstance(exact._model, DirectQueryModel) and exact.model_info.exact
    assert isinstance(stand_in._model, DirectQueryModel) and not stand_in.model_info.exact


# --- what a fresh process prints, and what it imports -----------------------------------------------------

#: Runs recall-gui's CLI in one process for each query, the direct path switched off when asked, and
#: reports whether fastembed was imported.
CLI_RUNS = """
import json, sys
mode, registry, name, queries = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
if mode == "fastembed":
    import recall_gui.core.embedders.local as local
    local.direct_embedding_checked = lambda: False
from recall_gui.cli import main
for query in queries:
    assert main(["search", "--registry", registry, "--db", name, "--limit", "4", query]) == 0
print("fastembed imported:", "fastembed" in sys.modules, file=sys.stderr)
"""

QUERIES = [
    "How do I change my password?",
    "capital of France",
    "",
    " ",
    "😀 🇫🇷 שלום مرحبا e\u0301 𝕳𝖊𝖑𝖑𝖔 \x07",
    "password " * 300,
]


def cli_output(kb: KnowledgeBase, mode: str) -> tuple[bytes, str]:
    done = subprocess.run(
        [sys.executable, "-c", CLI_RUNS, mode, str(kb.registry_dir), kb.name, json.dumps(QUERIES)],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    return done.stdout, done.stderr.decode()


@pytest.fixture
def knowledge_bases(make_kb: Callable[..., KnowledgeBase]) -> list[KnowledgeBase]:
    """A test knowledge base under the quantised name, which the packaged stand-in serves (the direct
    path's model; cosh's default is served from its weights, never through fastembed)."""
    quantised = make_kb("quantised")
    write_registry(
        quantised.registry_dir, [cosh_entry(quantised.name, quantised.db_dir, model="AllMiniLML6V2Q")]
    )
    return [quantised]


@pytest.mark.process
@pytest.mark.slow
def test_recall_gui_search_prints_the_same_bytes_and_never_imports_fastembed(
    knowledge_bases: list[KnowledgeBase],
) -> None:
    for kb in knowledge_bases:
        direct, direct_said = cli_output(kb, "direct")
        before, before_said = cli_output(kb, "fastembed")
        assert "fastembed imported: False" in direct_said
        assert "fastembed imported: True" in before_said  # the comparison is with fastembed's path
        assert direct == before
        results = [json.loads(line) for line in direct.decode().splitlines()]
        assert len(results) == len(QUERIES) and results[1]["results"][0]["id"] == "paris"


#: The MCP server's preload of the knowledge base, then the agent's call; says what was imported.
SERVER_PRELOAD = """
import asyncio, sys
from pathlib import Path
from recall_gui.runtime import configure_process
configure_process()
from recall_gui.mcp.server import RecallMcpServer

async def go():
    server = RecallMcpServer(Path(sys.argv[1]))
    try:
        await server.preload()
        imported = "fastembed" in sys.modules
        return imported, await server.harness.recall_search({"db_name": sys.argv[2], "query": sys.argv[3]})
    finally:
        await server.harness.aclose()

imported, answer = asyncio.run(go())
print(imported)
print(answer)
"""


@pytest.mark.process
def test_the_mcp_servers_preload_of_such_a_database_does_not_import_fastembed(kb: KnowledgeBase) -> None:
    from recall_gui.core.search.harness import Harness

    done = subprocess.run(
        [sys.executable, "-c", SERVER_PRELOAD, str(kb.registry_dir), kb.name, QUERIES[0]],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    imported, answer = done.stdout.splitlines()
    assert imported == "False", done.stderr

    async def in_process() -> str:
        harness = Harness(kb.registry_dir)
        try:
            return await harness.recall_search({"db_name": kb.name, "query": QUERIES[0]})
        finally:
            await harness.aclose()

    assert answer == asyncio.run(in_process())
