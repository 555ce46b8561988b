"""A session of everything recall-gui does with a knowledge base, short of opening the window.

Searches (harness and low-level), describing, paging, filtering, opening a row, health checks, the
registry and the tool description, and the read-only CLI commands. Run in-process by
:func:`run_session`, or as ``python -m tests.readonly_session REGISTRY_DIR DB_NAME`` (for sessions under
another user or on a read-only mount); either way it returns (prints) a JSON summary of what it saw, so a
test can tell that the session really worked.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

QUERIES = ("How do I change my password?", "capital of France", "generators and yield", "", "🚀 ش")


async def _core_session(registry_dir: Path, db_name: str) -> dict[str, Any]:
    from recall_gui.core.base.types import RecallSearchInput
    from recall_gui.core.registry.registry import load_registry
    from recall_gui.core.registry.suffix import served_tool
    from recall_gui.core.registry.suffix_store import SuffixStore
    from recall_gui.core.search.harness import Harness
    from recall_gui.core.search.health import check_health
    from recall_gui.core.search.nearest import search
    from recall_gui.core.tables.browse import describe_table, fetch_page, fetch_row

    summary: dict[str, Any] = {}
    harness = Harness(registry_dir)
    try:
        tops = []
        for query in QUERIES:
            report = await harness.run({"db_name": db_name, "query": query, "limit": 3})
            tops.append(report.result.hits[0].id)
        summary["tops"] = tops
        summary["json"] = json.loads(await harness.recall_search({"db_name": db_name, "query": "Berlin"}))
        entry = harness.resolve_active(db_name)
        session, target = harness.session, entry.target
        embedded = await harness.session.models.start_query(entry.embedder, "tides and the moon").wait()
        asking = RecallSearchInput(entry.uri, entry.table_name, 384, "t", embedded.vector, 2)
        low = await search(session, asking, target.options)
        summary["low_level"] = [r.id for r in low.results]
        info = await describe_table(session, target)
        summary["rows"] = info.row_count
        pages = [await fetch_page(session, target, offset=o, limit=5) for o in (0, 5)]
        summary["paged"] = [row.id for page in pages for row in page.rows]
        filtered = await fetch_page(session, target, offset=0, limit=5, filter_text="pass")
        summary["filtered"] = [row.id for row in filtered.rows]
        row_id = pages[0].rows[0].row_id
        full = await fetch_row(session, target, row_id or 0)
        summary["row_vector"] = len(full.vector) if full and full.vector is not None else 0
        registry = load_registry(registry_dir)
        summary["health"] = [(await check_health(session, db)).ok for db in registry.databases]
        summary["tool"] = served_tool(registry, SuffixStore()).tool.name
    finally:
        await harness.aclose()
    return summary


def _cli_session(registry_dir: Path, db_name: str) -> dict[str, Any]:
    import tempfile

    from recall_gui.cli import main

    outputs: dict[str, Any] = {}
    golden = Path(tempfile.mkdtemp(prefix="recall-golden-")) / "golden.json"
    golden.write_text(
        json.dumps({"checks": [{"db_name": db_name, "query": "capital of France", "expect": ["paris"]}]}),
        encoding="utf-8",
    )
    registry = ["--registry", str(registry_dir)]
    commands = {
        "list": ["list", *registry],
        "list_json": ["list", *registry, "--json"],
        "tool": ["tool", *registry],
        "search": ["search", *registry, "--db", db_name, "--limit", "2", "Paris"],
        "check": ["check", *registry, "--json", str(golden)],
        "similar": ["similar", *registry, "--db", db_name, "--id", "paris", "--limit", "2"],
        "rank": ["rank", *registry, "--db", db_name, "--id", "berlin", "capital of France"],
        "duplicates": ["duplicates", *registry, "--db", db_name, "--json"],
    }
    for name, argv in commands.items():
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        outputs[name] = {"code": code, "out": out.getvalue(), "err": err.getvalue()}
    return outputs


def run_session(registry_dir: Path, db_name: str) -> dict[str, Any]:
    summary = asyncio.run(_core_session(registry_dir, db_name))
    summary["cli"] = _cli_session(registry_dir, db_name)
    return summary


if __name__ == "__main__":
    print(json.dumps(run_session(Path(sys.argv[1]), sys.argv[2])))
