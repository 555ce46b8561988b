"""Bad queries and limits, in the core and on the command line: each has one defined behaviour.

Queries: any text is embedded as it is, as cosh does (empty and blank queries too); the model reads the
first 512 tokens of a long one; the JSON echoes the query exactly. Text that is not Unicode (an unpaired
surrogate) is refused, as cosh's JSON parser refuses it.
Limits: a non-negative integer below 2**64 is used (0 gives no results; more than the table holds gives
every row); anything else means 5, as in cosh. The command line says so when it replaces a typed limit.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recall_gui.cli import main as cli_main
from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.types import RecallSearchInput
from recall_gui.core.search.harness import Harness
from recall_gui.core.session.session import Session
from tests.coretools import search
from tests.kbtools import KnowledgeBase

ROOT = Path(__file__).resolve().parents[2]

ODD_QUERIES = {
    "empty": "",
    "blank": " \t\n ",
    "control": "capital\x00 of\x07 France\x1b[31m?\r",
    "rtl": "ما هي عاصمة فرنسا؟ Paris",
    "emoji": "🚀🔥 rocket to Paris 🇫🇷",
    "combining": "Pa\u0301ris cafe\u0301 \u200b\u200d zero-width",
}


@pytest.fixture(scope="module")
def shared_session() -> Iterator[Session]:
    """One session for the module: the model loads once, not once per test."""
    session = Session()
    yield session
    asyncio.run(session.aclose())


def run(shared_session: Session, kb: KnowledgeBase, args: dict[str, Any]) -> dict[str, Any]:
    async def go() -> str:
        return await Harness(kb.registry_dir, session=shared_session).recall_search(args)

    data: dict[str, Any] = json.loads(asyncio.run(go()))
    return data


@pytest.mark.parametrize("name", sorted(ODD_QUERIES))
def test_odd_queries_are_searched_as_they_are(shared_session: Session, kb: KnowledgeBase, name: str) -> None:
    query = ODD_QUERIES[name]
    data = run(shared_session, kb, {"db_name": kb.name, "query": query})
    assert data["query"] == query
    assert len(data["results"]) == 5
    assert {r["id"] for r in data["results"]} <= set(kb.ids)


def test_a_100_kb_query_is_read_up_to_the_model_window(shared_session: Session, kb: KnowledgeBase) -> None:
    query = "What is the capital of France? " * 3300
    assert len(query.encode()) > 100_000
    data = run(shared_session, kb, {"db_name": kb.name, "query": query, "limit": 1})
    assert data["query"] == query
    assert data["results"][0]["id"] == "paris"


@pytest.mark.parametrize("query", ["\ud800", "broken \udcff surrogate"])
def test_text_that_is_not_unicode_is_refused(shared_session: Session, kb: KnowledgeBase, query: str) -> None:
    with pytest.raises(InvalidInputError, match="not valid Unicode text"):
        run(shared_session, kb, {"db_name": kb.name, "query": query})


@pytest.mark.parametrize(
    ("limit", "count"),
    [
        (0, 0),
        (1, 1),
        (12, 12),
        (13, 12),
        (2**40, 12),
        (2**64 - 1, 12),
        (2**64, 5),
        (10**30, 5),
        (-1, 5),
        (-(2**70), 5),
        (2.5, 5),
        (3.0, 5),
        ("3", 5),
        (True, 5),
        (None, 5),
        ([3], 5),
        ({"n": 3}, 5),
    ],
)
def test_limits_follow_cosh_end_to_end(
    shared_session: Session, kb: KnowledgeBase, limit: Any, count: int
) -> None:
    data = run(shared_session, kb, {"db_name": kb.name, "query": "capital", "limit": limit})
    assert len(data["results"]) == count


def test_a_missing_limit_means_five(shared_session: Session, kb: KnowledgeBase) -> None:
    assert len(run(shared_session, kb, {"db_name": kb.name, "query": "capital"})["results"]) == 5


def test_the_low_level_search_takes_any_limit_lancedb_cannot(kb: KnowledgeBase, embedder: Any) -> None:
    vector = [float(x) for x in embedder.embed_sync("capital")]
    for limit, count in ((2**40, 12), (2**64 - 1, 12), (-1, 5), (None, 5), (0, 0)):
        request = RecallSearchInput(str(kb.db_dir), kb.name, 384, "capital", vector, limit)
        assert len(search(request).results) == count, limit
    with pytest.raises(InvalidInputError, match="'limit' must be a non-negative integer or null"):
        RecallSearchInput.from_json(request.to_json().replace('"limit": 0', '"limit": -2'))


@pytest.mark.parametrize(
    ("typed", "count", "warned"),
    [
        ("0", 0, False),
        (" 3 ", 3, False),
        ("+2", 2, False),
        ("1099511627776", 12, False),
        ("-3", 5, True),
        ("2.5", 5, True),
        ("abc", 5, True),
        ("", 5, True),
        ("99999999999999999999999", 5, True),
        ("9" * 5000, 5, True),
        ("1e3", 5, True),
        ("٣", 5, True),  # an Arabic-Indic digit: not what cosh's JSON would call an integer
    ],
)
def test_cli_limits(kb: KnowledgeBase, capsys: Any, typed: str, count: int, warned: bool) -> None:
    code = cli_main(["search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", typed, "x"])
    out, err = capsys.readouterr()
    assert code == 0
    assert len(json.loads(out)["results"]) == count
    assert ("is not an integer from 0 to 2**64 - 1; using 5" in err) is warned
    assert len(err) < 200  # a long value is not echoed whole


@pytest.mark.parametrize("name", sorted(set(ODD_QUERIES) - {"control"}))
def test_cli_odd_queries(kb: KnowledgeBase, capsys: Any, name: str) -> None:
    query = ODD_QUERIES[name]
    assert cli_main(["search", "--registry", str(kb.registry_dir), "--db", kb.name, query]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["query"] == query


def test_cli_refuses_bytes_that_are_not_utf8(kb: KnowledgeBase, capsys: Any) -> None:
    query = b"caf\xe9".decode("utf-8", "surrogateescape")  # what Python makes of a Latin-1 argv byte
    assert cli_main(["search", "--registry", str(kb.registry_dir), "--db", kb.name, query]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "error: 'query' is not valid Unicode text" in err


@pytest.mark.process
def test_cli_prints_utf8_json_whatever_the_terminal_encoding(kb: KnowledgeBase) -> None:
    query = "capital\x07 ما هي 🚀\t"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "recall_gui",
            "search",
            "--registry",
            str(kb.registry_dir),
            "--db",
            kb.name,
            query,
        ],
        check=False,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "ascii", "LC_ALL": "C"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr
    data = json.loads(done.stdout.decode("utf-8"))
    assert data["query"] == query and len(data["results"]) == 5
    assert "\\u0007" in done.stdout.decode("utf-8")  # control characters are escaped, never raw


def test_cli_searches_a_query_of_102400_characters_and_refuses_a_longer_one(
    kb: KnowledgeBase, capsys: Any
) -> None:
    longest = "What is the capital of France? " * 3303 + "x" * 7  # 102,400 characters
    assert len(longest) == 102_400
    assert cli_main(["search", "--registry", str(kb.registry_dir), "--db", kb.name, longest]) == 0
    assert json.loads(capsys.readouterr().out)["query"] == longest
    assert cli_main(["search", "--registry", str(kb.registry_dir), "--db", kb.name, longest + "?"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: the query is 102,401 characters long; at most 102,400 are searched\n")
    assert len(err) < 400  # the query is not echoed
