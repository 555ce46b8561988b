"""`recall-gui mcp` with the notes, the override and the settings that are no files (a FIFO, a link to
/dev/zero): it answers ``initialize`` at once, serves the generated database list, answers calls, and its
log names each file once."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.mcp.live import BackgroundLoop, build_shared_kb, harness_json, live_session, server_parameters

ARGUMENTS = {"db_name": "notes", "query": "How do I change my password?", "limit": 3}


@pytest.mark.process
def test_the_server_answers_with_notes_and_settings_that_are_no_files(
    tmp_path: Path, passage_vectors: Any
) -> None:
    kb = build_shared_kb(tmp_path / "kb", passage_vectors)
    expected = harness_json(kb.registry_dir, ARGUMENTS)
    kb.config_dir.mkdir(parents=True, exist_ok=True)
    notes, override = kb.config_dir / "tool_notes.txt", kb.config_dir / "tool_override.txt"
    settings = kb.config_dir / "settings.json"
    os.mkfifo(notes)
    override.symlink_to("/dev/zero")
    os.mkfifo(settings)
    loop = BackgroundLoop()
    try:
        # Before, the server read the FIFO for the tool list and never answered the handshake.
        live = loop.hold(live_session(server_parameters(kb.registry_dir, kb.env), tmp_path / "server.log"))
        tools = loop.run(live.session.list_tools()).tools
        result = loop.run(live.session.call_tool("recall_search", ARGUMENTS))
    finally:
        loop.close()
        for fifo in (notes, settings):  # a server still waiting on one gets the end of the file
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert live.initialize.server_info.name == "recall-gui"
    (tool,) = tools
    assert tool.description is not None
    assert tool.description.endswith("Embedding: All-MiniLM-L6-v2 (384d)\n\n")  # the generated list alone
    assert not result.is_error
    assert [c.text for c in result.content if isinstance(c, types.TextContent)] == [expected]
    assert json.loads(expected)["results"][0]["id"] == "pw-reset"
    log = live.log()
    assert "Traceback" not in log
    assert log.count(f"{notes} cannot be read: it is a FIFO, not a regular file") == 1, log
    assert log.count(f"{override} cannot be read: it is a character device, not a regular file") == 1, log
    refused = f"cannot read {settings}: it is a FIFO, not a regular file; not recording calls"
    assert log.count(refused) == 1, log
