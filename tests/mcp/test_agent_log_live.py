"""The agent log written by the real `recall-gui mcp` under the SDK's real client, and read back by
`recall-gui log`.

One server records a sequence of good and failing calls; servers with recording switched off (by the
environment, by the window's setting) get the same calls and must answer byte for byte the same and write
nothing. Each server has a log folder of its own, so the log holds exactly the calls of its test.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation

from recall_gui.core.agent_log.agent_log import LogFiles
from recall_gui.core.agent_log.call_record import CallRecord
from recall_gui.core.base.app_settings import AppSettings, SettingsStore
from tests.mcp.live import (
    SharedKnowledgeBase,
    build_shared_kb,
    live_session,
    run_cli,
    server_parameters,
    wire,
)

pytestmark = [pytest.mark.slow, pytest.mark.process]

#: Good and failing calls, in the order they are made: (tool, arguments).
CALLS: tuple[tuple[str, dict[str, Any] | None], ...] = (
    ("recall_search", {"db_name": "notes", "query": "capital of France", "limit": 2}),
    ("recall_search", {"db_name": "nope", "query": "anything"}),
    ("recall_search", {"db_name": "notes"}),
    ("recall_search", None),
    ("recall_write", {"db_name": "notes", "query": "x"}),
    ("recall_search", {"db_name": "notes", "query": "tides and the Moon 🚀", "limit": 3, "extra": [1]}),
    ("recall_search", {"db_name": "notes", "query": "capital of France", "limit": 4}),
)


@dataclass(frozen=True)
class Outcome:
    """What the client received for one call: the result in wire form, or the protocol error."""

    result: dict[str, Any] | None
    protocol_error: str | None

    @property
    def text(self) -> str:
        assert self.result is not None
        (block,) = self.result["content"]
        return str(block["text"])

    @property
    def is_error(self) -> bool:
        return self.result is None or bool(self.result.get("isError"))


@dataclass(frozen=True)
class Run:
    env: dict[str, str]
    log_dir: Path
    outcomes: tuple[Outcome, ...]

    def records(self) -> tuple[CallRecord, ...]:
        read = LogFiles(self.log_dir).read()
        assert read.notes == ()
        return read.records


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory, passage_vectors: Any) -> SharedKnowledgeBase:
    return build_shared_kb(tmp_path_factory.mktemp("agent-log-kb"), passage_vectors)


def call_all(kb: SharedKnowledgeBase, root: Path, extra_env: dict[str, str]) -> Run:
    """Spawn a server with its own log folder (and config dir), make :data:`CALLS`, stop it."""
    log_dir = root / "agent-log"
    env = kb.env | {"RECALL_GUI_AGENT_LOG_DIR": str(log_dir)} | extra_env
    outcomes: list[Outcome] = []

    async def session() -> None:
        async with live_session(server_parameters(kb.registry_dir, env), root / "server.log") as live:
            for name, arguments in CALLS:
                try:
                    result = await live.session.call_tool(name, arguments)
                except MCPError as error:
                    outcomes.append(Outcome(None, error.message))
                else:
                    outcomes.append(Outcome(wire(result), None))

    anyio.run(session)
    return Run(env, log_dir, tuple(outcomes))


@pytest.fixture(scope="module")
def recorded(kb: SharedKnowledgeBase, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return call_all(kb, tmp_path_factory.mktemp("recorded"), {})


def table_version(kb: SharedKnowledgeBase, table: str) -> int:
    import lancedb

    return int(lancedb.connect(str(kb.db_dir)).open_table(table).version)


# --- what is recorded -----------------------------------------------------------------------------------


def test_the_log_holds_exactly_the_calls_made_in_order(recorded: Run, kb: SharedKnowledgeBase) -> None:
    records = recorded.records()
    assert [(r.tool, r.arguments) for r in records] == [(name, arguments) for name, arguments in CALLS]
    # The SDK's client names itself "mcp" at initialize unless told otherwise.
    assert {(r.client, r.client_version) for r in records} == {("mcp", "0.1.0")}
    times = [r.when for r in records]
    assert times == sorted(times) and all(t.tzinfo is not None for t in times)
    version = table_version(kb, "notes")
    for record, outcome in zip(records, recorded.outcomes, strict=True):
        if outcome.protocol_error is not None:
            assert (
                record.error
                == outcome.protocol_error
                == "Unknown tool: recall_write (this server has recall_search)"
            )
            assert record.result_ids == ()
        elif outcome.is_error:
            assert record.error == outcome.text  # the message the agent got
            assert (record.result_ids, record.embed_ms, record.table_version) == ((), None, None)
        else:
            payload = json.loads(outcome.text)
            assert record.error is None
            assert record.result_ids == tuple(hit["id"] for hit in payload["results"])  # in order
            assert record.embed_ms is not None and record.embed_ms > 0
            assert record.search_ms is not None and record.search_ms > 0
            assert record.table_version == version
    assert [r.error for r in records[1:4]] == [
        "Database 'nope' not found. Active databases: notes",
        "missing 'query'",
        "missing 'db_name'",
    ]
    assert records[0].result_ids == ("paris", "berlin")


def test_the_log_file_holds_one_json_object_per_line(recorded: Run) -> None:
    lines = (recorded.log_dir / "agent-log.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(CALLS)
    assert [json.loads(line)["arguments"] for line in lines] == [arguments for _name, arguments in CALLS]
    assert "🚀" in lines[5]  # the user's text as sent, readable


# --- switched off ------------------------------------------------------------------------------------------


def assert_same_payloads(run: Run, recorded: Run) -> None:
    """Byte for byte what the recording server sent (the call's JSON text and the whole result)."""
    assert [o.protocol_error for o in run.outcomes] == [o.protocol_error for o in recorded.outcomes]
    assert [o.result for o in run.outcomes] == [o.result for o in recorded.outcomes]
    assert [o.text for o in run.outcomes if o.result] == [o.text for o in recorded.outcomes if o.result]


def test_with_the_environment_off_nothing_is_written_and_payloads_are_the_same(
    kb: SharedKnowledgeBase, recorded: Run, tmp_path: Path
) -> None:
    run = call_all(kb, tmp_path, {"RECALL_GUI_AGENT_LOG": "off"})
    assert_same_payloads(run, recorded)
    assert not run.log_dir.exists()
    assert (
        "not recording agents' calls (RECALL_GUI_AGENT_LOG is off)" in (tmp_path / "server.log").read_text()
    )


def test_with_the_setting_off_nothing_is_written(
    kb: SharedKnowledgeBase, recorded: Run, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    SettingsStore(config).save(AppSettings(agent_log=False))
    run = call_all(kb, tmp_path, {"RECALL_GUI_CONFIG_DIR": str(config)})
    assert_same_payloads(run, recorded)
    assert not run.log_dir.exists()


def test_a_2026_client_is_recorded_under_the_name_it_gives(kb: SharedKnowledgeBase, tmp_path: Path) -> None:
    log_dir = tmp_path / "agent-log"
    env = kb.env | {"RECALL_GUI_AGENT_LOG_DIR": str(log_dir)}
    arguments = {"db_name": "notes", "query": "espresso", "limit": 1}

    async def session() -> str:
        with (tmp_path / "server.log").open("w", encoding="utf-8") as log:
            client_info = Implementation(name="agent-2026", version="9.1")
            async with Client(
                stdio_client(server_parameters(kb.registry_dir, env), errlog=log),
                cache=None,
                client_info=client_info,
            ) as client:
                assert client.protocol_version == "2026-07-28"
                result = await client.call_tool("recall_search", arguments)
                return str(wire(result)["content"][0]["text"])

    text = anyio.run(session)
    (record,) = LogFiles(log_dir).read().records
    assert (record.client, record.client_version, record.arguments) == ("agent-2026", "9.1", arguments)
    assert record.result_ids == tuple(hit["id"] for hit in json.loads(text)["results"]) == ("coffee",)


# --- recall-gui log --------------------------------------------------------------------------------------


def log_cli(run: Run, *args: str) -> Any:
    return run_cli(run.env, "log", *args)


def test_log_json_prints_every_record_as_stored(recorded: Run) -> None:
    done = log_cli(recorded, "--json")
    assert done.returncode == 0, done.stderr
    stored = (recorded.log_dir / "agent-log.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        json.loads(line) for line in stored.splitlines()
    ]


def test_log_filters_by_database_and_time(recorded: Run) -> None:
    done = log_cli(recorded, "--db", "notes")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    notes_calls = [args for _name, args in CALLS if args and args.get("db_name") == "notes"]
    assert len(lines) == len(notes_calls)
    assert 'mcp 0.1.0  notes  "capital of France"  2 results' in lines[0]
    assert "error: missing 'query'" in lines[1]
    first = recorded.records()[3].time
    later = log_cli(recorded, "--since", first, "--json")
    assert [json.loads(line)["arguments"] for line in later.stdout.splitlines()] == [a for _n, a in CALLS[3:]]
    future = log_cli(recorded, "--since", "2999-01-01")
    assert (future.returncode, future.stdout) == (0, "")
    assert "no calls match" in future.stderr


def test_a_bad_since_is_refused_with_a_one_line_reason(recorded: Run) -> None:
    done = log_cli(recorded, "--since", "last tuesday")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines()[0] == "error: --since 'last tuesday' is not an ISO 8601 date or time"


def expected_coverage(records: Sequence[CallRecord], ids: Sequence[str]) -> tuple[set[str], list[str]]:
    returned = {i for r in records if r.error is None and r.db_name == "notes" for i in r.result_ids}
    return returned, [i for i in ids if i not in returned]


def test_coverage_counts_match_the_calls_made(recorded: Run, kb: SharedKnowledgeBase) -> None:
    from tests.kbtools import PASSAGES

    done = log_cli(recorded, "--coverage", "--db", "notes", "--registry", str(kb.registry_dir), "--json")
    assert done.returncode == 0, done.stderr
    returned, never = expected_coverage(recorded.records(), list(PASSAGES))
    # paris, berlin; tides and two more; paris, berlin and two more: the union of what the agent got.
    payload_ids = {
        hit["id"]
        for o in recorded.outcomes
        if o.result and not o.is_error
        for hit in json.loads(o.text)["results"]
    }
    assert returned == payload_ids
    assert json.loads(done.stdout) == {
        "db_name": "notes",
        "entries": len(PASSAGES),
        "returned": len(returned),
        "never_returned": never,
    }
    text = log_cli(recorded, "--coverage", "--db", "notes", "--registry", str(kb.registry_dir))
    assert text.stdout.splitlines()[0] == (
        f"notes: {len(returned)} of {len(PASSAGES)} entries returned at least once by 3 calls; "
        f"{len(never)} never returned:"
    )
    assert text.stdout.splitlines()[1:] == never


def test_coverage_needs_a_database_of_the_registry(recorded: Run, kb: SharedKnowledgeBase) -> None:
    missing = log_cli(recorded, "--coverage")
    assert missing.returncode == 1 and "error: --coverage needs --db NAME" in missing.stderr
    unknown = log_cli(recorded, "--coverage", "--db", "nope", "--registry", str(kb.registry_dir))
    assert unknown.returncode == 1
    assert "Database 'nope' is not in the registry" in unknown.stderr and "notes, archive" in unknown.stderr
    stray = log_cli(recorded, "--registry", str(kb.registry_dir))
    assert stray.returncode == 1 and "--registry is used only with --coverage" in stray.stderr
