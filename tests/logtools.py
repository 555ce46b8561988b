"""Helpers for agent-log tests: records of calls the real harness answered, and a row added to a table by
another program."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from recall_gui.core.agent_log.agent_log import LogFiles
from recall_gui.core.agent_log.call_record import CallRecord, now_iso
from recall_gui.core.search.harness import Harness

ADD_ROW = textwrap.dedent(
    """
    import json, sys
    import lancedb, pyarrow as pa
    db_dir, table, row_file = sys.argv[1:4]
    row = json.loads(open(row_file, encoding="utf-8").read())
    vector = pa.FixedSizeListArray.from_arrays(pa.array(row["vector"], pa.float32()), len(row["vector"]))
    data = pa.table({"id": [row["id"]], "content": [row["content"]], "vector": vector})
    lancedb.connect(db_dir).open_table(table).add(data)
    """
)


async def answered(
    harness: Harness, arguments: dict[str, Any], *, client: str = "test-agent", time: str | None = None
) -> CallRecord:
    """The record the server writes for a call that ``harness`` answers now (errors included)."""
    from recall_gui.core.base.errors import RecallError
    from recall_gui.core.storage.content_identity import content_sha256

    try:
        report = await harness.run(arguments)
    except RecallError as error:
        return CallRecord(time or now_iso(), client, "1.0", "recall_search", arguments, error=error.message)
    return CallRecord(
        time or now_iso(),
        client,
        "1.0",
        "recall_search",
        arguments,
        tuple(hit.id for hit in report.result.hits),
        None,
        report.embed_ms,
        report.result.search_ms,
        report.result.table_version,
        result_sha256=tuple(content_sha256(hit.content) for hit in report.result.hits),
    )


def logged_call(
    harness: Harness, arguments: dict[str, Any], *, client: str = "test-agent", time: str | None = None
) -> CallRecord:
    """:func:`answered`, for tests without an event loop of their own."""
    return asyncio.run(answered(harness, arguments, client=client, time=time))


def write_records(files: LogFiles, records: list[CallRecord], max_bytes: int = 10 * 1024 * 1024) -> None:
    for record in records:
        files.append(record.to_line(), max_bytes)


def add_row_elsewhere(
    db_dir: Path, table: str, entry_id: str, content: str, embedder: Any, work: Path
) -> None:
    """Add one row, embedded with the real model, from a separate Python process (as cosh would)."""
    row = {"id": entry_id, "content": content, "vector": [float(x) for x in embedder.embed_sync(content)]}
    row_file = work / f"row-{entry_id}.json"
    row_file.write_text(json.dumps(row), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", ADD_ROW, str(db_dir), table, str(row_file)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
