"""A password written into an address is a secret: masked in every message, listing, tool description,
call error and log line, and never registered without the user's word."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.base.credentials import masked
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, write_registry
from tests.mcp.live import server_env
from tests.mcp.test_server_wire import RawServer
from tests.providers import FakeProvider
from tests.s3server import ACCESS_KEY, SECRET_KEY

PASSWORD = "pa55-w0rd-n0t-f0r-y0ur-3y35"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("s3://KEY:SECRET@bucket/prefix", "s3://KEY:***@bucket/prefix"),
        ("s3://AKIA:wJal/rXU+tnF@bucket/p", "s3://AKIA:***@bucket/p"),  # AWS secrets hold / and +
        ('{"uri":"s3://k:s@b/p","x":"a@b"}', '{"uri":"s3://k:***@b/p","x":"a@b"}'),
        ("s3://bucket/a:b@c", "s3://bucket/a:b@c"),  # an @ in the path is no password
        ("cannot open http://user:p%40ss@host:8080/v1 now", "cannot open http://user:***@host:8080/v1 now"),
        ("https://TOKEN@github.com/x and gs://a:b@c", "https://***@github.com/x and gs://a:***@c"),
        ("az://acct:k@y/@weird@container/path", "az://acct:***@container/path"),
        (
            "mail me at someone@example.com; s3://bucket/prefix",
            "mail me at someone@example.com; s3://bucket/prefix",
        ),
    ],
)
def test_a_password_in_any_address_in_a_text_is_masked(text: str, shown: str) -> None:
    assert masked(text) == shown


def test_openai_base_url_with_a_password_never_shows_it_nor_its_basic_header(
    kb: KnowledgeBase, fake_provider: FakeProvider
) -> None:
    write_registry(
        kb.registry_dir,
        [
            {
                "name": kb.name,
                "uri": str(kb.db_dir),
                "description": "notes",
                "embedder": {"Cloud": {"provider": "openai", "model": "text-embedding-local"}},
                "created_at": 1,
            }
        ],
    )
    env = fake_provider.environment("openai")
    env["OPENAI_BASE_URL"] = env["OPENAI_BASE_URL"].replace("http://", f"http://user:{PASSWORD}@")
    done = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "q", env=env)
    assert done.returncode == 1
    basic = base64.b64encode(f"user:{PASSWORD}".encode()).decode()
    for secret in (PASSWORD, basic):
        assert secret not in done.stdout + done.stderr
    assert "HTTP 401" in done.stderr  # the provider's answer is still shown


def s3_entry(s3: Any, name: str) -> dict[str, Any]:
    options = s3.storage_options()
    return {
        "name": name,
        "uri": f"s3://{ACCESS_KEY}:{SECRET_KEY}@{s3.bucket}/team/kb",
        "table": "docs",
        "description": "the team's notes",
        "embedder": {"Local": {"model": "AllMiniLML6V2"}},
        "storage_options": {k: options[k] for k in ("aws_endpoint", "aws_region", "allow_http")},
    }


def test_a_storage_secret_in_a_registered_uri_is_masked_by_every_command(s3: Any, tmp_path: Path) -> None:
    registry = write_registry(tmp_path / "registry", [s3_entry(s3, "team")])
    shown = f"s3://{ACCESS_KEY}:***@{s3.bucket}/team/kb"
    listed = cli("list", "--registry", str(registry))
    assert shown in listed.stdout
    listed_json = cli("list", "--json", "--registry", str(registry))
    assert json.loads(listed_json.stdout)[0]["uri"] == shown
    tool = cli("tool", "--registry", str(registry))
    assert f"DB URI: {shown}" in json.loads(tool.stdout)["description"]
    searched = cli("search", "--registry", str(registry), "--db", "team", "notes")
    assert searched.returncode == 1
    for done in (listed, listed_json, tool, searched):
        assert SECRET_KEY not in done.stdout + done.stderr


def test_register_refuses_a_uri_with_a_password_unless_told_to_store_it(s3: Any, tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    uri = f"s3://{ACCESS_KEY}:{SECRET_KEY}@{s3.bucket}/team/kb"
    done = cli("register", uri, "--name", "team", "--registry", str(registry))
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"error: not registered: the URI s3://{ACCESS_KEY}:***@{s3.bucket}/team/kb holds a password or a key "
        f"(shown as ***), which would be stored in plain text in {registry / 'rag_dbs.json'}"
    )
    assert "--store-credentials" in done.stderr
    assert SECRET_KEY not in done.stdout + done.stderr
    assert not (registry / "rag_dbs.json").exists()


def test_the_mcp_server_never_sends_or_logs_a_storage_secret(s3: Any, tmp_path: Path) -> None:
    registry = write_registry(tmp_path / "registry", [s3_entry(s3, "team")])
    raw = RawServer(registry, server_env(tmp_path), tmp_path / "server.log")
    try:
        raw.initialize()
        (tool,) = raw.request("tools/list")["result"]["tools"]
        assert f"DB URI: s3://{ACCESS_KEY}:***@{s3.bucket}/team/kb" in tool["description"]
        reply = raw.request(
            "tools/call", {"name": "recall_search", "arguments": {"db_name": "team", "query": "notes"}}
        )
        assert reply["result"]["isError"] is True
        assert SECRET_KEY not in json.dumps(reply) + json.dumps(tool)
    finally:
        raw.close()
    assert SECRET_KEY not in raw.log()


def test_register_with_store_credentials_keeps_the_uri_as_typed_and_says_where(
    s3: Any, passage_vectors: Any, moto_server: Any, tmp_path: Path
) -> None:
    from tests.foldertools import write_lancedb_registry_table
    from tests.s3server import upload_tree

    local = tmp_path / "to-upload"
    write_lancedb_registry_table(local, "docs", passage_vectors, model="all-MiniLM-L6-v2")
    upload_tree(moto_server.client(), s3.bucket, local, "team/kb")
    registry = tmp_path / "registry"
    uri = f"s3://{ACCESS_KEY}:{SECRET_KEY}@{s3.bucket}/team/kb"
    done = cli(
        "register",
        uri,
        "--name",
        "team",
        "--store-credentials",
        "--registry",
        str(registry),
        env=s3.environment(),
    )
    assert done.returncode == 0, done.stderr
    assert f"s3://{ACCESS_KEY}:***@{s3.bucket}/team/kb" in done.stdout
    assert (
        f"warning: the password in the URI is stored in plain text in {registry / 'rag_dbs.json'}\n"
        in done.stderr
    )
    assert SECRET_KEY not in done.stdout + done.stderr
    (stored,) = json.loads((registry / "rag_dbs.json").read_text())["dbs"]
    assert stored["uri"] == uri  # as the user agreed


def test_a_password_in_a_file_uri_is_masked_where_its_folder_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``file://user:PASSWORD@host/…`` names a folder that does not exist: every message naming it, in the
    CLI and the MCP server (the agent's error and the server's log), shows the URI masked, never the path
    made from it."""
    from recall_gui.cli import main

    uri = f"file://user:{PASSWORD}@host/nowhere"
    entry = {
        "name": "team",
        "uri": uri,
        "description": "notes",
        "embedder": {"Local": {"model": "AllMiniLML6V2"}},
        "created_at": 1,
    }
    registry = write_registry(tmp_path / "registry", [entry])
    shown = "database folder file://user:***@host/nowhere does not exist"
    printed = []
    for words, status in (
        (["list"], 1),
        (["list", "--json"], 1),
        (["search", "--db", "team", "notes"], 1),
        (["health", "--db", "team"], 1),
        (["register", uri, "--name", "kept", "--store-credentials"], 1),
    ):
        assert main([*words, "--registry", str(registry)]) == status, words
        printed.append("".join(capsys.readouterr()))
    assert all(shown in text for text in printed[:4]), printed
    assert "folder file://user:***@host/nowhere does not exist" in printed[4]
    raw = RawServer(registry, server_env(tmp_path), tmp_path / "server.log")
    try:
        raw.initialize()
        reply = raw.request(
            "tools/call", {"name": "recall_search", "arguments": {"db_name": "team", "query": "notes"}}
        )
    finally:
        raw.close()
    assert reply["result"]["isError"] is True and shown in json.dumps(reply)
    for text in (*printed, json.dumps(reply), raw.log()):
        assert PASSWORD not in text
