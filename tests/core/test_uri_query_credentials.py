"""Credentials in every spelling an address can carry them — a query's ``access_key``/``secret_key``, a
``token``, ``password`` or ``sig`` parameter, a presigned ``X-Amz-Credential``/``X-Amz-Signature``, a token
alone before the host, and any value of a query or fragment under a name not known to be harmless
(``jwt``, ``pw``, ``code``, ``session``, ``auth[token]``, ``#access_token``) — are masked wherever an
address is shown: listings, errors, the MCP tool description, golden checks' reports, the agent log, and
the provider's answer quoting the header an HTTP client made of them (a stand-in provider on 127.0.0.1).
``register`` refuses them without ``--store-credentials``."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.base.credentials import has_credentials, masked, without_credentials
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, write_registry
from tests.mcp.live import server_env
from tests.mcp.test_server_wire import RawServer
from tests.providers import FakeProvider

SECRET = "qu3ry-s3cr3t-n0t-f0r-y0ur-3y35"
AMZ_SIGNATURE = "b1f5e3d2c4a69788badc0ffee0ddf00d"


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        (f"s3://b/kb?access_key=AKIA1&secret_key={SECRET}", "s3://b/kb?access_key=***&secret_key=***"),
        (f"gs://b/kb?token={SECRET}&region=eu", "gs://b/kb?token=***&region=eu"),
        (f"http://h/v1?password={SECRET}#top", "http://h/v1?password=***#***"),
        (f"az://c/kb?sv=2024&sig={SECRET}%3D", "az://c/kb?sv=***&sig=***"),
        (
            f"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Credential=AKIA%2F1&X-Amz-Date=2"
            f"&X-Amz-Signature={AMZ_SIGNATURE}",
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=***&X-Amz-Credential=***&X-Amz-Date=***"
            "&X-Amz-Signature=***",
        ),
        (f"s3://b/kb?AWSAccessKeyId=AKIA1&Signature={SECRET}", "s3://b/kb?AWSAccessKeyId=***&Signature=***"),
        (f"http://h/v1?api_key={SECRET}&keyword=lance", "http://h/v1?api_key=***&keyword=***"),
        (f"http://{SECRET}@h/v1", "http://***@h/v1"),
        # Any name: the values are masked, the names kept; a fragment's too.
        (f"s3://b/kb?jwt={SECRET}&region=eu", "s3://b/kb?jwt=***&region=eu"),
        (f"s3://b/kb?pw={SECRET};code={SECRET}", "s3://b/kb?pw=***;code=***"),
        (f"gs://b/kb?session={SECRET}&auth[token]={SECRET}", "gs://b/kb?session=***&auth[token]=***"),
        (f"s3://b/kb?auth%5Btoken%5D={SECRET}", "s3://b/kb?auth%5Btoken%5D=***"),
        (f"az://c/kb#access_token={SECRET}&token_type=bearer", "az://c/kb#access_token=***&token_type=***"),
        (f"s3://b/kb#{SECRET}", "s3://b/kb#***"),
        # A harmless name that carries an address of its own is no harmless value.
        (f"s3://b/kb?endpoint=http://h/x%3Ftoken%3D{SECRET}", "s3://b/kb?endpoint=***"),
    ],
)
def test_every_spelling_of_a_credential_in_an_address_is_masked(uri: str, shown: str) -> None:
    assert masked(f"cannot open {uri} now") == f"cannot open {shown} now"
    assert has_credentials(uri)
    kept = without_credentials(uri)
    assert SECRET not in kept and AMZ_SIGNATURE not in kept and "AKIA1" not in kept
    assert not has_credentials(kept)


def test_what_is_kept_to_reopen_a_place_drops_a_secret_after_either_separator() -> None:
    assert without_credentials(f"s3://b/kb?region=eu;token={SECRET}") == "s3://b/kb?region=eu"
    assert (
        without_credentials(f"s3://b/kb?token={SECRET}&region=eu;version=2#f")
        == "s3://b/kb?region=eu;version=2"
    )
    assert (
        without_credentials(f"s3://b/kb?region=eu;sig={SECRET};version=3") == "s3://b/kb?region=eu;version=3"
    )


def test_addresses_without_credentials_are_left_as_they_are() -> None:
    for uri in (
        "s3://b/kb?region=eu&allow_http=true",
        "s3://b/kb?aws_endpoint=http://127.0.0.1:9000&AWS_REGION=us-east-1",
        "/data/kb",
        "/data/kb?x=1#top",  # a path: only a secret parameter's name makes it one
        "s3://b/k?versionId=3&version=",
    ):
        assert masked(uri) == uri and not has_credentials(uri) and without_credentials(uri) == uri


def test_what_is_kept_of_an_address_keeps_only_its_harmless_parameters() -> None:
    assert (
        without_credentials(f"s3://b/kb?region=eu&jwt={SECRET}#access_token={SECRET}")
        == "s3://b/kb?region=eu"
    )
    assert without_credentials("http://h/v1?q=a=b#top") == "http://h/v1"


#: Secrets under names that do not say so, in the query and the fragment (the mask keeps the names).
ANY_NAME = (
    f"jwt={SECRET}&pw={SECRET}&code={SECRET}&session={SECRET}&auth[token]={SECRET}#access_token={SECRET}"
)
ANY_NAME_SHOWN = "jwt=***&pw=***&code=***&session=***&auth[token]=***#access_token=***"


def query_entry(kb: KnowledgeBase, name: str) -> dict[str, Any]:
    """A registered database whose URI carries its secrets in a query (LanceDB cannot open it)."""
    return {
        "name": name,
        "uri": f"s3://kb-bucket/team/kb?access_key=AKIA1&secret_key={SECRET}&token={SECRET}&{ANY_NAME}",
        "table": kb.name,
        "description": "the team's notes",
        "embedder": {"Local": {"model": "AllMiniLML6V2"}},
    }


@pytest.mark.process
def test_listings_errors_and_the_tool_description_mask_a_query_secret(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    registry = write_registry(tmp_path / "registry", [query_entry(kb, "team")])
    shown = f"s3://kb-bucket/team/kb?access_key=***&secret_key=***&token=***&{ANY_NAME_SHOWN}"
    listed = cli("list", "--registry", str(registry))
    listed_json = cli("list", "--json", "--registry", str(registry))
    assert json.loads(listed_json.stdout)[0]["uri"] == shown
    tool = cli("tool", "--registry", str(registry))
    assert f"DB URI: {shown}" in json.loads(tool.stdout)["description"]
    searched = cli(
        "search", "--registry", str(registry), "--db", "team", "notes",
        env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_REGION": "us-east-1"},
    )  # fmt: skip
    assert searched.returncode == 1
    for done in (listed, listed_json, tool, searched):
        assert SECRET not in done.stdout + done.stderr
        assert "AKIA1" not in done.stdout + done.stderr
    assert shown in listed.stdout


@pytest.mark.slow
def test_golden_checks_reports_mask_a_query_secret(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A check of a database whose URI holds secrets cannot run: its error, in the text, the JSON and the
    JUnit report, names the URI masked."""
    from recall_gui.cli import main

    registry = write_registry(tmp_path / "registry", [query_entry(kb, "team")])
    golden = tmp_path / "golden.json"
    golden.write_text(json.dumps({"checks": [{"db_name": "team", "query": "notes", "expect": ["x"]}]}))
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    junit = tmp_path / "junit.xml"
    printed = []
    for options in ([], ["--json"], ["--junit", str(junit)]):
        assert main(["check", "--registry", str(registry), *options, str(golden)]) == 2
        printed.append("".join(capsys.readouterr()))
    written = junit.read_text(encoding="utf-8")
    assert "secret_key=***" in printed[0] and "jwt=***" in written
    for text in (*printed, written):
        assert SECRET not in text and "AKIA1" not in text


@pytest.mark.process
def test_the_mcp_server_and_its_agent_log_mask_a_query_secret(kb: KnowledgeBase, tmp_path: Path) -> None:
    registry = write_registry(tmp_path / "registry", [query_entry(kb, "team")])
    env = {**server_env(tmp_path), "AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_REGION": "us-east-1"}
    raw = RawServer(registry, env, tmp_path / "server.log")
    try:
        raw.initialize()
        (tool,) = raw.request("tools/list")["result"]["tools"]
        reply = raw.request(
            "tools/call", {"name": "recall_search", "arguments": {"db_name": "team", "query": "notes"}}
        )
    finally:
        raw.close()
    assert reply["result"]["isError"] is True
    assert "secret_key=***" in tool["description"]
    log = cli("log", "--json", env={"RECALL_GUI_DATA_DIR": env["RECALL_GUI_DATA_DIR"]})
    assert log.returncode == 0 and "recall_search" in log.stdout
    stored = (Path(env["RECALL_GUI_DATA_DIR"]) / "agent-log.jsonl").read_text(encoding="utf-8")
    for text in (json.dumps(tool), json.dumps(reply), raw.log(), log.stdout, log.stderr, stored):
        assert SECRET not in text and "AKIA1" not in text


@pytest.mark.parametrize(
    "secret",
    [
        f"?jwt={SECRET}",
        f"?pw={SECRET}",
        f"?code={SECRET}",
        f"?session={SECRET}",
        f"#access_token={SECRET}",
        f"?region=eu&auth[token]={SECRET}",
    ],
)
def test_register_refuses_a_secret_under_any_name_unless_told_to_store_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], secret: str
) -> None:
    from recall_gui.cli import main

    registry = tmp_path / "registry"
    assert main(["register", f"s3://bkt/p{secret}", "--name", "team", "--registry", str(registry)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: not registered: the URI s3://bkt/p")
    assert "***" in err and "--store-credentials" in err and SECRET not in err
    assert not (registry / "rag_dbs.json").exists()


@pytest.mark.process
def test_register_refuses_a_uri_with_a_query_secret_unless_told_to_store_it(tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    done = cli("register", f"s3://b/kb?secret_key={SECRET}", "--name", "team", "--registry", str(registry))
    assert done.returncode == 1
    assert done.stderr.startswith("error: not registered: the URI s3://b/kb?secret_key=*** holds a password")
    assert "--store-credentials" in done.stderr and SECRET not in done.stderr
    assert not (registry / "rag_dbs.json").exists()


@pytest.mark.process
@pytest.mark.parametrize("spelling", ["token alone", "query", "query under any name"])
def test_a_provider_address_with_a_token_never_shows_it_nor_its_basic_header(
    kb: KnowledgeBase, fake_provider: FakeProvider, spelling: str
) -> None:
    """The stand-in provider refuses the call and quotes the authorization it was sent: neither the
    token nor the Basic header an HTTP client makes of ``http://TOKEN@host`` reaches the user."""
    write_registry(
        kb.registry_dir,
        [
            {
                "name": kb.name,
                "uri": str(kb.db_dir),
                "description": "notes",
                "embedder": {"Cloud": {"provider": "ollama", "model": "all-minilm"}},
                "created_at": 1,
            }
        ],
    )
    env = fake_provider.environment("ollama")
    base = "http://" + env["OLLAMA_HOST"]
    if spelling == "token alone":
        env["OLLAMA_HOST"] = base.replace("http://", f"http://{SECRET}@")
    elif spelling == "query":
        env["OLLAMA_HOST"] = f"{base}?api_key={SECRET}"
    else:
        env["OLLAMA_HOST"] = f"{base}?jwt={SECRET}"
    done = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "q", env=env)
    assert done.returncode == 1, done.stdout
    basic = base64.b64encode(f"{SECRET}:".encode()).decode()
    for secret in (SECRET, basic):
        assert secret not in done.stdout + done.stderr
    assert "HTTP" in done.stderr  # the provider's answer is still shown
    if spelling == "token alone":  # the token did travel, as the user wrote it: only never shown
        assert any(basic in str(request.headers) for request in fake_provider.requests)
