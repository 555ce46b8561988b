"""`recall-gui mcp` while another program rewrites the registry in place, as some tools save: the file
truncated, half of it written, a 10 ms pause, the rest, again every 20 ms. Every call finds its database
and no client is told the tool list changed: the server keeps the last registry that parsed (found in
the field: thousands of "Database 'python-docs' not found. Active databases: (none)" in 30 s, and 24
list-changed notifications)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.mcp.live import BackgroundLoop, build_shared_kb, live_session, server_parameters

#: How long agents call while the registry is rewritten: many rewrites (one every 30 ms).
CALLING_S = 6.0


class InPlaceWriter:
    """Rewrites each file in place, half, a pause, the rest, over and over, on a thread of its own."""

    def __init__(self, paths: list[Path]) -> None:
        self.texts = {path: path.read_bytes() for path in paths}
        self.rewrites = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="registry-writer", daemon=True)

    def __enter__(self) -> InPlaceWriter:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        for path, text in self.texts.items():
            path.write_bytes(text)

    def _run(self) -> None:
        while not self._stop.is_set():
            for path, text in self.texts.items():
                with path.open("r+b") as file:
                    file.truncate(0)
                    file.write(text[: len(text) // 2])
                    file.flush()
                    self._stop.wait(0.01)
                    file.write(text[len(text) // 2 :])
                self.rewrites += 1
            self._stop.wait(0.02)


@pytest.mark.process
def test_agents_never_lose_a_database_while_the_registry_is_rewritten(
    tmp_path: Path, passage_vectors: Any
) -> None:
    kb = build_shared_kb(tmp_path / "kb", passage_vectors)
    arguments = {"db_name": "notes", "query": "capital of France", "limit": 1}
    loop = BackgroundLoop()
    failures: list[str] = []
    calls = 0
    try:
        live = loop.hold(live_session(server_parameters(kb.registry_dir, kb.env), tmp_path / "server.log"))
        loop.run(live.session.call_tool("recall_search", arguments))  # the model loaded before the writes
        paths = [kb.registry_dir / "rag_dbs.json", kb.registry_dir / "rag_active.json"]
        with InPlaceWriter(paths) as writer:
            deadline = time.monotonic() + CALLING_S
            while time.monotonic() < deadline:
                result = loop.run(live.session.call_tool("recall_search", arguments))
                calls += 1
                if result.is_error:
                    failures.extend(c.text for c in result.content if isinstance(c, types.TextContent))
            tools = loop.run(live.session.list_tools()).tools
            rewrites = writer.rewrites
        changed = live.list_changed_count()
    finally:
        loop.close()
    assert rewrites > 50 and calls > 20, (rewrites, calls)  # the registry was rewritten all along
    assert failures == []
    assert changed == 0
    (tool,) = tools
    assert tool.description is not None and "- Name: notes\n" in tool.description
    log = live.log()
    assert "Traceback" not in log
    assert log.count("as last read whole until it parses") <= 1, log
