"""`recall-gui mcp` fed raw lines on stdin, as a broken or hostile client would send them.

Every request with an id gets exactly one response (JSON-RPC 2.0: -32700 for a line that is no JSON,
-32600 for a message that is no valid request, -32602 for params that cannot be read), notifications get
none, and the server keeps serving afterwards. Nothing here uses the SDK's client: it would refuse to
send most of these lines.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.agent_log.agent_log import LogFiles
from recall_gui.core.agent_log.call_record import CallRecord
from tests.kbtools import cosh_entry
from tests.mcp.live import SharedKnowledgeBase, build_shared_kb, server_env
from tests.providers import SECRET_KEY
from tests.waiting import wait_until

WAIT_S = 60.0
PROTOCOL = "2025-06-18"


class RawServer:
    """The server as a child process: lines in, parsed messages out (collected by a reader thread)."""

    def __init__(self, registry_dir: Path, env: dict[str, str], log_path: Path) -> None:
        self._log = log_path.open("w", encoding="utf-8")
        self.log_path = log_path
        self.process = subprocess.Popen(
            [sys.executable, "-m", "recall_gui", "mcp", "--registry", str(registry_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
        )
        self.received: list[dict[str, Any]] = []
        self.not_json: list[bytes] = []
        self._arrived: queue.Queue[None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._sentinels = 0

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            try:
                self.received.append(json.loads(raw))
            except ValueError:
                self.not_json.append(raw)
            self._arrived.put(None)

    def send(self, line: str | bytes) -> None:
        assert self.process.stdin is not None
        data = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def wait_for(self, found: Callable[[], bool], timeout: float = WAIT_S) -> None:
        deadline = time.monotonic() + timeout
        while not found():
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited ({self.process.returncode}):\n{self.log()}")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no answer within {timeout} s; received {self.received[-3:]}")
            with contextlib.suppress(queue.Empty):
                self._arrived.get(timeout=min(remaining, 0.5))

    def replies_to(self, request_id: Any) -> list[dict[str, Any]]:
        return [m for m in self.received if "id" in m and m["id"] == request_id and "method" not in m]

    def request(self, method: str, params: dict[str, Any] | None = None, request_id: Any = None) -> Any:
        """Send a well-formed request and wait for its one reply."""
        self._sentinels += 1
        request_id = request_id if request_id is not None else f"req-{self._sentinels}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message))
        self.wait_for(lambda: bool(self.replies_to(request_id)))
        return self.replies_to(request_id)[0]

    def settle(self) -> None:
        """Until everything sent before has been read: a ping is answered after the lines before it."""
        self.request("ping")

    def initialize(self) -> None:
        params = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        assert "result" in self.request("initialize", params, request_id="init")
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(WAIT_S)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            self._reader.join(WAIT_S)  # it reads to the end of the output of the exited process
            if self.process.stdout is not None:
                self.process.stdout.close()
            self._log.close()


@pytest.fixture(scope="module")
def shared_kb(tmp_path_factory: pytest.TempPathFactory, passage_vectors: Any) -> SharedKnowledgeBase:
    return build_shared_kb(tmp_path_factory.mktemp("mcp-wire"), passage_vectors)


@pytest.fixture(scope="module")
def server(shared_kb: SharedKnowledgeBase) -> Iterator[RawServer]:
    raw = RawServer(shared_kb.registry_dir, shared_kb.env, shared_kb.root / "wire.log")
    try:
        raw.initialize()
        yield raw
    finally:
        raw.close()


def tool_call(request_id: Any, arguments: str) -> str:
    """A tools/call line with ``arguments`` written as raw JSON text."""
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "recall_search", "arguments": {arguments}}}}}'
    )


#: (line, the id its reply carries, the error code). ``None`` as id: the reply's id is null.
ANSWERED = {
    "truncated JSON": ('{"jsonrpc": "2.0", "id": "t1", "method": "tools/list"', None, -32700),
    "not JSON at all": ("hello server", None, -32700),
    "a byte order mark": ('\ufeff{"jsonrpc": "2.0", "id": "t2", "method": "ping"}', None, -32700),
    "nested too deeply": ("[" * 100_000, None, -32700),
    "a JSON string": ('"tools/list"', None, -32600),
    "an empty batch": ("[]", None, -32600),
    "jsonrpc 1.0": ('{"jsonrpc": "1.0", "id": "v1", "method": "tools/list"}', "v1", -32600),
    "no jsonrpc": ('{"id": "v2", "method": "tools/list"}', "v2", -32600),
    "no method": ('{"jsonrpc": "2.0", "id": "m1"}', "m1", -32600),
    "a method that is no string": ('{"jsonrpc": "2.0", "id": "m2", "method": 5}', "m2", -32600),
    "a float id": ('{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', None, -32600),
    "a whole float id": ('{"jsonrpc": "2.0", "id": 7.0, "method": "tools/list"}', None, -32600),
    "a boolean id": ('{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', None, -32600),
    "an object id": ('{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}', None, -32600),
    "an array id": ('{"jsonrpc": "2.0", "id": [1], "method": "tools/list"}', None, -32600),
    "a null id": ('{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', None, -32600),
    "an id that is not Unicode": ('{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}', None, -32600),
    "params that are a number": (
        '{"jsonrpc": "2.0", "id": "p1", "method": "tools/list", "params": 5}',
        "p1",
        -32602,
    ),
    "params that are an array": (
        '{"jsonrpc": "2.0", "id": "p2", "method": "tools/call", "params": [1]}',
        "p2",
        -32602,
    ),
    "a query that is not Unicode": (
        tool_call('"q1"', '{"db_name": "notes", "query": "a\\ud800b"}'),
        "q1",
        -32602,
    ),
    "a db_name that is not Unicode": (
        tool_call('"q2"', '{"db_name": "no\\udfffs", "query": "x"}'),
        "q2",
        -32602,
    ),
    "a limit of 5000 digits": (
        tool_call('"q3"', '{"db_name": "notes", "query": "x", "limit": ' + "9" * 5000 + "}"),
        "q3",
        -32602,
    ),
    "an id and a limit of 5000 digits": (
        tool_call("9" * 5000, '{"db_name": "notes", "query": "x", "limit": ' + "9" * 5000 + "}"),
        None,
        -32600,
    ),
    "a key that is not Unicode": (
        tool_call('"q4"', '{"db_name": "notes", "query": "x", "\\ud800": 1}'),
        "q4",
        -32602,
    ),
}


@pytest.mark.process
@pytest.mark.parametrize("case", sorted(ANSWERED))
def test_every_request_with_an_id_gets_exactly_one_error_reply(server: RawServer, case: str) -> None:
    line, request_id, code = ANSWERED[case]
    before = len(server.replies_to(None))
    server.send(line)
    server.settle()
    new = server.replies_to(None)[before:] if request_id is None else server.replies_to(request_id)
    assert len(new) == 1, new
    (reply,) = new
    assert reply["jsonrpc"] == "2.0" and reply["error"]["code"] == code
    assert len(reply["error"]["message"]) > 20  # says what is wrong
    assert set(reply) == {"jsonrpc", "id", "error"}


@pytest.mark.process
def test_a_batch_gets_one_error_per_request_and_none_for_its_notifications(server: RawServer) -> None:
    batch = [
        {"jsonrpc": "2.0", "id": "b1", "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "b2", "method": "ping"},
    ]
    server.send(json.dumps(batch))
    server.settle()
    for request_id in ("b1", "b2"):
        (reply,) = server.replies_to(request_id)
        assert reply["error"]["code"] == -32600 and "batch" in reply["error"]["message"]


def test_notifications_get_no_reply_even_when_they_cannot_be_read(server: RawServer) -> None:
    count = len(server.received)
    server.send('{"jsonrpc": "2.0", "method": "notifications/whatever"}')
    server.send('{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 5}')
    server.send('{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"x": "\\ud800"}}')
    server.send("")
    server.settle()
    assert len(server.received) == count + 1  # the ping's reply only


def test_invalid_utf8_bytes_are_read_as_replacement_characters(server: RawServer) -> None:
    line = tool_call('"u1"', '{"db_name": "notes", "query": "caf\xe9 \\u00e9"}').encode("latin-1")
    server.send(line)
    server.wait_for(lambda: bool(server.replies_to("u1")))
    (reply,) = server.replies_to("u1")
    assert not reply["result"].get("isError")
    assert json.loads(reply["result"]["content"][0]["text"])["query"] == "caf\ufffd \u00e9"


def test_a_call_refused_before_the_tool_is_in_the_agent_log(
    server: RawServer, shared_kb: SharedKnowledgeBase
) -> None:
    server.send(tool_call('"logged"', '{"db_name": "notes", "query": "refused \\udc80 here"}'))
    server.send(
        tool_call('"logged-2"', '{"db_name": "notes", "query": "refused", "limit": ' + "9" * 5000 + "}")
    )
    server.wait_for(lambda: bool(server.replies_to("logged")) and bool(server.replies_to("logged-2")))
    (reply,) = server.replies_to("logged")
    assert reply["error"]["code"] == -32602
    log = LogFiles(Path(shared_kb.env["RECALL_GUI_DATA_DIR"]))

    def refused() -> list[CallRecord]:
        read = log.read()
        assert read.notes == ()  # every line reads back whole
        return [r for r in read.records if str((r.arguments or {}).get("query")).startswith("refused")]

    wait_until(lambda: len(refused()) >= 2, "the log's own thread wrote both refused calls", WAIT_S)
    record, too_long = refused()
    assert record.client == "raw" and record.client_version == "1"  # as it named itself at initialize
    assert record.tool == "recall_search"
    assert record.arguments == {"db_name": "notes", "query": "refused \udc80 here"}  # as received
    assert record.error == reply["error"]["message"] and "not valid Unicode" in record.error
    assert record.result_ids == ()
    assert too_long.arguments["limit"] == "<a number of 5,000 digits>"  # what a log line can hold
    assert "number too long to read (5000 digits)" in str(too_long.error)


def test_a_number_that_reads_as_infinite_is_logged_as_json_can_hold_it(
    server: RawServer, shared_kb: SharedKnowledgeBase
) -> None:
    """``1e999`` is JSON (RFC 8259 sets no range), and Python reads it as infinity: the agent log's line
    must still be JSON, not ``Infinity``."""
    server.send(tool_call('"infinite"', '{"db_name": "notes", "query": "infinite limit", "limit": 1e999}'))
    server.wait_for(lambda: bool(server.replies_to("infinite")))
    log = LogFiles(Path(shared_kb.env["RECALL_GUI_DATA_DIR"]))

    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} is not JSON")

    def logged() -> list[Any]:
        lines = log.current.read_text(encoding="utf-8").splitlines() if log.current.exists() else []
        records = [json.loads(line, parse_constant=refuse) for line in lines]
        return [r for r in records if (r.get("arguments") or {}).get("query") == "infinite limit"]

    wait_until(lambda: len(logged()) == 1, "the log's own thread wrote the call", WAIT_S)
    assert logged()[0]["arguments"]["limit"] == "Infinity"


def test_after_all_that_the_server_still_searches_and_lists(server: RawServer) -> None:
    reply = server.request(
        "tools/call", {"name": "recall_search", "arguments": {"db_name": "notes", "query": "Paris"}}
    )
    output = json.loads(reply["result"]["content"][0]["text"])
    assert output["results"][0]["id"] == "paris"
    (tool,) = server.request("tools/list")["result"]["tools"]
    assert tool["name"] == "recall_search"
    assert server.not_json == []
    ids = [m["id"] for m in server.received if "id" in m and m["id"] is not None]
    assert len(ids) == len(set(ids)), "an id was answered twice"
    assert "Traceback" not in server.log()


# --- registry text that is not Unicode, and a key that cannot be sent -----------------------------------


@pytest.mark.process
def test_registry_text_and_a_key_that_cannot_be_used_are_answered_and_the_server_goes_on(
    tmp_path: Path, shared_kb: SharedKnowledgeBase
) -> None:
    lone = "\ud800"
    entries = [
        cosh_entry("notes", shared_kb.db_dir, f"Team{lone} notes"),
        cosh_entry(f"odd{lone}", shared_kb.db_dir),
        {
            "name": "cloud",
            "uri": str(shared_kb.db_dir),
            "table": "notes",
            "description": "notes through a provider",
            "embedder": {"Cloud": {"provider": "openai", "model": "text-embedding-local"}},
        },
    ]
    registry_dir = tmp_path / "registry"
    registry_dir.mkdir()
    (registry_dir / "rag_dbs.json").write_text(json.dumps({"dbs": entries}), encoding="ascii")
    (registry_dir / "rag_active.json").write_text(json.dumps(["notes", "cloud"]), encoding="ascii")
    key = SECRET_KEY[:20] + "\r\n" + SECRET_KEY[20:]
    env = {**server_env(tmp_path), "OPENAI_API_KEY": key, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    raw = RawServer(registry_dir, env, tmp_path / "server.log")
    try:
        raw.initialize()
        (tool,) = raw.request("tools/list")["result"]["tools"]
        assert "Description: Team\ufffd notes" in tool["description"]
        assert "odd" not in tool["description"]
        reply = raw.request(
            "tools/call", {"name": "recall_search", "arguments": {"db_name": "cloud", "query": "x"}}
        )
        assert reply["result"]["isError"] is True
        text = reply["result"]["content"][0]["text"]
        assert (
            text
            == "openai: the API key in OPENAI_API_KEY holds a line break, which an HTTP header cannot carry"
        )
        assert raw.request("tools/list")["result"]["tools"]  # still serving
    finally:
        raw.close()
    log = raw.log()
    assert "OPENAI_API_KEY holds a line break" in log
    for part in (SECRET_KEY[:20], SECRET_KEY[20:]):
        assert part not in log
    assert "Traceback" not in log


# --- arguments nested deeply -----------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [150, 900])
def test_deeply_nested_arguments_are_answered_and_the_log_stays_readable(
    server: RawServer, shared_kb: SharedKnowledgeBase, depth: int
) -> None:
    """900 levels: the SDK refuses the line, the gate answers it. 150: the SDK reads it and the tool
    answers; the record keeps the first 64 levels. Either way the next request is answered."""
    query = f"deep {depth}"
    nested = json.dumps({"db_name": "notes", "query": query}).removesuffix("}")
    server.send(tool_call(f'"deep-{depth}"', nested + ', "extra": ' + "[" * depth + "]" * depth + "}"))
    server.wait_for(lambda: bool(server.replies_to(f"deep-{depth}")))
    (reply,) = server.replies_to(f"deep-{depth}")
    if depth == 900:
        assert reply["error"]["code"] == -32602
        assert "nested more than 64 levels deep (at params.arguments.extra[0]" in reply["error"]["message"]
    else:
        assert json.loads(reply["result"]["content"][0]["text"])["query"] == query
    assert "result" in server.request("ping")
    log = LogFiles(Path(shared_kb.env["RECALL_GUI_DATA_DIR"]))

    def deep() -> list[CallRecord]:
        read = log.read()
        assert read.notes == ()  # every line reads back whole
        return [r for r in read.records if (r.arguments or {}).get("query") == query]

    wait_until(lambda: bool(deep()), "the log's own thread wrote the deep call", WAIT_S)
    (record,) = deep()
    if depth == 900:
        assert record.error == reply["error"]["message"]
    cut = record.arguments["extra"]
    for _ in range(63):  # the arguments are level 1, "extra" level 2 … level 64 is kept
        (cut,) = cut
    assert cut == "<nested more than 64 levels deep>"
    assert "Traceback" not in server.log()


@pytest.mark.process
def test_an_agent_log_that_is_a_link_is_not_written_through_and_the_call_is_answered(
    tmp_path: Path, shared_kb: SharedKnowledgeBase
) -> None:
    log_dir = tmp_path / "log"
    log_dir.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"the user's own file\n")
    (log_dir / "agent-log.jsonl").symlink_to(victim)
    env = {**shared_kb.env, "RECALL_GUI_AGENT_LOG_DIR": str(log_dir)}
    raw = RawServer(shared_kb.registry_dir, env, tmp_path / "server.log")
    try:
        raw.initialize()
        reply = raw.request(
            "tools/call", {"name": "recall_search", "arguments": {"db_name": "notes", "query": "agent text"}}
        )
        assert json.loads(reply["result"]["content"][0]["text"])["results"]
        refused = f"{log_dir / 'agent-log.jsonl'} is a symbolic link; the agent log never writes"
        wait_until(lambda: refused in raw.log(), "the log's own thread reported the link", WAIT_S)
    finally:
        raw.close()
    assert victim.read_bytes() == b"the user's own file\n"


def test_a_query_longer_than_the_bound_gets_a_tool_error_saying_so(server: RawServer) -> None:
    arguments = {"db_name": "notes", "query": "Paris " * 200_000}  # 1.2 million characters
    reply = server.request("tools/call", {"name": "recall_search", "arguments": arguments})
    assert reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["text"] == (
        "the query is 1,200,000 characters long; at most 102,400 are searched"
    )
    assert "result" in server.request("ping")


def test_control_characters_an_agent_sends_are_escaped_in_the_server_log(server: RawServer) -> None:
    name = "forged\x1b[2J\nrecall-gui mcp: INFO: all is well"
    reply = server.request(
        "tools/call", {"name": "recall_search", "arguments": {"db_name": name, "query": "x"}}
    )
    assert reply["result"]["isError"] is True
    log = server.log()
    assert "forged\\x1b[2J\\nrecall-gui mcp: INFO: all is well" in log
    assert "\x1b" not in log
    assert "\nrecall-gui mcp: INFO: all is well" not in log
