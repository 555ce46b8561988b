"""The agent log's files: records read back as written, cut lines skipped with a note, rotation within the
bound, several writers at once, and the switches that turn recording off."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from recall_gui.core.agent_log.agent_log import LOCK_FILE, LOG_FILE, OLDER_FILE, LogFiles, select
from recall_gui.core.agent_log.call_log import SWITCH_ENV, CallLog, LogSwitch, switch_from_env
from recall_gui.core.agent_log.call_record import CallRecord, now_iso, parse_since
from recall_gui.core.base.app_settings import AppSettings, AppSettingsError, SettingsStore
from recall_gui.core.base.errors import InvalidInputError

ROOT = Path(__file__).resolve().parents[2]


def record(
    number: int, *, db: str = "notes", error: str | None = None, time: str | None = None
) -> CallRecord:
    return CallRecord(
        time=time or now_iso(),
        client="claude-code",
        client_version="1.2.3",
        tool="recall_search",
        arguments={"db_name": db, "query": f"question {number}", "limit": 3},
        result_ids=() if error else (f"a{number}", f"b{number}", f"c{number}"),
        error=error,
        embed_ms=None if error else 1.25,
        search_ms=None if error else 0.5,
        table_version=None if error else 4,
    )


def on_switch(tmp_path: Path) -> LogSwitch:
    return LogSwitch(SettingsStore(tmp_path / "config"))


def numbers(records: list[CallRecord] | tuple[CallRecord, ...]) -> list[int]:
    return [int(str(r.query).split()[1]) for r in records]


# --- records ------------------------------------------------------------------------------------------


def test_a_record_reads_back_as_written_with_every_field(tmp_path: Path) -> None:
    files = LogFiles(tmp_path)
    written = [record(1), record(2, error="Database 'x' not found. Active databases: notes")]
    odd = CallRecord(now_iso(), None, None, "recall_search", None)  # a call without arguments or client
    for item in [*written, odd]:
        files.append(item.to_line(), 1_000_000)
    read = files.read()
    assert read.notes == ()
    assert read.records == (*written, odd)
    line = json.loads(files.current.read_text(encoding="utf-8").splitlines()[0])
    assert set(line) == {
        "time",
        "client",
        "client_version",
        "tool",
        "arguments",
        "result_ids",
        "error",
        "embed_ms",
        "search_ms",
        "table_version",
    }
    assert read.records[0].when.tzinfo is not None  # ISO 8601 with the UTC offset
    assert (read.records[1].db_name, read.records[1].query) == ("notes", "question 2")


def test_reading_a_log_that_does_not_exist_creates_nothing(tmp_path: Path) -> None:
    assert LogFiles(tmp_path / "nowhere").read().records == ()
    assert not (tmp_path / "nowhere").exists()


def test_the_log_is_private_to_the_user(tmp_path: Path) -> None:
    files = LogFiles(tmp_path)
    files.append(record(1).to_line(), 1_000_000)
    assert files.current.stat().st_mode & 0o077 == 0


def test_a_query_that_is_not_unicode_is_kept_escaped(tmp_path: Path) -> None:
    files = LogFiles(tmp_path)
    odd = CallRecord(now_iso(), "c", "1", "recall_search", {"db_name": "notes", "query": "bad \ud800 text"})
    files.append(odd.to_line(), 1_000_000)
    assert files.read().records == (odd,)


def test_a_partially_written_last_line_is_skipped_with_a_note(tmp_path: Path) -> None:
    files = LogFiles(tmp_path)
    for n in range(3):
        files.append(record(n).to_line(), 1_000_000)
    whole = record(3).to_line()
    with files.current.open("ab") as handle:
        handle.write(whole[: len(whole) // 2])  # a crash in the middle of the write
    read = files.read()
    assert numbers(read.records) == [0, 1, 2]
    assert read.notes == ("agent-log.jsonl: the last line is incomplete (a write cut short): skipped",)

    # The next record starts on a line of its own: it is read, the cut one stays skipped.
    files.append(record(4).to_line(), 1_000_000)
    read = files.read()
    assert numbers(read.records) == [0, 1, 2, 4]
    assert read.notes == ("agent-log.jsonl: line 4 is not a call record: skipped",)


def test_lines_that_are_not_records_are_named_and_the_rest_is_read(tmp_path: Path) -> None:
    files = LogFiles(tmp_path)
    files.append(record(0).to_line(), 1_000_000)
    with files.current.open("ab") as handle:
        handle.write(b'{"no": "time"}\n[1, 2]\n\xff\xfe\n')
    files.append(record(1).to_line(), 1_000_000)
    read = files.read()
    assert numbers(read.records) == [0, 1]
    assert [note.split(": ")[1] for note in read.notes] == [
        f"line {n} is not a call record" for n in (2, 3, 4)
    ]


# --- rotation -------------------------------------------------------------------------------------------


def test_rotation_keeps_the_newest_records_within_the_bound(tmp_path: Path) -> None:
    files = LogFiles(tmp_path)
    bound = 8192
    line_size = len(record(100).to_line())
    for n in range(100, 400):
        files.append(record(n).to_line(), bound)
        assert (
            files.current.stat().st_size + (files.older.stat().st_size if files.older.exists() else 0)
            <= bound
        )
    read = files.read()
    kept = numbers(read.records)
    assert read.notes == ()
    assert kept == list(range(400 - len(kept), 400))  # the newest, in order, none missing
    assert len(kept) * line_size > bound // 2  # and more than one file's worth
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "agent-log.1.jsonl",
        "agent-log.jsonl",
        "agent-log.lock",
    ]


def test_a_record_too_long_for_the_bound_is_shortened_and_marked(tmp_path: Path) -> None:
    files = LogFiles(tmp_path)
    bound = 16384
    log = CallLog(files, on_switch(tmp_path))
    SettingsStore(tmp_path / "config").save(AppSettings(agent_log_max_bytes=bound))
    long = CallRecord(
        now_iso(),
        "c",
        "1",
        "recall_search",
        {"db_name": "notes", "query": "q" * 50_000, "limit": 5000},
        result_ids=tuple(f"id-{n}" for n in range(5000)),
    )
    assert log.write(long)
    (kept,) = files.read().records
    assert kept.shortened and kept.query == "q" * 2000 and len(kept.result_ids) == 200
    assert kept.result_ids == long.result_ids[:200]
    assert files.current.stat().st_size <= bound // 2


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from recall_gui.core.agent_log.agent_log import LogFiles
    from recall_gui.core.agent_log.call_record import CallRecord
    files, writer, count, bound = LogFiles(Path(sys.argv[1])), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    for n in range(count):
        item = CallRecord("2025-06-01T12:00:00+00:00", writer, "1", "recall_search",
                          {"db_name": "notes", "query": f"{writer} {n}"}, (f"{writer}-{n}",))
        files.append(item.to_line(), bound)
    """
)


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.parametrize("bound", [4 * 1024 * 1024, 65536], ids=["no-rotation", "rotating"])
def test_several_servers_appending_at_once_leave_whole_lines_in_order(tmp_path: Path, bound: int) -> None:
    count, writers = 400, ["w0", "w1", "w2", "w3"]
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    running = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name, str(count), str(bound)], env=env)
        for name in writers
    ]
    assert [process.wait(120) for process in running] == [0] * len(writers)
    files = LogFiles(tmp_path)
    read = files.read()
    assert read.notes == ()
    sizes = sum(path.stat().st_size for path in (files.current, files.older) if path.exists())
    assert sizes <= bound + len(writers) * 200  # each writer may land one line in a file just rotated
    for name in writers:
        mine = [int(str(r.query).split()[1]) for r in read.records if r.client == name]
        # Each writer's newest records survive, in its order, with none missing in between.
        assert mine == list(range(count - len(mine), count))
    if bound > sizes * 2:
        assert len(read.records) == count * len(writers)  # nothing rotated: nothing lost


# --- switching it off ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "on"), [(None, True), ("on", True), ("1", True), ("off", False), ("OFF", False), ("0", False)]
)
def test_the_environment_switch(value: str | None, on: bool) -> None:
    assert switch_from_env(value) is on


def test_an_unknown_environment_value_is_refused_and_means_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(AppSettingsError, match="neither on nor off"):
        switch_from_env("sometimes")
    with caplog.at_level("WARNING"):
        switch = LogSwitch.from_environment(SettingsStore(tmp_path), {SWITCH_ENV: "sometimes"})
    assert switch.recording() is None
    assert f"{SWITCH_ENV}='sometimes' is neither on nor off" in caplog.text


def test_with_the_environment_off_nothing_is_written(tmp_path: Path) -> None:
    files = LogFiles(tmp_path / "log")
    log = CallLog(files, LogSwitch.from_environment(SettingsStore(tmp_path / "config"), {SWITCH_ENV: "off"}))
    log.submit(record(1))
    log.close()
    assert not (tmp_path / "log").exists()
    assert "RECALL_GUI_AGENT_LOG is off" in log.describe()


def test_the_setting_switches_recording_off_and_on_while_running(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "config")
    files = LogFiles(tmp_path / "log")
    log = CallLog(files, LogSwitch(store))
    assert log.write(record(1))
    store.save(AppSettings(agent_log=False))
    assert not log.write(record(2))
    assert "switched off" in log.describe()
    store.save(AppSettings(agent_log=True))
    assert log.write(record(3))
    assert numbers(files.read().records) == [1, 3]


def test_a_broken_settings_file_means_off_and_is_reported_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SettingsStore(tmp_path / "config")
    store.directory.mkdir()
    store.path.write_text('{"agent_log": "yes"}', encoding="utf-8")
    log = CallLog(LogFiles(tmp_path / "log"), LogSwitch(store))
    with caplog.at_level("WARNING"):
        assert not log.write(record(1))
        assert not log.write(record(2))
    assert caplog.text.count('"agent_log" must be true or false') == 1
    assert not (tmp_path / "log").exists()


def test_a_log_that_cannot_be_written_is_reported_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the log's folder should be", encoding="utf-8")
    log = CallLog(LogFiles(blocker), on_switch(tmp_path))
    with caplog.at_level(logging.WARNING):
        log.submit(record(1))
        log.close()
    assert "cannot record the call in" in caplog.text


def test_close_writes_what_was_queued(tmp_path: Path) -> None:
    files = LogFiles(tmp_path)
    log = CallLog(files, on_switch(tmp_path))
    for n in range(50):
        log.submit(record(n))
    log.close()
    assert numbers(files.read().records) == list(range(50))
    log.submit(record(99))  # after close: dropped, never raised
    assert len(files.read().records) == 50


# --- settings -------------------------------------------------------------------------------------------


def test_settings_round_trip_and_keep_unknown_keys(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    assert store.load() == AppSettings()
    tmp_path.mkdir(exist_ok=True)
    store.path.write_text('{"future": 1}', encoding="utf-8")
    store.save(AppSettings(agent_log=False, agent_log_max_bytes=65536))
    assert store.load() == AppSettings(agent_log=False, agent_log_max_bytes=65536)
    assert json.loads(store.path.read_text(encoding="utf-8"))["future"] == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "is not valid JSON"),
        ("[]", "does not hold a JSON object"),
        ('{"agent_log_max_bytes": 10}', '"agent_log_max_bytes" must be a whole number of bytes'),
        ('{"agent_log_max_bytes": true}', '"agent_log_max_bytes" must be a whole number of bytes'),
    ],
)
def test_bad_settings_are_refused_with_the_reason(tmp_path: Path, text: str, message: str) -> None:
    store = SettingsStore(tmp_path)
    store.path.write_text(text, encoding="utf-8")
    with pytest.raises(AppSettingsError, match=message) as caught:
        store.load()
    assert caught.value.hint and str(store.path) in caught.value.hint


# --- selecting ------------------------------------------------------------------------------------------


def test_select_by_database_and_time() -> None:
    records = [
        record(1, db="notes", time="2025-06-01T10:00:00+00:00"),
        record(2, db="archive", time="2025-06-01T11:00:00+00:00"),
        record(3, db="notes", time="2025-06-01T12:00:00+02:00"),  # 10:00 UTC
        record(4, db="notes", time="2025-06-02T09:00:00+00:00"),
    ]
    assert numbers(select(records, db_name="notes")) == [1, 3, 4]
    assert numbers(select(records, since=parse_since("2025-06-01T10:30:00Z"))) == [2, 4]
    assert numbers(select(records, db_name="notes", since=parse_since("2025-06-02"))) == [4]


@pytest.mark.parametrize("text", ["yesterday", "2025-13-01", "", "01/06/2025"])
def test_a_bad_since_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_since(text)
    assert "\n" not in caught.value.message and "is not an ISO 8601 date or time" in caught.value.message


@pytest.mark.parametrize("depth", [900, 100_000])
def test_a_deeply_nested_line_is_skipped_with_a_note_and_log_commands_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    from recall_gui.cli import main

    files = LogFiles(tmp_path)
    files.append(record(1).to_line(), 10**6)
    deep = {**record(2).to_dict(), "arguments": {"query": "deep", "x": json.loads("[" * 900 + "]" * 900)}}
    line = json.dumps(deep) if depth == 900 else '{"time": ' + "[" * depth + "]" * depth + "}"
    files.append(line.encode() + b"\n", 10**6)
    files.append(record(3).to_line(), 10**6)
    monkeypatch.setenv("RECALL_GUI_AGENT_LOG_DIR", str(tmp_path))
    for args in (["log"], ["log", "--json"]):
        assert main(args) == 0
        out, err = capsys.readouterr()
        assert "Traceback" not in err
        note = "agent-log.jsonl: line 2 is nested too deeply to read (more than 64 levels in its arguments)"
        assert f"{note}: skipped" in err
        assert "question 1" in out and "question 3" in out and "deep" not in out


@pytest.mark.parametrize("link", [LOG_FILE, OLDER_FILE, LOCK_FILE])
def test_a_log_file_that_is_a_link_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], link: str
) -> None:
    from recall_gui.cli import main

    log_dir = tmp_path / "log"
    log_dir.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"the user's own file\n")
    (log_dir / link).symlink_to(victim)
    files = LogFiles(log_dir)
    line = record(1).to_line()
    refused = f"{log_dir / link} is a symbolic link; the agent log never writes or reads through one"
    if link == OLDER_FILE:  # a rotation renames the current file over the link, never writing through it
        files.append(line, 10**6)
        files.append(record(2).to_line(), 2 * len(line) + 2)
        assert not (log_dir / OLDER_FILE).is_symlink()
    elif link == LOG_FILE:
        with pytest.raises(OSError, match=re.escape(refused)):
            files.append(line, 10**6)
    else:  # the lock is taken to rotate: a bound of one line makes the second append rotate
        files.append(line, 10**6)
        with pytest.raises(OSError, match=re.escape(refused)):
            files.append(record(2).to_line(), len(line) + 2)
    assert victim.read_bytes() == b"the user's own file\n"
    monkeypatch.setenv("RECALL_GUI_AGENT_LOG_DIR", str(log_dir))
    assert main(["log"]) == 0
    out, err = capsys.readouterr()
    assert "the user's own file" not in out + err
    if link == LOG_FILE:
        assert f"note: {refused}" in err


class CountingStdout:
    """Standard output that counts the bytes printed and keeps none."""

    def __init__(self) -> None:
        self.buffer = self
        self.count = 0

    def write(self, data: bytes) -> int:
        self.count += len(data)
        return len(data)

    def flush(self) -> None:
        pass


@pytest.mark.slow
def test_a_large_log_is_read_as_a_stream_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tracemalloc

    from recall_gui.cli import main

    count = 20_000
    long_records = (
        CallRecord(
            **{**record(n).__dict__, "arguments": {"db_name": "notes", "query": f"question {n} " * 100}}
        )
        for n in range(count)
    )
    log = tmp_path / LOG_FILE
    log.write_bytes(b"".join(r.to_line() for r in long_records))
    size = log.stat().st_size
    assert size > 25_000_000
    files = LogFiles(tmp_path)
    notes: list[str] = []
    reading = files.records(notes)
    assert iter(reading) is reading  # an iterator: nothing is read before it is asked for
    tracemalloc.start()
    try:
        assert sum(1 for _ in reading) == count
        _, peak = tracemalloc.get_traced_memory()
        monkeypatch.setenv("RECALL_GUI_AGENT_LOG_DIR", str(tmp_path))
        stdout = CountingStdout()
        monkeypatch.setattr("sys.stdout", stdout)
        tracemalloc.reset_peak()
        assert main(["log", "--json"]) == 0
        _, cli_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert notes == []
    assert stdout.count == size  # every record printed as stored
    assert peak < size / 10
    assert cli_peak < size / 4


def test_the_newest_records_within_a_bound_are_kept_and_the_older_counted(tmp_path: Path) -> None:
    files = LogFiles(tmp_path)
    lines = [record(n).to_line() for n in range(10)]
    (tmp_path / LOG_FILE).write_bytes(b"".join(lines))
    contents = files.newest(sum(len(line) for line in lines[-3:]))
    assert numbers(contents.records) == [7, 8, 9]
    assert contents.dropped == 7
    assert files.newest(10**6).dropped == 0


def test_the_windows_own_calls_are_not_counted_as_agents_by_coverage_or_hubs() -> None:
    from recall_gui.core.agent_log.agent_review import returned_ids
    from recall_gui.core.reach.hubs import hubs_from_log

    def call(client: str, ids: tuple[str, ...]) -> CallRecord:
        arguments = {"db_name": "notes", "query": "q", "limit": 5}
        return CallRecord("2026-01-01T00:00:00+00:00", client, "1.0", "recall_search", arguments, ids)

    records = [call("claude-code", ("a", "b")), call("recall-gui agent view", ("c",)), call("cursor", ("a",))]
    assert [record.from_window for record in records] == [False, True, False]
    assert returned_ids(records, "notes") == ({"a", "b"}, 2)
    report = hubs_from_log(records, "notes")
    assert report.queries == 2 and {entry.id for entry in report.returned} == {"a", "b"}
