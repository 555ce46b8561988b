"""A table whose ids, contents and document names hold control characters: every command that prints a
table's text prints them escaped (text), or as JSON escapes them (JSON, still valid and with the same
values); no raw control character reaches stdout or stderr."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.kbtools import PASSAGES, cosh_entry, write_lance_table, write_registry

#: What a hostile row may hold: a title-setting OSC, a screen clear, a carriage return, a line break,
#: NUL, a bidirectional override, the C1 CSI.
HOSTILE = ("\x1b]0;owned\x07", "\x1b[2J", "\r", "\n", "\x00", "\u202e", "\x9b")
#: Bidirectional embeddings, overrides and isolates (Unicode's Bidi_Control, but for the marks).
BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def raw_controls(text: str) -> list[str]:
    """Every character a terminal would act on, but the line breaks that end lines (by Unicode's
    categories: controls and lone surrogates)."""
    return [c for c in text if c != "\n" and (unicodedata.category(c) in ("Cc", "Cs") or c in BIDI)]


@dataclass(frozen=True)
class HostileTable:
    name: str
    registry: Path
    ids: tuple[str, ...]
    golden: Path
    queries: Path


@pytest.fixture
def hostile(tmp_path: Path, passage_vectors: Any) -> HostileTable:
    import lancedb
    import numpy as np
    import pyarrow as pa
    from lancedb.index import FTS

    ids = [f"{key}{HOSTILE[n % len(HOSTILE)]}x" for n, key in enumerate(PASSAGES)]
    contents = [f"{text}{HOSTILE[n % len(HOSTILE)]}y" for n, text in enumerate(PASSAGES.values())]
    vectors = np.asarray(passage_vectors, dtype=np.float32)
    ids.append("copy\x1b[31m")  # a near-copy of the third passage: duplicates and shadowing name it
    contents.append(contents[2])
    vectors = np.vstack([vectors, vectors[2:3]])
    sources = [f"doc\x1b[2J{n % 2}\u202e\x9b" for n in range(len(ids))]
    db = tmp_path / "db"
    extra = {"source": sources, "chunk_index": list(range(len(ids)))}
    write_lance_table(db, "evil", ids, contents, vectors, extra=extra)
    # A second version (one row more), for diff, versions and compare --version.
    table = lancedb.connect(str(db)).open_table("evil")
    table.create_index("content", config=FTS())  # for search --fts (this test's own table)
    table.add(
        pa.table(
            {
                "id": ["late\u202eone"],
                "content": ["Late\x9b row\r about tides."],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors[8]), vectors.shape[1]),
                "source": ["doc\x1b[2J1\u202e\x9b"],
                "chunk_index": [len(ids)],
            }
        )
    )
    registry = write_registry(tmp_path / "registry", [cosh_entry("evil", db)])
    checks = [
        {"db_name": "evil", "query": "What is the capital of France?", "expect": [ids[2]]},
        {"db_name": "evil", "query": "ocean tides and the moon", "expect": [ids[8], "gone\x1b[5m"]},
    ]
    golden = tmp_path / "golden.json"
    golden.write_text(json.dumps({"checks": checks}), encoding="utf-8")
    queries = tmp_path / "queries.txt"
    queries.write_text("capital of France\npasswords\ntides\n", encoding="utf-8")
    return HostileTable("evil", registry, tuple(ids), golden, queries)


def run(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    from recall_gui.cli import main

    capsys.readouterr()
    status = main(list(words))
    out, err = capsys.readouterr()
    return status, out, err


def ids_in(value: Any) -> set[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(ids_in(item) for item in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(ids_in(item) for item in value)) if value else set()
    return set()


@pytest.mark.slow
def test_every_command_prints_a_hostile_tables_text_escaped(
    hostile: HostileTable, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--registry", str(hostile.registry), "--db", hostile.name)
    paris, tides = hostile.ids[2], hostile.ids[8]
    commands: list[tuple[tuple[str, ...], set[int]]] = [
        (("search", *db, "capital of France"), {0}),
        (("search", *db, "--verbose", "capital of France"), {0}),
        (("search", *db, "--fts", "capital"), {0}),
        (("similar", *db, "--id", paris), {0}),
        (("rank", *db, "--id", tides, "tides"), {0}),
        (("context", *db, "--id", paris), {0}),
        (("context", *db, "--id", paris, "--json"), {0}),
        (("duplicates", *db), {0}),
        (("duplicates", *db, "--json"), {0}),
        (("shadowing", *db, "capital of France"), {0}),
        (("shadowing", *db, "--json", "capital of France"), {0}),
        (("hubs", *db, "--queries", str(hostile.queries), "--share", "0"), {0}),
        (("hubs", *db, "--queries", str(hostile.queries), "--json"), {0}),
        (("reach", *db), {0, 1}),
        (("reach", *db, "--json"), {0, 1}),
        (("health", *db, "--fail-on", "none"), {0}),
        (("health", *db, "--json", "--fail-on", "none"), {0}),
        (("diff", *db, "--from", "1"), {0}),
        (("diff", *db, "--from", "1", "--json"), {0}),
        (("versions", *db), {0}),
        (("versions", *db, "--json"), {0}),
        (("check", "--registry", str(hostile.registry), str(hostile.golden)), {1}),
        (("check", "--registry", str(hostile.registry), "--json", str(hostile.golden)), {1}),
        (("compare", "--registry", str(hostile.registry), "--version", "1", str(hostile.golden)), {0, 1}),
        (
            ("compare", "--registry", str(hostile.registry), "--version", "1", "--json", str(hostile.golden)),
            {0, 1},
        ),
        (("list", "--registry", str(hostile.registry)), {0}),
    ]
    seen: set[str] = set()
    for words, statuses in commands:
        status, out, err = run(capsys, *words)
        assert status in statuses, (words, err)
        assert raw_controls(out + err) == [], (words, out + err)
        if "--json" in words or words[0] in ("search", "similar", "rank"):
            seen |= ids_in(json.loads(out))  # valid JSON, holding the table's own strings
        else:
            seen |= {escaped for escaped in ESCAPED if escaped in out}
    # The table's ids reached the output (as JSON's values, or escaped in text), not lost on the way.
    assert {paris, tides, "copy\x1b[31m"} <= seen
    assert {"paris\\rx", "copy\\x1b[31m", "tides\\x1b[2Jx"} <= seen


#: Ids of the table as the text outputs show them.
ESCAPED = (
    "paris\\rx",
    "copy\\x1b[31m",
    "tides\\x1b[2Jx",
    "generators\\x00x",
    "git-rebase\\nx",
    "asyncio\\u202ex",
    "lancedb\\u009bx",
)


def test_check_junit_report_of_a_hostile_table_is_xml_without_raw_controls(
    hostile: HostileTable, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "junit.xml"
    words = ("check", "--registry", str(hostile.registry), "--junit", str(report), str(hostile.golden))
    status, out, err = run(capsys, *words)
    assert status == 1, err
    text = report.read_text(encoding="utf-8")
    assert raw_controls(out + err) == []
    assert [c for c in raw_controls(text) if c not in "\r\t"] == []
    ElementTree.fromstring(text)


def test_context_names_a_hostile_document_escaped(
    hostile: HostileTable, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--registry", str(hostile.registry), "--db", hostile.name)
    status, out, err = run(capsys, "context", *db, "--id", hostile.ids[2])
    assert status == 0, err
    assert out.splitlines()[0] == "document doc\\x1b[2J0\\u202e\\u009b (7 chunks)"
    # A line break inside an id is escaped: each chunk stays on its own line.
    git = "  git-rebase\\nx: git rebase moves a branch onto a new base commit, rewriting its history.\\ny"
    assert git in out.splitlines()
    assert len(out.splitlines()) == 1 + 7
