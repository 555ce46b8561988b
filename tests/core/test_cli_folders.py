"""The command line on unregistered folders: ``register``, ``search --path``, ``list --path`` (real
subprocesses), and ``recall-gui PATH`` / ``--open PATH`` parsed for the window. Options typed are honoured
or refused with one line, never ignored."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from recall_gui.cli import build_parser, command_names, main
from recall_gui.cli.window import path_as_open, refuse_misplaced
from recall_gui.core.base.errors import InvalidInputError
from tests.core.test_cli import cli
from tests.foldertools import write_lancedb_registry_table, write_langchain_table
from tests.kbtools import PASSAGES, cosh_entry, snapshot_tree, write_lance_table, write_registry

QUERY = "What is the capital of France?"


def parsed(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(path_as_open(command_names(), argv))


def test_a_bare_path_or_open_opens_the_window_on_it_and_commands_are_left_alone() -> None:
    args = parsed("/data/kb")
    assert (args.open_path, args.command) == ("/data/kb", None)
    args = parsed("--registry", "/r", "s3://bucket/kb", "--storage-option", "aws_region=eu-west-1")
    assert (args.open_path, args.registry_before_command) == ("s3://bucket/kb", "/r")
    assert args.open_storage_option == ["aws_region=eu-west-1"]
    assert parsed("--open", "/data/kb").open_path == "/data/kb"
    assert parsed("--", "search").open_path == "search"  # a folder called like a command
    args = parsed("search", "--db", "notes", "capital")
    assert (args.command, args.open_path, args.query) == ("search", None, "capital")
    assert parsed().open_path is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ("--open", "/data/kb", "search", "--db", "x", "q"),
            "--open opens the window; it cannot be combined",
        ),
        (("--storage-option", "a=b"), "--storage-option before a command's name is for the folder"),
        (("--storage-option", "a=b", "tool"), "--storage-option before a command's name is for the folder"),
    ],
)
def test_window_options_beside_a_command_are_refused(argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        refuse_misplaced(parsed(*argv))


@pytest.mark.process
def test_register_then_the_agent_search_and_the_folder_search_print_the_same_json(
    passage_vectors: Any, tmp_path: Path
) -> None:
    from recall_gui.mcp.probe import probe_call, probe_listing

    db = tmp_path / "langchain"
    write_langchain_table(db, "vectorstore", passage_vectors)
    before = snapshot_tree(db)
    registry = write_registry(tmp_path / "registry", [cosh_entry("other", tmp_path / "nowhere")])

    done = cli(
        "register", str(db), "--name", "lc-notes", "--description", "LangChain notes",
        "--registry", str(registry),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f'registered "lc-notes" (active) in {registry / "rag_dbs.json"}: table "vectorstore" of '
        f"{db.resolve()}, model All-MiniLM-L6-v2 (384d), by width: the only local model of 384 dimensions "
        "available\n"
    )
    assert "note: cosh itself opens the table named like the database" in done.stderr
    entry = json.loads((registry / "rag_dbs.json").read_text())["dbs"][1]
    assert {k: entry[k] for k in ("name", "uri", "table", "content_column", "embedder")} == {
        "name": "lc-notes",
        "uri": str(db.resolve()),
        "table": "vectorstore",
        "content_column": "text",
        "embedder": {"Local": {"model": "AllMiniLML6V2"}},
    }
    assert json.loads((registry / "rag_active.json").read_text()) == ["other", "lc-notes"]

    by_name = cli("search", "--registry", str(registry), "--db", "lc-notes", "--limit", "3", QUERY)
    by_path = cli("search", "--path", str(db), "--limit", "3", "--verbose", QUERY)
    assert by_name.returncode == by_path.returncode == 0, by_path.stderr
    assert by_path.stdout == by_name.stdout
    assert json.loads(by_path.stdout)["results"][0]["id"] == "lc-paris"
    assert "model: All-MiniLM-L6-v2 (384d), by width: the only local model" in by_path.stderr
    quantized = cli("search", "--path", str(db), "--model", "AllMiniLML6V2Q", "--verbose", QUERY)
    assert "model: All-MiniLM-L6-v2 (384d, quantized), " in quantized.stderr

    listing = asyncio.run(probe_listing(registry))
    assert "lc-notes" in listing.tools[0]["description"]
    payload = asyncio.run(probe_call(registry, {"db_name": "lc-notes", "query": QUERY, "limit": 3}))
    assert payload.text + "\n" == by_name.stdout
    assert snapshot_tree(db) == before


@pytest.mark.process
def test_register_refuses_with_one_line_and_writes_nothing(passage_vectors: Any, tmp_path: Path) -> None:
    db = tmp_path / "two"
    write_lance_table(db, "alpha", tuple(PASSAGES), tuple(PASSAGES.values()), passage_vectors)
    write_lancedb_registry_table(db, "beta", passage_vectors, model="all-MiniLM-L6-v2")
    empty = tmp_path / "empty"
    empty.mkdir()
    registry = write_registry(tmp_path / "registry", [cosh_entry("alpha", db)])
    before = snapshot_tree(registry)
    for args, expected in (
        ((str(db), "--name", "alpha", "--table", "alpha"), 'not registered: a database called "alpha"'),
        ((str(empty), "--name", "x"), f"no LanceDB table in {empty.resolve()}"),
        ((str(db), "--name", "x"), "holds 2 tables (alpha, beta)"),
        ((str(db), "--name", "x", "--table", "gamma"), 'table "gamma" not found'),
        (
            (str(db), "--name", "x", "--table", "beta", "--model", "BGEBaseENV15"),
            'gives 768-dimensional vectors, but table "beta" holds 384-dimensional ones',
        ),
        ((str(db), "--name", "x", "--table", "beta", "--model", "gpt-9"), 'unknown model "gpt-9"'),
    ):
        done = cli("register", *args, "--registry", str(registry))
        assert done.returncode == 1, (args, done.stdout)
        first, *rest = done.stderr.splitlines()
        assert first.startswith("error: ") and expected in first, done.stderr
        assert all(line.startswith("hint: ") for line in rest) and "Traceback" not in done.stderr
    assert snapshot_tree(registry) == before


@pytest.mark.process
def test_list_path_prints_every_table_in_the_registrys_shape(passage_vectors: Any, tmp_path: Path) -> None:
    db = tmp_path / "two"
    write_lance_table(db, "alpha", tuple(PASSAGES), tuple(PASSAGES.values()), passage_vectors)
    write_lancedb_registry_table(db, "beta", passage_vectors, model="all-MiniLM-L6-v2")
    registry = write_registry(tmp_path / "registry", [cosh_entry("alpha", db)])

    by_path = cli("list", "--path", str(db), "--json")
    by_registry = cli("list", "--registry", str(registry), "--json")
    assert by_path.returncode == by_registry.returncode == 0, by_path.stderr
    rows, (registered,) = json.loads(by_path.stdout), json.loads(by_registry.stdout)
    assert [set(row) for row in rows] == [set(registered)] * 2
    assert [(r["table"], r["rows"], r["dimension"], r["active"]) for r in rows] == [
        ("alpha", 12, 384, False),
        ("beta", 12, 384, False),
    ]
    assert rows[0]["health"] == registered["health"] and not rows[1]["problems"]
    text = cli("list", "--path", str(db))
    assert "beta: All-MiniLM-L6-v2 (384d), from the table's metadata" in text.stdout


@pytest.mark.process
def test_list_path_exits_1_and_names_a_table_that_cannot_be_searched(
    passage_vectors: Any, tmp_path: Path
) -> None:
    import numpy as np

    db = tmp_path / "mixed"
    write_lance_table(db, "alpha", tuple(PASSAGES), tuple(PASSAGES.values()), passage_vectors)
    odd = np.random.default_rng(7).random((len(PASSAGES), 100), dtype=np.float32)  # no model is 100-d
    write_lance_table(db, "odd", tuple(PASSAGES), tuple(PASSAGES.values()), odd)

    done = cli("list", "--path", str(db), "--json")
    assert done.returncode == 1
    rows = {row["table"]: row for row in json.loads(done.stdout)}  # every table is still listed
    assert not rows["alpha"]["problems"] and rows["odd"]["problems"]
    assert f"error: 1 table in {db} cannot be searched: odd (" in done.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("search", "--db", "a", "--path", "/x", "q"), "--db and --path were both given"),
        (("search", "q"), "no database given"),
        (("search", "--db", "a", "--table", "t", "q"), "--table only apply to a folder given with --path"),
        (("search", "--path", "/x", "--registry", "/r", "q"), "--registry has no use with --path"),
        (("list", "--storage-option", "a=b"), "--storage-option only apply to a folder given with --path"),
        (("search", "--path", "s3://b/k", "--storage-option", "novalue", "q"), "is not KEY=VALUE"),
    ],
)
def test_folder_options_that_cannot_be_honoured_are_refused(
    argv: tuple[str, ...], message: str, capsys: Any
) -> None:
    assert main(list(argv)) == 1
    assert message in capsys.readouterr().err
