"""Storage credentials and addresses in a registry entry's ``storage_options``: never shown in a message,
and refused with a clear reason (naming the option, not its value) when the object store could not use
them — it panicked on a key with a line break or a port out of range."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from recall_gui.core.base.errors import ConnectError
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.search.harness import Harness
from tests.kbtools import cosh_entry, write_registry
from tests.s3server import free_port

SECRET = "stor4ge-s3cr3t-n0t-f0r-y0ur-3y35"


def s3_entry(options: dict[str, str]) -> dict[str, object]:
    """An entry on S3 with credentials of its own (without, the object store would ask the cloud's
    metadata address for some)."""
    entry = cosh_entry("remote", "s3://bucket/kbs/notes")
    entry["storage_options"] = {
        "aws_region": "us-east-1",
        "allow_http": "true",
        "aws_access_key_id": "AKIAEXAMPLE",
        "aws_secret_access_key": "example-secret",
        **options,
    }
    return entry


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("aws_access_key_id", f"AKIA\n{SECRET}", "holds a line break, which an HTTP header cannot carry"),
        ("aws_session_token", f"{SECRET}\r\nX", "holds a line break, which an HTTP header cannot carry"),
        ("AWS_ACCESS_KEY_ID", f"AKIA {SECRET}", "holds a space, which an HTTP header cannot carry"),
        ("aws_endpoint", "http://127.0.0.1:99999", "is not a usable address: port"),
        ("aws_endpoint", "http://[::1", "is not a usable address: it does not parse"),
        ("aws_secret_access_key", f"{SECRET}\ud800", "is not valid Unicode text"),
    ],
)
def test_a_storage_option_the_store_cannot_use_skips_the_entry_without_showing_it(
    option: str, value: str, said: str, tmp_path: Path
) -> None:
    write_registry(tmp_path, [s3_entry({option: value}), cosh_entry("good", "/x")])
    registry = load_registry(tmp_path)
    assert [db.name for db in registry.databases] == ["good"]
    (problem,) = [p for p in registry.problems if "entry 1 skipped" in p.message]
    assert f'database "remote": "storage_options.{option}" {said}' in problem.message
    assert SECRET not in str(problem)
    for part in value.split():
        assert part not in str(problem) or len(part) < 8


def test_usable_storage_options_are_kept(tmp_path: Path) -> None:
    options = {
        "aws_access_key_id": "AKIAEXAMPLE",
        "aws_secret_access_key": "wJalr/K7MDENG+bPxRfiCYEXAMPLEKEY",
        "aws_endpoint": "http://127.0.0.1:9000",
    }
    write_registry(tmp_path, [s3_entry(options)])
    registry = load_registry(tmp_path)
    assert registry.problems == ()
    assert registry.databases[0].storage_options["aws_endpoint"] == "http://127.0.0.1:9000"


@pytest.mark.slow
def test_a_password_in_a_storage_address_is_not_shown_when_it_does_not_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALL_GUI_STORAGE_TIMEOUT", "30")  # the store's retries end in "refused" first
    endpoint = f"http://reader:{SECRET}@127.0.0.1:{free_port()}"
    registry_dir = write_registry(tmp_path, [s3_entry({"aws_endpoint": endpoint})])

    async def search() -> None:
        harness = Harness(registry_dir)
        try:
            await harness.run({"db_name": "remote", "query": "x"})
        finally:
            await harness.aclose()

    with pytest.raises(ConnectError) as caught:
        asyncio.run(search())
    assert "did not answer" in caught.value.message
    assert SECRET not in caught.value.full_text()
    assert "127.0.0.1" in caught.value.message
