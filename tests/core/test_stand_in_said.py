"""A database whose model has only a stand-in here (cosh's AllMiniLML6V2Q: the packaged int8 file is
another quantization) says so wherever results are read: a `model` object in the JSON of check, compare,
rank, hubs and shadowing, a note on stderr of every command that searched, and once in the MCP server's
log — while what the agent receives stays exactly the seed's `{"query", "results"}`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.kbtools import KnowledgeBase, cosh_entry, write_registry

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

ROOT = Path(__file__).resolve().parents[2]
NOTE = "note: AllMiniLML6V2Q is embedded with a stand-in here"


@pytest.fixture
def stand_in_kb(make_kb: Callable[..., KnowledgeBase]) -> KnowledgeBase:
    kb = make_kb()
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir, model="AllMiniLML6V2Q")])
    return kb


def cli(kb: KnowledgeBase, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recall_gui", args[0], "--registry", str(kb.registry_dir), *args[1:]],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=False,
    )


def assert_stand_in(model: dict[str, Any]) -> None:
    assert model["name"] == "AllMiniLML6V2Q" and model["exact"] is False
    assert model["source"].startswith("the packaged int8 copy of all-MiniLM-L6-v2")
    assert model["stands_in_for"].startswith("Xenova/all-MiniLM-L6-v2 onnx/model_quantized.onnx")


def test_search_says_it_on_stderr_and_prints_the_agents_json(stand_in_kb: KnowledgeBase) -> None:
    done = cli(stand_in_kb, "search", "--db", stand_in_kb.name, "capital of France")
    assert done.returncode == 0, done.stderr
    assert NOTE in done.stderr and "recall-gui models get AllMiniLML6V2Q" in done.stderr
    assert set(json.loads(done.stdout)) == {"query", "results"}


def test_check_and_compare_json_carry_the_model(stand_in_kb: KnowledgeBase, tmp_path: Path) -> None:
    golden = tmp_path / "golden.json"
    check = {"db_name": stand_in_kb.name, "query": "capital of France", "expect": ["paris"]}
    golden.write_text(json.dumps({"checks": [check]}), encoding="utf-8")
    checked = cli(stand_in_kb, "check", "--json", str(golden))
    assert checked.returncode == 0, checked.stderr
    assert_stand_in(json.loads(checked.stdout)["checks"][0]["model"])
    assert checked.stderr.count(NOTE) == 1
    compared = cli(stand_in_kb, "compare", "--json", "--version", "1", str(golden))
    assert compared.returncode == 0, compared.stderr
    sides = json.loads(compared.stdout)["checks"][0]
    assert_stand_in(sides["a"]["model"])
    assert_stand_in(sides["b"]["model"])
    assert NOTE in compared.stderr


def test_rank_hubs_and_shadowing_json_carry_the_model(stand_in_kb: KnowledgeBase, tmp_path: Path) -> None:
    name = stand_in_kb.name
    ranked = cli(stand_in_kb, "rank", "--db", name, "--id", "paris", "capital of France")
    assert ranked.returncode == 0, ranked.stderr
    assert_stand_in(json.loads(ranked.stdout)["model"])
    assert NOTE in ranked.stderr
    queries = tmp_path / "queries.txt"
    queries.write_text("capital of France\nhow do I reset my password\n", encoding="utf-8")
    hubs = cli(stand_in_kb, "hubs", "--db", name, "--queries", str(queries), "--json")
    assert hubs.returncode == 0, hubs.stderr
    assert_stand_in(json.loads(hubs.stdout)["model"])
    shadowing = cli(stand_in_kb, "shadowing", "--db", name, "--json", "capital of France")
    assert shadowing.returncode == 0, shadowing.stderr
    assert_stand_in(json.loads(shadowing.stdout)["model"])
    assert NOTE in shadowing.stderr


def test_the_mcp_server_logs_it_once_and_answers_as_cosh(stand_in_kb: KnowledgeBase, tmp_path: Path) -> None:
    from tests.mcp.live import BackgroundLoop, live_session, server_env, server_parameters

    loop = BackgroundLoop()
    try:
        live = loop.hold(
            live_session(server_parameters(stand_in_kb.registry_dir, server_env(tmp_path)), tmp_path / "log")
        )

        async def calls() -> list[dict[str, Any]]:
            answers = []
            for query in ("capital of France", "password reset"):
                result = await live.session.call_tool(
                    "recall_search", {"db_name": stand_in_kb.name, "query": query}
                )
                answers.append(json.loads(result.content[0].text))
            return answers

        answers = loop.run(calls())
    finally:
        loop.close()
    assert all(set(answer) == {"query", "results"} for answer in answers)
    assert answers[0]["results"][0]["id"] == "paris"
    log = (tmp_path / "log").read_text(encoding="utf-8")
    assert log.count("AllMiniLML6V2Q is embedded with a stand-in here") == 1


def test_hybrid_search_says_it_and_full_text_search_which_embeds_nothing_does_not(
    stand_in_kb: KnowledgeBase,
) -> None:
    import lancedb
    from lancedb.index import FTS

    lancedb.connect(str(stand_in_kb.db_dir)).open_table(stand_in_kb.name).create_index(
        "content", config=FTS()
    )
    hybrid = cli(stand_in_kb, "search", "--db", stand_in_kb.name, "--hybrid", "capital of France")
    assert hybrid.returncode == 0, hybrid.stderr
    assert hybrid.stderr.count(NOTE) == 1
    assert set(json.loads(hybrid.stdout)) == {"query", "results"}
    words = cli(stand_in_kb, "search", "--db", stand_in_kb.name, "--fts", "capital of France")
    assert words.returncode == 0, words.stderr
    assert words.stderr == ""
