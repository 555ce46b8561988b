"""`recall-gui review`: mark (an id several rows share is refused), status (its JSON against the file read
by hand and the table read by LanceDB; --fail-on for CI), export, merge; the knowledge base untouched."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import lancedb
import pytest

from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.review.reviewing import ReviewPlace
from tests.kbtools import snapshot_tree
from tests.reviewtools import Table, record_line, run, sha, write_table

IDS = ("a", "b", "c", "content", "content", "e")
TEXTS = ("alpha", "beta", "gamma \x1b[31m red", "doc one", "doc two", "epsilon")
VERDICTS = ("correct", "outdated", "wrong", "duplicate", "skip")


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return write_table(tmp_path / "kb", IDS, TEXTS)


def mark(capsys: pytest.CaptureFixture[str], table: Table, *args: str) -> tuple[int, str, str]:
    return run(capsys, "review", "mark", "--registry", str(table.registry_dir), "--db", "notes", *args)


def status(capsys: pytest.CaptureFixture[str], table: Table, *args: str) -> tuple[int, str, str]:
    return run(capsys, "review", "status", "--registry", str(table.registry_dir), "--db", "notes", *args)


def file_counts(path: Path, db_dir: Path) -> dict[str, int]:
    """The oracle: the file's lines read by hand (the latest verdict per content that no undo took back)
    counted over the table's rows as LanceDB returns them."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    undone = {line["undoes"] for line in lines if line["kind"] == "undo"}
    latest: dict[str, tuple[str, str]] = {}
    for line in lines:
        if line["kind"] == "verdict" and line["record"] not in undone:
            held = latest.get(line["content_sha256"])
            if held is None or held[0] <= line["when"]:
                latest[line["content_sha256"]] = (line["when"], line["verdict"])
    rows = lancedb.connect(str(db_dir)).open_table("notes").to_arrow().column("content").to_pylist()
    counts = dict.fromkeys([*VERDICTS, "none"], 0)
    for text in rows:
        counts[latest.get(sha(text), ("", "none"))[1]] += 1
    return counts


def test_status_json_counts_agree_with_the_file(capsys: pytest.CaptureFixture[str], table: Table) -> None:
    before = snapshot_tree(table.db_dir)
    assert mark(capsys, table, "--id", "a", "--verdict", "wrong", "--note", "bad")[0] == 0
    assert mark(capsys, table, "--id", "a", "--verdict", "correct")[0] == 0
    assert mark(capsys, table, "--content-sha256", sha("doc two")[:8], "--verdict", "outdated")[0] == 0
    assert mark(capsys, table, "--id", "e", "--verdict", "skip", "--who", "bob")[0] == 0
    path = Path(json.loads(status(capsys, table, "--json")[1])["file"])
    with path.open("a", encoding="utf-8") as file:  # another tool's lines: a verdict, and one on a gone text
        file.write(record_line("beta", "duplicate", record="hand1", when="2030-01-01T00:00:00Z"))
        file.write(record_line("no longer here", "wrong", record="hand2"))
    code, out, err = status(capsys, table, "--json")
    assert code == 0, err
    data = json.loads(out)
    expected = file_counts(path, table.db_dir)
    assert data["counts"] == {verdict: expected[verdict] for verdict in VERDICTS}
    assert data["not_reviewed"] == expected["none"] == 2
    assert data["counts"] == {"correct": 1, "outdated": 1, "wrong": 0, "duplicate": 1, "skip": 1}
    assert data["changed_since_reviewed"] == 0 and data["verdicts_not_in_table"] == 1
    assert data["rows"] == len(IDS) and data["reviewed"] == 3 and data["damaged_lines"] == []
    assert snapshot_tree(table.db_dir) == before


def test_an_id_several_rows_share_is_refused_naming_their_contents(
    capsys: pytest.CaptureFixture[str], table: Table
) -> None:
    code, out, err = mark(capsys, table, "--id", "content", "--verdict", "wrong")
    assert code == 1 and out == ""
    assert "2 rows of notes have the id 'content', with 2 different contents" in err
    assert f"content·{sha('doc one')[:8]}  {sha('doc one')}" in err and sha("doc two") in err
    code, out, err = mark(capsys, table, "--content-sha256", sha("doc one").upper(), "--verdict", "wrong")
    assert code == 0, err
    assert out.startswith(f"marked content·{sha('doc one')[:8]} wrong in ")
    code, _out, err = mark(capsys, table, "--id", "nothing", "--verdict", "wrong")
    assert code == 1 and "no entry of notes has the id 'nothing'" in err


def test_text_from_the_table_is_escaped_on_the_terminal(
    capsys: pytest.CaptureFixture[str], table: Table
) -> None:
    code, out, _err = mark(capsys, table, "--id", "c", "--verdict", "wrong", "--note", "colour\x1b[0m")
    assert code == 0 and "gamma \\x1b[31m red" in out and "\x1b" not in out
    code, out, _err = status(capsys, table)
    assert code == 0 and "colour\\x1b[0m" in out and "\x1b" not in out


def test_fail_on_wrong_exits_1_until_those_rows_are_gone(
    capsys: pytest.CaptureFixture[str], table: Table
) -> None:
    assert status(capsys, table, "--fail-on", "wrong,outdated")[0] == 0
    mark(capsys, table, "--id", "a", "--verdict", "wrong")
    mark(capsys, table, "--id", "b", "--verdict", "outdated")
    code, _out, err = status(capsys, table, "--fail-on", "wrong")
    assert code == 1 and "the table still holds 1 entry marked wrong" in err
    assert status(capsys, table, "--fail-on", "wrong,outdated")[0] == 1
    table.delete("id = 'a'")  # the test's own copy of a knowledge base, fixed by its owner
    assert status(capsys, table, "--fail-on", "wrong")[0] == 0
    assert status(capsys, table, "--fail-on", "outdated")[0] == 1
    table.delete("id = 'b'")
    assert status(capsys, table, "--fail-on", "wrong,outdated")[0] == 0


def test_status_exits_2_when_it_cannot_tell(
    capsys: pytest.CaptureFixture[str], table: Table, tmp_path: Path
) -> None:
    code, _out, err = run(capsys, "review", "status", "--registry", str(table.registry_dir), "--db", "nope")
    assert code == 2 and "Database 'nope' not found" in err
    code, _out, err = status(capsys, table, "--fail-on", "wrng")
    assert code == 2 and "'wrng' is not a verdict" in err
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("not a record\n", encoding="utf-8")
    code, _out, err = status(capsys, table, "--file", str(damaged), "--fail-on", "wrong")
    assert code == 2 and "line 1 is not a review record" in err and "1 line of" in err
    assert damaged.read_text(encoding="utf-8") == "not a record\n"
    code, _out, err = status(capsys, table, "--file", str(tmp_path / "mistyped.jsonl"), "--fail-on", "wrong")
    assert code == 2 and "mistyped.jsonl does not exist" in err


def test_export_lists_each_standing_verdict_with_its_text(
    capsys: pytest.CaptureFixture[str], table: Table
) -> None:
    mark(capsys, table, "--id", "b", "--verdict", "outdated", "--note", "see v2")
    mark(capsys, table, "--content-sha256", sha("doc one"), "--verdict", "correct")
    base = ("review", "export", "--registry", str(table.registry_dir), "--db", "notes")
    code, out, err = run(capsys, *base, "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(row["id"], row["verdict"], row["content"], row["rows"]) for row in rows] == [
        ("b", "outdated", "beta", "1"),
        ("content", "correct", "doc one", "1"),
    ]
    assert rows[0]["content_sha256"] == sha("beta") and rows[0]["note"] == "see v2"
    code, out, err = run(capsys, *base, "--format", "json")
    assert code == 0 and [item["content"] for item in json.loads(out)] == ["beta", "doc one"]
    written = table.db_dir.parent / "verdicts.json"
    assert run(capsys, *base, "--format", "json", "-o", str(written))[0] == 0
    assert written.read_text(encoding="utf-8") == out
    before = snapshot_tree(table.db_dir)
    code, _out, err = run(capsys, *base, "--format", "csv", "-o", str(table.db_dir / "verdicts.csv"))
    assert code == 1 and "which this app never writes" in err and snapshot_tree(table.db_dir) == before


def test_merging_two_reviewers_keeps_every_verdict_and_lists_conflicts(
    capsys: pytest.CaptureFixture[str], table: Table, tmp_path: Path
) -> None:
    alice, bob, merged = tmp_path / "alice.jsonl", tmp_path / "bob.jsonl", tmp_path / "merged.jsonl"
    for who, path, verdicts in (("alice", alice, ("wrong", "correct")), ("bob", bob, ("correct", "correct"))):
        for entry_id, verdict in zip(("a", "b"), verdicts, strict=True):
            mark(capsys, table, "--id", entry_id, "--verdict", verdict, "--who", who, "--file", str(path))
    shared = record_line("epsilon", "skip", record="both")
    for path in (alice, bob):
        with path.open("a", encoding="utf-8") as file:
            file.write(shared)
    with bob.open("a", encoding="utf-8") as file:
        file.write("a line someone broke\n")
    code, out, err = run(capsys, "review", "merge", str(alice), str(bob), "-o", str(merged))
    assert code == 0, err

    def ids(path: Path) -> list[str]:
        lines = path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line)["record"] for line in lines if line.startswith("{")]

    assert sorted(ids(merged)) == sorted(set(ids(alice)) | set(ids(bob)))
    assert "5 records (1 found in more than one file, written once)" in out
    assert f"{bob}: line 4 is not a review record (not JSON)" in out
    assert merged.read_text(encoding="utf-8").endswith("a line someone broke\n")  # kept, after the records
    assert "1 conflict (the same content, different latest verdicts):" in out
    assert f"a·{sha('alpha')[:8]}: alice wrong" in out and "bob correct" in out
    assert f"b·{sha('beta')[:8]}" not in out  # both said correct
    code, _out, err = run(capsys, "review", "merge", str(alice), str(bob), "-o", str(merged))
    assert code == 1 and "exists: the merged file is written to a new file only" in err


def test_a_folder_registered_as_a_database_is_reviewed_in_that_databases_file(
    capsys: pytest.CaptureFixture[str], table: Table
) -> None:
    mark(capsys, table, "--id", "a", "--verdict", "wrong")
    code, out, err = run(
        capsys,
        "review",
        "status",
        "--registry",
        str(table.registry_dir),
        "--path",
        str(table.db_dir),
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["counts"]["wrong"] == 1 and json.loads(out)["db_name"] == "notes"
    code, _out, err = run(capsys, "review", "status", "--db", "notes", "--table", "notes")
    assert code == 2 and "--table" in err


def test_a_uri_is_kept_with_its_credentials_masked() -> None:
    entry = DatabaseEntry("notes", "s3://AKIA:very-secret@bucket/kb", "", None)  # type: ignore[arg-type]
    assert ReviewPlace.of(entry).uri == "s3://AKIA:***@bucket/kb"


def test_review_files_that_are_no_files_are_refused_at_once(
    capsys: pytest.CaptureFixture[str], table: Table, tmp_path: Path
) -> None:
    """A FIFO (a read would wait for a writer forever) and a device (a read would never end) as a merge
    input or as the review file: refused in one line, naming what it is; nothing written."""
    alice, merged, fifo = tmp_path / "alice.jsonl", tmp_path / "merged.jsonl", tmp_path / "pipe.jsonl"
    mark(capsys, table, "--id", "a", "--verdict", "wrong", "--file", str(alice))
    os.mkfifo(fifo)
    for odd, kind in ((fifo, "a FIFO"), (Path("/dev/zero"), "a character device")):
        code, _out, err = run(capsys, "review", "merge", str(alice), str(odd), "-o", str(merged))
        assert code != 0 and f"the review file {odd} cannot be read (it is {kind}, not a regular file)" in err
        assert not merged.exists()
    code, _out, err = status(capsys, table, "--file", str(fifo))
    assert code != 0 and str(fifo) in err and "FIFO" in err
