"""A knowledge base on S3-compatible storage (a moto server on 127.0.0.1): listed, browsed and searched
with credentials from the registry entry or the standard AWS variables; a server that stops or hangs fails
the next operation within a bounded time with a clear message, and searching works again once it is back,
without a restart."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from recall_gui.cli import main as cli_main
from recall_gui.core.base.errors import RecallError
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.health import check_health
from recall_gui.core.session.session import Session
from recall_gui.core.tables.browse import describe_table, fetch_page
from tests.kbtools import KnowledgeBase, cosh_entry, snapshot_tree, write_registry
from tests.s3server import SECRET_KEY, S3Location, environment, upload_tree

#: The core's own bound on one storage operation, lowered so a hanging server costs the test little.
STORAGE_TIMEOUT_S = 3.0


def s3_kb(
    make_kb: Callable[..., KnowledgeBase], s3: S3Location, tmp_path: Path, *, with_options: bool
) -> Path:
    """Upload a real knowledge base to the bucket and register it (credentials in the entry or not)."""
    import boto3

    kb = make_kb()
    client = boto3.client(
        "s3",
        endpoint_url=s3.endpoint,
        aws_access_key_id=s3.storage_options()["aws_access_key_id"],
        aws_secret_access_key=SECRET_KEY,
        region_name="us-east-1",
    )
    upload_tree(client, s3.bucket, kb.db_dir, "kbs/notes")
    entry = cosh_entry("remote", s3.uri("kbs", "notes"))
    entry["table"] = kb.name
    if with_options:
        entry["storage_options"] = s3.storage_options()
    return write_registry(tmp_path / "registry", [entry])


async def search(harness: Harness, query: str) -> str:
    report = await harness.run({"db_name": "remote", "query": query, "limit": 2})
    return report.result.hits[0].id


def registry_uri(registry_dir: Path) -> str:
    uri: str = json.loads((registry_dir / "rag_dbs.json").read_text())["dbs"][0]["uri"]
    assert uri.startswith("s3://")
    return uri


@pytest.fixture(scope="module")
def shared_session() -> Iterator[Session]:
    """One session for the module: the model loads once, not once per test."""
    session = Session()
    yield session
    asyncio.run(session.aclose())


def check_session(shared_session: Session, registry_dir: Path, capsys: Any) -> None:
    async def browse() -> None:
        harness = Harness(registry_dir, session=shared_session)
        assert await search(harness, "What is the capital of France?") == "paris"
        entry = harness.resolve_active("remote")
        info = await describe_table(shared_session, entry.target)
        assert info.row_count == 12 and info.columns.vector_dim == 384
        page = await fetch_page(shared_session, entry.target, offset=10, limit=5)
        assert [r.id for r in page.rows] == ["git-rebase", "unicode"]
        found = await fetch_page(shared_session, entry.target, offset=0, limit=5, filter_text="moon")
        assert [r.id for r in found.rows] == ["tides"]
        assert (await check_health(shared_session, entry)).ok

    asyncio.run(browse())
    assert cli_main(["list", "--registry", str(registry_dir), "--json"]) == 0
    out, err = capsys.readouterr()
    (row,) = json.loads(out)
    assert (row["rows"], row["health"]["table"], row["uri"]) == (12, "ok", registry_uri(registry_dir))
    assert SECRET_KEY not in out + err


def test_a_kb_on_s3_with_credentials_in_the_registry_entry(
    shared_session: Session,
    make_kb: Callable[..., KnowledgeBase],
    s3: S3Location,
    tmp_path: Path,
    capsys: Any,
) -> None:
    registry_dir = s3_kb(make_kb, s3, tmp_path, with_options=True)
    before = snapshot_tree(registry_dir)
    check_session(shared_session, registry_dir, capsys)
    assert snapshot_tree(registry_dir) == before  # credentials are never written back (nothing is)


def test_a_kb_on_s3_with_credentials_from_the_aws_environment(
    shared_session: Session,
    make_kb: Callable[..., KnowledgeBase],
    s3: S3Location,
    tmp_path: Path,
    capsys: Any,
) -> None:
    registry_dir = s3_kb(make_kb, s3, tmp_path, with_options=False)
    with environment(s3.environment()):
        check_session(shared_session, registry_dir, capsys)


def test_a_missing_bucket_or_table_is_clear_and_shows_no_secret(
    shared_session: Session, make_kb: Callable[..., KnowledgeBase], s3: S3Location, tmp_path: Path
) -> None:
    registry_dir = s3_kb(make_kb, s3, tmp_path, with_options=True)
    entry = json.loads((registry_dir / "rag_dbs.json").read_text())["dbs"][0]
    for uri, expected in (
        (s3.uri("kbs", "elsewhere"), 'table "notes" not found in s3://'),
        ("s3://no-such-bucket/kbs/notes", "failed to connect to vector db: "),
    ):
        write_registry(registry_dir, [{**entry, "uri": uri}])
        with pytest.raises(RecallError) as caught:
            asyncio.run(search(Harness(registry_dir, session=shared_session), "x"))
        assert caught.value.message.startswith("failed to connect to vector db: ")
        assert expected in caught.value.message
        assert SECRET_KEY not in caught.value.full_text()


def test_a_server_that_stops_fails_fast_and_searching_recovers_without_restart(
    shared_session: Session,
    make_kb: Callable[..., KnowledgeBase],
    s3: S3Location,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RECALL_GUI_STORAGE_TIMEOUT", str(STORAGE_TIMEOUT_S))
    registry_dir = s3_kb(make_kb, s3, tmp_path, with_options=True)

    async def outage() -> list[tuple[str, float]]:
        harness = Harness(registry_dir, session=shared_session)
        entry = harness.resolve_active("remote")
        steps: list[tuple[str, float]] = []

        async def step(name: str, work: Any) -> None:
            started = time.monotonic()
            try:
                outcome = await work
            except RecallError as error:
                outcome = f"{type(error).__name__}: {error.message} | {error.hint}"
            steps.append((f"{name}: {outcome}", time.monotonic() - started))

        await step("up", search(harness, "capital of France"))
        s3.proxy.stop()
        await step("down", search(harness, "capital of France"))
        await step("down-again", search(harness, "Berlin"))
        await step("browse-down", describe_table(shared_session, entry.target))
        s3.proxy.resume()
        await step("back", search(harness, "capital of France"))
        s3.proxy.hang()
        await step("hanging", search(harness, "Berlin"))
        s3.proxy.resume()
        await step("back-again", search(harness, "Berlin"))
        return steps

    steps = asyncio.run(outage())
    outcomes = [text for text, _ in steps]
    assert outcomes[0] == "up: paris"
    for text in outcomes[1:4]:
        assert "Error: " in text and (
            "did not answer" in text or f"timed out after {STORAGE_TIMEOUT_S:g} s" in text
        ), text
        assert (
            "Check that the server or network is up" in text or "Check that the storage is reachable" in text
        )
    assert outcomes[4] == "back: paris"
    assert "Error: " in outcomes[5] and (
        f"after {STORAGE_TIMEOUT_S:g} s" in outcomes[5] or f"within {STORAGE_TIMEOUT_S:g} s" in outcomes[5]
    )
    assert outcomes[6] == "back-again: berlin"
    bound = STORAGE_TIMEOUT_S + 3
    assert all(seconds < bound for _, seconds in steps), steps
    print("\n" + "\n".join(f"{seconds:6.2f} s  {text[:110]}" for text, seconds in steps))
