"""Cloud embedders against a local server speaking each provider's API: real searches, clear failures,
and API keys that never show up in messages, logs, stderr or files."""

from __future__ import annotations

import asyncio
import logging
import os
import traceback
from pathlib import Path

import pytest

from recall_gui.core import Harness
from recall_gui.core.errors import DimensionMismatchError, ProviderError, RecallError
from recall_gui.core.harness import SearchReport
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, write_registry
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


def test_a_key_that_cannot_travel_in_a_header_is_refused_without_showing_it(
    kb: KnowledgeBase, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad_key = "sk-clé-secrète-" + SECRET_KEY
    monkeypatch.setenv("OPENAI_API_KEY", bad_key)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{fake_provider.url}/v1")
    cloud_registry(kb, "openai")
    with pytest.raises(RecallError) as caught:
        search(kb, "x")
    assert "API key holds characters" in caught.value.message
    assert_no_secret(caught.value.full_text(), "".join(traceback.format_exception(caught.value)))


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
