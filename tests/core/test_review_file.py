"""The review file: records written by hand read back, the latest verdict per content standing, Undo,
damaged lines reported and kept, a file name made safe, and two processes marking at once losing nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from recall_gui.core.review.ledger import Ledger
from recall_gui.core.review.record_table import RecordTable, read_json_records
from recall_gui.core.review.records import ReviewRecord
from recall_gui.core.review.review_file import (
    WHO_ENV,
    ReviewFile,
    default_review_path,
    file_name_for,
    reviewer,
)
from tests.reviewtools import record_line, sha

ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_hand_written_records_read_back_field_by_field(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", record_line("alpha", "wrong", record="r1", entry_id="a", version=3))
    contents = ReviewFile(path).read()
    assert contents.damaged == ()
    (record,) = contents.records
    assert (record.entry_id, record.verdict, record.who, record.table_version) == ("a", "wrong", "alice", 3)
    assert record.content_sha256 == sha("alpha") and record.kind == "verdict"
    # Written back, the line holds the same fields.
    assert json.loads(record.to_line()) == json.loads(path.read_text(encoding="utf-8"))


def test_the_latest_verdict_on_a_content_stands_and_undo_brings_back_the_one_before(tmp_path: Path) -> None:
    path = write(
        tmp_path / "r.jsonl",
        record_line("alpha", "correct", record="r1", when="2025-06-01T10:00:00Z"),
        # Written later in the file but earlier in time: it does not override r1.
        record_line("alpha", "skip", record="r0", when="2025-05-01T10:00:00Z"),
        record_line("alpha", "wrong", record="r2", when="2025-06-02T10:00:00+02:00"),
        record_line("beta", "outdated", record="r3"),
        record_line("alpha", None, record="u1", when="2025-06-03T10:00:00Z", undoes="r2"),
    )
    ledger = Ledger(ReviewFile(path).read().table)
    assert ledger.verdict(sha("alpha")) == "correct"  # r2 undone: r1 stands again
    assert ledger.verdict(sha("beta")) == "outdated"
    assert ledger.verdict(sha("gamma")) is None
    assert [record.record for record in ledger.history(sha("alpha"))] == ["r0", "r1", "r2"]


def test_two_reviewers_who_disagree_are_a_conflict_and_agreeing_ones_are_not() -> None:
    lines = [
        record_line("alpha", "wrong", record="a1", who="alice"),
        record_line("alpha", "correct", record="b1", who="bob", when="2025-06-02T10:00:00Z"),
        record_line("beta", "wrong", record="a2", who="alice"),
        record_line("beta", "wrong", record="b2", who="bob"),
        # Bob changed his mind on gamma: his latest agrees with Alice's.
        record_line("gamma", "correct", record="b3", who="bob"),
        record_line("gamma", "outdated", record="b4", who="bob", when="2025-06-02T10:00:00Z"),
        record_line("gamma", "outdated", record="a3", who="alice"),
    ]
    ledger = Ledger(RecordTable.of([ReviewRecord.from_dict(json.loads(line)) for line in lines]))
    (conflict,) = ledger.conflicts()
    assert conflict.content_sha256 == sha("alpha")
    assert [(record.who, record.verdict) for record in conflict.verdicts] == [
        ("alice", "wrong"),
        ("bob", "correct"),
    ]


@pytest.mark.parametrize(
    "line,reason",
    [
        ("not json at all\n", "not JSON"),
        ("[1, 2]\n", "not a JSON object"),
        ('{"format": 1}\n', '"kind" is neither'),
        ('{"format": 7, "kind": "verdict"}\n', "written in format 7 by a newer recall-gui"),
    ],
)
def test_a_damaged_line_is_reported_with_its_number_and_the_rest_is_read(
    tmp_path: Path, line: str, reason: str
) -> None:
    good = record_line("alpha", "wrong", record="r1")
    path = write(tmp_path / "r.jsonl", good, line, record_line("beta", "correct", record="r2"))
    before = path.read_bytes()
    contents = ReviewFile(path).read()
    assert [record.record for record in contents.records] == ["r1", "r2"]
    (damaged,) = contents.damaged
    assert damaged.number == 2 and reason in damaged.reason and str(path) in damaged.text()
    assert path.read_bytes() == before  # kept, never rewritten


def test_bad_fields_are_named() -> None:
    data = json.loads(record_line("alpha", "wrong", record="r1"))
    for field, value, reason in [
        ("verdict", "great", '"verdict" is not one of'),
        ("content_sha256", "ABC", "64 lowercase hex digits"),
        ("when", "2025-06-01T10:00:00", "no UTC offset"),
        ("table_version", "3", "whole number"),
    ]:
        with pytest.raises(ValueError, match=reason):
            ReviewRecord.from_dict({**data, field: value})


def test_a_record_appended_after_a_line_cut_short_stands_on_its_own_line(tmp_path: Path) -> None:
    cut = record_line("alpha", "wrong", record="r1")[:40]  # a crash in the middle of a write
    path = write(tmp_path / "r.jsonl", record_line("beta", "correct", record="r0"), cut)
    first = ReviewFile(path).read()
    assert len(first.damaged) == 1 and "incomplete" in first.damaged[0].reason
    written = ReviewRecord.from_dict(json.loads(record_line("gamma", "outdated", record="r2")))
    ReviewFile(path).append(written)
    text = path.read_text(encoding="utf-8")
    assert text.startswith(record_line("beta", "correct", record="r0") + cut + "\n")  # kept as it was
    again = ReviewFile(path).read()
    assert [record.record for record in again.records] == ["r0", "r2"]
    assert [line.number for line in again.damaged] == [2]


def test_reading_on_from_where_the_last_read_ended_takes_only_new_records(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", record_line("alpha", "wrong", record="r1"))
    first = ReviewFile(path).read()
    with path.open("a", encoding="utf-8") as file:
        file.write("garbage\n" + record_line("beta", "correct", record="r2"))
    later = ReviewFile(path).read(first.end, first.lines)
    assert [record.record for record in later.records] == ["r2"] and not later.from_start
    assert [line.number for line in later.damaged] == [2]


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from recall_gui.core.review.records import ReviewRecord
    from recall_gui.core.review.review_file import ReviewFile
    path, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    file = ReviewFile(path)
    for number in range(count):
        file.append(ReviewRecord(
            record=f"{who}-{number}", kind="verdict", content_sha256=f"{number:064x}", entry_id=str(number),
            verdict="correct", note="n" * 3000, who=who, when="2025-06-01T10:00:00Z", db="notes", uri="",
            table="notes", table_version=1,
        ))
    """
)


def test_two_processes_marking_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "notes.jsonl"
    count = 300
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), who, str(count)], env=env)
        for who in ("alice", "bob")
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    contents = ReviewFile(path).read()
    assert contents.damaged == ()
    ids = [record.record for record in contents.records]
    assert sorted(ids) == sorted(f"{who}-{n}" for who in ("alice", "bob") for n in range(count))
    for who in ("alice", "bob"):  # each writer's records in the order it wrote them
        assert [i for i in ids if i.startswith(who)] == [f"{who}-{n}" for n in range(count)]


def test_a_database_name_becomes_a_safe_file_name_that_no_other_name_shares(tmp_path: Path) -> None:
    assert file_name_for("notes") == "notes.jsonl"
    odd = ["../../etc/passwd", "Notes", "notes/x", "notes_x", "", ".hidden", "ä"]
    names = [file_name_for(name) for name in odd]
    assert len(set(names)) == len(names)
    for name in names:
        assert "/" not in name and not name.startswith(".") and name.endswith(".jsonl")
    assert default_review_path("notes") == Path(os.environ["RECALL_GUI_DATA_DIR"]) / "reviews" / "notes.jsonl"


def test_who_is_the_option_then_the_environment_then_the_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WHO_ENV, "reviewer-from-env")
    assert reviewer("carol") == "carol"
    assert reviewer() == "reviewer-from-env"
    monkeypatch.delenv(WHO_ENV)
    monkeypatch.setenv("LOGNAME", "login-name")
    monkeypatch.setenv("USER", "login-name")
    assert reviewer() == "login-name"


def test_a_file_read_as_columns_and_read_line_by_line_says_the_same(tmp_path: Path) -> None:
    lines = [
        record_line("alpha", "wrong", record="r1", when="2025-06-01T12:00:00+02:00"),
        record_line("beta", "correct", record="r2", when="2025-06-01T10:00:00.5Z", version=None),
        record_line("alpha", "outdated", record="r3", when="2025-06-01T10:30:00Z", entry_id="Grüße 🚀"),
        record_line("beta", None, record="u1", when="2025-06-02T00:00:00Z", undoes="r2"),
        record_line("gamma", "skip", record="r1", when="2025-06-03T00:00:00Z"),  # r1 again: counts once
    ]
    clean = write(tmp_path / "clean.jsonl", *lines)
    assert read_json_records(clean.read_bytes()) is not None  # read as columns
    damaged = write(tmp_path / "damaged.jsonl", *lines, "not a record\n")
    assert read_json_records(damaged.read_bytes()) is None  # read line by line
    fast, slow = ReviewFile(clean).read(), ReviewFile(damaged).read()
    assert fast.records == slow.records and len(slow.damaged) == 1
    assert list(fast.table.instants) == list(slow.table.instants)
    for contents in (fast, slow):
        ledger = Ledger(contents.table)
        # alpha: r1 at 10:00 UTC, r3 at 10:30 UTC stands; beta: its only verdict undone; gamma: r1's id
        # was taken, so the second r1 is not read.
        assert {sha: ledger.verdict(sha) for sha in ledger.standing} == {sha("alpha"): "outdated"}
        assert ledger.standing[sha("alpha")].entry_id == "Grüße 🚀"
