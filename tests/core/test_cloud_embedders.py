"""Cloud embedders against a local server speaking each provider's API: real searches, clear failures,
and API keys that never show up in messages, logs, stderr or files."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
import traceback
from pathlib import Path
from typing import Any
from urllib.parse import quote

import lancedb
import pytest

from recall_gui.core.base.errors import DimensionMismatchError, ProviderError
from recall_gui.core.search.harness import Harness, SearchReport
from recall_gui.core.search.nearest import INLINE_RANK_BYTES, prepare
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, perturbed_target, write_registry
from tests.providers import FAULTS, SECRET_KEY, FakeProvider

#: Models whose width cosh knows (ollama all-minilm: 384) and ones it does not (the table decides).
MODELS = {"openai": "text-embedding-local", "gemini": "text-embedding-local", "ollama": "all-minilm"}


def cloud_registry(kb: KnowledgeBase, provider: str, model: str | None = None) -> Path:
    entry = {
        "name": kb.name,
        "uri": str(kb.db_dir),
        "description": "notes",
        "embedder": {"Cloud": {"provider": provider, "model": model or MODELS[provider]}},
        "created_at": 1,
    }
    return write_registry(kb.registry_dir, [entry])


def search(kb: KnowledgeBase, query: str) -> SearchReport:
    async def go() -> SearchReport:
        harness = Harness(kb.registry_dir)
        try:
            return await harness.run({"db_name": kb.name, "query": query, "limit": 3})
        finally:
            await harness.aclose()

    return asyncio.run(go())


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        assert SECRET_KEY not in text


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_a_cloud_database_is_searched_through_the_provider_api(
    provider: str, kb: KnowledgeBase, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in fake_provider.environment(provider).items():
        monkeypatch.setenv(key, value)
    cloud_registry(kb, provider)
    report = search(kb, "What is the capital of France?")
    assert report.result.hits[0].id == "paris"
    assert report.model_used == f"{provider} / {MODELS[provider]}"
    (request,) = fake_provider.requests
    assert "What is the capital of France?" in str(request.body)
    assert (
        request.path
        == {
            "openai": "/v1/embeddings",
            "gemini": "/v1beta/models/text-embedding-local:embedContent",
            "ollama": "/api/embed",
        }[provider]
    )
    sent = {k.lower(): v for k, v in request.headers.items()}
    assert (sent.get("x-goog-api-key") or sent["authorization"].removeprefix("Bearer ")) == SECRET_KEY


@pytest.mark.slow  # 11,000 rows of 384 floats written, read into memory and ranked: ~3 s
def test_a_cloud_query_over_vectors_too_big_to_rank_inline_is_ranked_as_lancedbs_flat_search(
    tmp_path: Path,
    passage_vectors: Any,
    embedder: Any,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The provider's answer comes on the event loop, so it is awaited there before the ranking thread."""
    rows = 11_000
    assert rows * 384 * 4 > INLINE_RANK_BYTES  # ranked on the compute thread, not inline
    target = perturbed_target(tmp_path, passage_vectors, rows=rows)
    for key, value in fake_provider.environment("openai").items():
        monkeypatch.setenv(key, value)
    entry = {
        "name": "many",
        "uri": target.uri,
        "description": "notes",
        "embedder": {"Cloud": {"provider": "openai", "model": MODELS["openai"]}},
        "created_at": 1,
    }
    registry = write_registry(tmp_path / "registry", [entry])
    query = "What is the capital of France?"

    async def go() -> SearchReport:
        harness = Harness(registry)
        try:
            assert await prepare(harness.session, target) is None  # its vectors are in memory
            return await harness.run({"db_name": "many", "query": query, "limit": 5})
        finally:
            await harness.aclose()

    report = asyncio.run(go())
    assert report.result.method == "exact"
    table = lancedb.connect(target.uri).open_table("many")
    oracle = table.search(embedder.embed_sync(query)).distance_type("l2").bypass_vector_index().limit(5)
    assert [hit.id for hit in report.result.hits] == [row["id"] for row in oracle.to_list()]
    assert len(fake_provider.requests) == 1


@pytest.mark.parametrize("case", [(p, f) for p in sorted(MODELS) for f in FAULTS], ids="-".join)
def test_each_provider_fault_is_a_clear_message_without_the_key(
    case: tuple[str, str],
    kb: KnowledgeBase,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider, fault = case
    caplog.set_level(logging.DEBUG)
    for key, value in fake_provider.environment(provider).items():
        monkeypatch.setenv(key, value)
    if fault == "timeout":  # only this case waits for the client's timeout; the others answer at once
        monkeypatch.setenv("RECALL_GUI_HTTP_TIMEOUT", "0.5")
    fake_provider.fault = fault
    cloud_registry(kb, provider)
    with pytest.raises(ProviderError) as caught:
        search(kb, "capital of France")
    error = caught.value
    assert error.message.startswith(f"{provider}: ")
    expected = {
        "401": "HTTP 401 Unauthorized",
        "429": "HTTP 429 Too Many Requests",
        "500": "HTTP 500 Internal Server Error",
        "timeout": "no answer from 127.0.0.1 within 0.5 s",
        "malformed": "the response is not an embedding (malformed JSON",
        "wrong_length": "returned a vector of length 100, but",
    }[fault]
    assert expected in error.message
    assert error.hint
    formatted = "".join(traceback.format_exception(error))
    assert_no_secret(error.full_text(), repr(error), formatted, caplog.text)


def test_the_provider_error_text_is_kept_with_the_key_masked(
    kb: KnowledgeBase, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in fake_provider.environment("openai").items():
        monkeypatch.setenv(key, value)
    fake_provider.fault = "401"
    cloud_registry(kb, "openai")
    with pytest.raises(ProviderError) as caught:
        search(kb, "x")
    assert "Incorrect API key provided: ***." in caught.value.message
    assert "The API key was refused" in (caught.value.hint or "")


def test_wrong_length_from_a_model_of_known_width_names_the_model(
    kb: KnowledgeBase, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in fake_provider.environment("ollama").items():
        monkeypatch.setenv(key, value)
    fake_provider.fault = "wrong_length"
    cloud_registry(kb, "ollama", "all-minilm")
    with pytest.raises(ProviderError, match="length 100, but all-minilm has 384 dimensions"):
        search(kb, "x")
    cloud_registry(kb, "ollama", "some-new-model")
    with pytest.raises(ProviderError, match="length 100, but the table holds 384-dimensional vectors"):
        search(kb, "x")


def test_a_known_model_of_another_width_is_refused_before_any_request(
    kb: KnowledgeBase, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in fake_provider.environment("openai").items():
        monkeypatch.setenv(key, value)
    cloud_registry(kb, "openai", "text-embedding-3-small")
    with pytest.raises(DimensionMismatchError, match="input has 1536, but table schema has 384"):
        search(kb, "x")
    assert fake_provider.requests == []


@pytest.mark.parametrize(
    ("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("gemini", "GEMINI_API_KEY")]
)
def test_a_missing_key_is_named(
    provider: str, variable: str, kb: KnowledgeBase, fake_provider: FakeProvider
) -> None:
    cloud_registry(kb, provider)
    with pytest.raises(ProviderError, match=f"{provider}: {variable} is not set"):
        search(kb, "x")


def test_an_unreachable_provider_is_named(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.s3server import free_port

    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
    cloud_registry(kb, "ollama")
    with pytest.raises(ProviderError, match=r"ollama: cannot reach 127\.0\.0\.1"):
        search(kb, "x")


#: Keys that cannot be an HTTP header value, and what the message says they hold.
BAD_KEYS = {
    "newline": (SECRET_KEY[:20] + "\n" + SECRET_KEY[20:], "a line break"),
    "crlf": (SECRET_KEY[:20] + "\r\n" + SECRET_KEY[20:], "a line break"),
    "accent": ("sk-clé-secrète-" + SECRET_KEY, "a character outside ASCII"),
    "space": (SECRET_KEY[:20] + " " + SECRET_KEY[20:], "a space"),
    "control": (SECRET_KEY[:20] + "\x01" + SECRET_KEY[20:], "a control character"),
    "undecodable byte": (SECRET_KEY[:20] + "\udcff" + SECRET_KEY[20:], "a character outside ASCII"),
}
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY", "ollama": "OLLAMA_API_KEY"}


def key_parts(key: str) -> list[str]:
    """The pieces a key falls into at the characters a header cannot carry."""
    return [part for part in re.split(r"[^\x21-\x7e]+", key) if len(part) >= 8]


KEY_CASES = [(provider, bad) for provider in sorted(KEY_VARIABLES) for bad in sorted(BAD_KEYS)]


@pytest.mark.parametrize("case", KEY_CASES, ids="-".join)
def test_a_key_that_cannot_travel_in_a_header_is_refused_before_any_request_naming_its_variable(
    case: tuple[str, str],
    kb: KnowledgeBase,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    provider, bad = case
    key, what = BAD_KEYS[bad]
    for name, value in fake_provider.environment(provider).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(KEY_VARIABLES[provider], key)
    cloud_registry(kb, provider)
    with pytest.raises(ProviderError) as caught:
        search(kb, "x")
    error = caught.value
    assert error.message == f"{provider}: the API key in {KEY_VARIABLES[provider]} holds {what}, " + (
        "which an HTTP header cannot carry"
    )
    assert KEY_VARIABLES[provider] in (error.hint or "")
    assert fake_provider.requests == []
    shown = [error.full_text(), repr(error), "".join(traceback.format_exception(error)), caplog.text]
    for part in key_parts(key):
        assert not any(part in text for text in shown), part


def test_the_gemini_key_is_named_by_the_variable_it_came_from(
    kb: KnowledgeBase, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_BASE_URL", f"{fake_provider.url}/v1beta")
    monkeypatch.setenv("GOOGLE_API_KEY", BAD_KEYS["newline"][0])
    cloud_registry(kb, "gemini")
    with pytest.raises(ProviderError, match="the API key in GOOGLE_API_KEY holds a line break"):
        search(kb, "x")


@pytest.mark.process
def test_list_and_search_say_which_variable_holds_a_key_that_cannot_be_sent(
    kb: KnowledgeBase, fake_provider: FakeProvider, isolated_app_dirs: Path
) -> None:
    cloud_registry(kb, "openai")
    env = {**fake_provider.environment("openai"), "OPENAI_API_KEY": BAD_KEYS["crlf"][0]}
    listed = cli("list", "--registry", str(kb.registry_dir), "--json", env=env)
    (row,) = json.loads(listed.stdout)
    assert row["health"]["model"] == "failed"
    assert any("OPENAI_API_KEY holds a line break" in problem for problem in row["problems"])
    searched = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "x", env=env)
    assert searched.returncode == 1
    assert "error: openai: the API key in OPENAI_API_KEY holds a line break" in searched.stderr
    for part in key_parts(BAD_KEYS["crlf"][0]):
        assert part not in listed.stdout + listed.stderr + searched.stdout + searched.stderr


@pytest.mark.parametrize(
    "secret",
    [
        SECRET_KEY,
        BAD_KEYS["newline"][0],
        BAD_KEYS["crlf"][0],
        BAD_KEYS["accent"][0],
        "sk-abc/def+ghi=jkl\\mno'pqr\"stu",
    ],
    ids=["plain", "newline", "crlf", "accent", "punctuation"],
)
def test_every_form_a_key_can_take_in_an_error_text_is_masked(secret: str) -> None:
    from recall_gui.core.embedders.cloud import scrub_secrets

    forms = [
        secret,
        repr(secret),
        repr(secret.encode("utf-8")),
        repr(f"Bearer {secret}".encode()),
        json.dumps(secret),
        json.dumps(secret, ensure_ascii=False),
        json.dumps(repr(secret)),
        repr(repr(secret)),
        quote(secret, safe=""),
        *key_parts(secret),
    ]
    for form in forms:
        text = f"Illegal header value {form}: rejected"
        scrubbed = scrub_secrets(text, [secret])
        assert scrubbed.startswith("Illegal header value ") and scrubbed.endswith(": rejected")
        assert "***" in scrubbed, form
        for part in key_parts(secret):
            assert part not in scrubbed, form
    assert scrub_secrets("nothing secret here", [secret]) == "nothing secret here"


def test_a_provider_quoting_the_key_back_escaped_gets_it_masked(
    kb: KnowledgeBase,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_provider.key = "sk-abc/def+ghi=jkl\\mno'pqr" + SECRET_KEY
    for name, value in fake_provider.environment("openai").items():
        monkeypatch.setenv(name, value)
    fake_provider.fault = "echo_key"
    cloud_registry(kb, "openai")
    with pytest.raises(ProviderError) as caught:
        search(kb, "x")
    message = caught.value.message
    assert message.startswith("openai: HTTP 403 Forbidden: Key not allowed: ")
    assert message.count("***") == 4  # repr, bytes repr, percent-encoded, repr inside JSON
    assert "sk-abc" not in message and "5up3r53cr3t" not in caught.value.full_text()


#: Addresses that cannot be used, per provider variable, and what the message says.
BAD_ADDRESSES = [
    ("openai", "OPENAI_BASE_URL", "http://127.0.0.1:99999/v1", "port"),
    ("openai", "OPENAI_BASE_URL", "http://[::1", "IPv6"),
    ("openai", "OPENAI_BASE_URL", "ftp://127.0.0.1/v1", "scheme"),
    ("openai", "OPENAI_BASE_URL", "http:///v1", "no host"),
    ("gemini", "GEMINI_BASE_URL", "https://127.0.0.1:0/v1beta", "port"),
    ("gemini", "GEMINI_BASE_URL", "https://exa mple.com/v1beta", "space"),
    ("ollama", "OLLAMA_HOST", "127.0.0.1:99999", "port"),
    ("ollama", "OLLAMA_HOST", "http://[::1", "IPv6"),
    ("ollama", "OLLAMA_HOST", "127.0.0.1:abc", "port"),
    ("ollama", "OLLAMA_HOST", "bad\udcffhost:11434", "outside ASCII"),
]


@pytest.mark.parametrize("case", BAD_ADDRESSES, ids=lambda case: "-".join(case[:3]))
def test_an_address_that_cannot_be_used_is_named_before_any_request(
    case: tuple[str, str, str, str],
    kb: KnowledgeBase,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider, variable, address, said = case
    for name, value in fake_provider.environment(provider).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(variable, address)
    cloud_registry(kb, provider)
    with pytest.raises(ProviderError) as caught:
        search(kb, "x")
    assert caught.value.message.startswith(f"{provider}: {variable} is not a usable address: ")
    assert said in caught.value.message
    assert variable in (caught.value.hint or "")
    caught.value.full_text().encode("utf-8")
    assert fake_provider.requests == []
    from recall_gui.core.embedders.pool import model_problem
    from recall_gui.core.registry.registry import load_registry

    problem = model_problem(load_registry(kb.registry_dir).databases[0].embedder)
    assert problem is not None and f"{variable} is not a usable address" in problem


def test_the_timeout_bounds_the_whole_request_not_each_read(
    kb: KnowledgeBase, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A provider sending its answer a byte at a time: each read is quick, the answer never whole."""
    for name, value in fake_provider.environment("openai").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("RECALL_GUI_HTTP_TIMEOUT", "1")
    fake_provider.fault = "trickle"
    fake_provider.trickle_s = 0.1  # well inside the per-read timeout; the whole answer takes minutes
    cloud_registry(kb, "openai")

    async def bounded() -> SearchReport:
        harness = Harness(kb.registry_dir)
        try:
            # Without a bound on the whole request this would wait for every byte.
            return await asyncio.wait_for(harness.run({"db_name": kb.name, "query": "x"}), 15)
        finally:
            await harness.aclose()

    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"openai: no answer from 127\.0\.0\.1 within 1 s"):
        asyncio.run(bounded())
    assert time.monotonic() - started < 10


@pytest.mark.process
def test_the_cli_never_prints_or_writes_the_key(
    kb: KnowledgeBase, fake_provider: FakeProvider, isolated_app_dirs: Path
) -> None:
    cloud_registry(kb, "openai")
    env = {**fake_provider.environment("openai"), "RECALL_GUI_HTTP_TIMEOUT": "5"}
    fake_provider.fault = "401"
    failed = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "x", env=env)
    assert failed.returncode == 1
    assert "error: openai: HTTP 401 Unauthorized: Incorrect API key provided: ***." in failed.stderr
    fake_provider.fault = None
    ok = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "Berlin", env=env)
    assert ok.returncode == 0, ok.stderr
    listed = cli("list", "--registry", str(kb.registry_dir), "--json", env=env)
    assert listed.returncode == 0
    assert_no_secret(failed.stdout, failed.stderr, ok.stdout, ok.stderr, listed.stdout, listed.stderr)
    written = [kb.registry_dir, isolated_app_dirs, Path(os.environ["RECALL_GUI_CACHE_DIR"])]
    for root in written:
        for path in root.rglob("*"):
            if path.is_file() and path.stat().st_size < 5_000_000:
                assert SECRET_KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("value", ["inf", "1e400", "nan", "0", "-5", "thirty"])
def test_a_timeout_that_is_no_usable_number_is_named_not_replaced(
    value: str, kb: KnowledgeBase, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, setting in fake_provider.environment("openai").items():
        monkeypatch.setenv(name, setting)
    monkeypatch.setenv("RECALL_GUI_HTTP_TIMEOUT", value)
    cloud_registry(kb, "openai")
    with pytest.raises(ProviderError) as caught:
        search(kb, "x")
    said = f"openai: RECALL_GUI_HTTP_TIMEOUT is '{value}', not a number of seconds above 0"
    assert caught.value.message == said
    assert fake_provider.requests == []
