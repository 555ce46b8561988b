"""A knowledge base written as cosh writes one, searched through the MCP server on a fresh install.

cosh's TUI stores each document whole, one row each, every id ``content`` (``rag.ingest("content", text)``),
embedded by fastembed-rs, which reads the first 512 tokens. Here: 200 whole documents of Python's own help
(help topics and man-like module and class pages, 300 tokens and more), their vectors from the independent
float32 reference (``tests/minilm_reference.py``) cut at 512 tokens, registered as ``AllMiniLML6V2``. The
agent's top 5 is LanceDB's flat search with the reference's query vectors; the server, started with empty
caches, must return it for at least 99% of short questions and 39 of 40 queries of 300-600 tokens (an
agent pasting a passage)."""

from __future__ import annotations

import importlib
import inspect
import json
import pydoc
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bench.agreement_set import ALL_QUESTIONS
from bench.data import _STDLIB_MODULES
from tests.kbtools import cosh_entry, write_lance_table, write_registry
from tests.mcp.live import BackgroundLoop, live_session, server_env, server_parameters
from tests.minilm_reference import ReferenceMiniLM

DOCUMENTS = 200
LONG_QUERIES = 40
LIMIT = 5
SHORT_AGREEMENT = 0.99
LONG_AGREEMENT = 39


def token_counter() -> Any:
    from tokenizers import Tokenizer

    from tests.minilm_reference import weights_folder

    tokenizer = Tokenizer.from_file(str(weights_folder() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda text: len(tokenizer.encode(text).ids)


def _public(module: Any) -> list[Any]:
    return [getattr(module, name) for name in sorted(dir(module)) if not name.startswith("_")]


def _pages(modules: list[Any], classes: list[Any]) -> Iterator[str]:
    """Help topics, then module pages, then class pages, as ``help()`` shows them (rendered lazily)."""
    import pydoc_data.topics

    yield from (text for _, text in sorted(pydoc_data.topics.topics.items()))
    yield from (pydoc.plaintext.document(module) for module in modules)
    yield from (pydoc.plaintext.document(item) for item in classes if (inspect.getdoc(item) or "").strip())


def texts_of_python(count: Any) -> tuple[list[str], list[str]]:
    """Whole documents (help topics, then module and class help pages, of 300 tokens and more) and
    passages of 300-600 tokens to search with (docstrings, none of them a document)."""
    with warnings.catch_warnings():  # reading deprecated names (typing.io) warns
        warnings.simplefilter("ignore", DeprecationWarning)
        return _texts_of_python(count)


def _texts_of_python(count: Any) -> tuple[list[str], list[str]]:
    modules = []
    for name in _STDLIB_MODULES.split():
        try:
            modules.append(importlib.import_module(name))
        except ImportError:
            continue
    classes = [item for module in modules for item in _public(module) if inspect.isclass(item)]
    documents: list[str] = []
    for page in _pages(modules, classes):
        # 300 tokens take far fewer than 6,000 characters: a long page need not be read whole to know.
        if page not in documents and count(page[:6_000]) >= 300:
            documents.append(page)
            if len(documents) == DOCUMENTS:
                break
    routines = [item for module in modules for item in _public(module) if inspect.isroutine(item)]
    chosen = set(documents)
    passages = []
    for text in dict.fromkeys(inspect.getdoc(item) or "" for item in [*routines, *classes]):
        if text not in chosen and len(text) < 6_000 and 300 <= count(text) <= 600:
            passages.append(text)
            if len(passages) == LONG_QUERIES:
                break
    return documents, passages


@dataclass(frozen=True)
class CoshKnowledgeBase:
    root: Path
    registry_dir: Path
    short: tuple[str, ...]
    long: tuple[str, ...]
    #: The agent's top 5 (LanceDB's flat search, the reference's vector) of each query, by content.
    expected: dict[str, tuple[str, ...]]


@pytest.fixture(scope="module")
def cosh_kb(tmp_path_factory: pytest.TempPathFactory) -> CoshKnowledgeBase:
    import lancedb

    count = token_counter()
    documents, passages = texts_of_python(count)
    assert len(documents) == DOCUMENTS and len(passages) == LONG_QUERIES
    assert sum(count(text[:6_000]) > 512 for text in documents) > DOCUMENTS // 2  # most are read in part
    reference = ReferenceMiniLM()  # cut at 512 tokens, as fastembed-rs cuts them
    root = tmp_path_factory.mktemp("cosh-kb")
    ids = ["content"] * len(documents)
    write_lance_table(root / "lancedb", "manual", ids, documents, reference.embed(documents))
    registry_dir = write_registry(root / "registry", [cosh_entry("manual", root / "lancedb")])
    table = lancedb.connect(str(root / "lancedb")).open_table("manual")
    queries = [*ALL_QUESTIONS, *passages]
    expected = {
        query: tuple(row["content"] for row in table.search(vector).limit(LIMIT).to_list())
        for query, vector in zip(queries, reference.embed(queries), strict=True)
    }
    return CoshKnowledgeBase(root, registry_dir, tuple(ALL_QUESTIONS), tuple(passages), expected)


@pytest.fixture(scope="module")
def fresh_server(cosh_kb: CoshKnowledgeBase) -> Iterator[Any]:
    """The server as a new user starts it: its own data and cache folders and model caches, all empty."""
    root = cosh_kb.root / "fresh-install"
    root.mkdir()
    env = server_env(root) | {
        "RECALL_GUI_CACHE_DIR": str(root / "cache"),
        "FASTEMBED_CACHE_PATH": str(root / "fastembed"),
        "HF_HUB_CACHE": str(root / "hf-hub"),
    }
    loop = BackgroundLoop()
    try:
        yield loop, loop.hold(live_session(server_parameters(cosh_kb.registry_dir, env), root / "server.log"))
    finally:
        loop.close()


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the reference embeds 240 texts of up to 512 tokens in NumPy: minutes
def test_the_mcp_server_gives_the_agents_top_5_on_a_kb_cosh_wrote(
    cosh_kb: CoshKnowledgeBase, fresh_server: Any
) -> None:
    loop, live = fresh_server

    async def answers(queries: tuple[str, ...]) -> list[bool]:
        same = []
        for query in queries:
            result = await live.session.call_tool(
                "recall_search", {"db_name": "manual", "query": query, "limit": LIMIT}
            )
            assert not result.is_error, result.content[0].text
            payload = json.loads(result.content[0].text)
            assert {hit["id"] for hit in payload["results"]} == {"content"}
            same.append(tuple(hit["content"] for hit in payload["results"]) == cosh_kb.expected[query])
        return same

    short = loop.run(answers(cosh_kb.short), timeout=600)
    long = loop.run(answers(cosh_kb.long), timeout=600)
    assert sum(short) / len(short) >= SHORT_AGREEMENT, f"{sum(short)} of {len(short)}"
    assert sum(long) >= LONG_AGREEMENT, f"{sum(long)} of {len(long)}"
    assert "stand-in" not in live.log()
