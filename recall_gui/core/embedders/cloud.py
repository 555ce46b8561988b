"""Cloud embedding providers cosh supports: OpenAI, Gemini and Ollama, over HTTP with httpx.

Keys and hosts come from the providers' usual environment variables. A key is sent only in a request
header, and any text that could reach a user (an error body, an exception) is scrubbed of it first.
Every failure names the provider and, for HTTP errors, the status.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

from recall_gui.core.embedders.base import Vector
from recall_gui.core.errors import ProviderError

TIMEOUT_ENV = "RECALL_GUI_HTTP_TIMEOUT"
DEFAULT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Endpoint:
    """Where and how to send one provider's embedding request."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]
    secret: str | None


def _ollama_base(env: Mapping[str, str]) -> str:
    host = env.get("OLLAMA_HOST", "").strip() or "http://localhost:11434"
    if "://" not in host:
        host = f"http://{host}"
    return host.rstrip("/")


def _endpoint(provider: str, model: str, text: str, dim: int | None, env: Mapping[str, str]) -> Endpoint:
    if provider == "openai":
        key = env.get("OPENAI_API_KEY", "").strip()
        if not key:
            raise ProviderError(
                "openai: OPENAI_API_KEY is not set",
                hint="Set OPENAI_API_KEY in the environment recall-gui starts from.",
            )
        base = (env.get("OPENAI_BASE_URL", "").strip() or "https://api.openai.com/v1").rstrip("/")
        return Endpoint(
            f"{base}/embeddings",
            {"Authorization": f"Bearer {key}"},
            {"model": model, "input": [text]},
            key,
        )
    if provider == "gemini":
        key = (env.get("GEMINI_API_KEY", "") or env.get("GOOGLE_API_KEY", "")).strip()
        if not key:
            raise ProviderError(
                "gemini: GEMINI_API_KEY is not set",
                hint="Set GEMINI_API_KEY in the environment recall-gui starts from.",
            )
        base = (
            env.get("GEMINI_BASE_URL", "").strip() or "https://generativelanguage.googleapis.com/v1beta"
        ).rstrip("/")
        body: dict[str, Any] = {"model": f"models/{model}", "content": {"parts": [{"text": text}]}}
        if dim:
            body["outputDimensionality"] = dim
        return Endpoint(f"{base}/models/{model}:embedContent", {"x-goog-api-key": key}, body, key)
    if provider == "ollama":
        token = env.get("OLLAMA_API_KEY", "").strip() or None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return Endpoint(f"{_ollama_base(env)}/api/embed", headers, {"model": model, "input": text}, token)
    raise ProviderError(
        f'unknown embedding provider "{provider}"', hint="cosh's providers are openai, gemini and ollama."
    )


def _extract(provider: str, data: Any) -> list[Any]:
    """The vector inside a provider's JSON answer; raises ``KeyError``/``TypeError``/``IndexError``."""
    if provider == "openai":
        return list(data["data"][0]["embedding"])
    if provider == "gemini":
        return list(data["embedding"]["values"])
    embeddings = data.get("embeddings")
    return list(embeddings[0] if embeddings is not None else data["embedding"])


_STATUS_HINTS = {
    400: "The provider rejected the request; check the model name in the registry.",
    401: "The API key was refused; check it.",
    403: "The API key is not allowed to use this model; check its permissions.",
    404: "The model or endpoint was not found; check the model name and the base URL.",
    429: "The provider is rate-limiting or out of quota; wait a moment and search again.",
}


class CloudEmbedder:
    """One provider and model; a fresh HTTP client per event loop, reused across queries."""

    def __init__(
        self,
        provider: str,
        model: str,
        *,
        dim: int | None = None,
        dim_from_table: bool = False,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.provider = provider.lower()
        self.model = model
        self.dim = dim
        #: Whether ``dim`` is the table's width (the model's own width is unknown), for error messages.
        self.dim_from_table = dim_from_table
        self.used = f"{self.provider} / {model}"
        self._env = env if env is not None else os.environ
        self._timeout = timeout if timeout is not None else _timeout_from_env(self._env)
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def _http(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            self._client = httpx.AsyncClient(timeout=self._timeout, follow_redirects=False)
            self._client_loop = loop
        return self._client

    async def embed_query(self, text: str) -> Vector:
        endpoint = _endpoint(self.provider, self.model, text, self.dim, self._env)
        where = httpx.URL(endpoint.url).host or endpoint.url
        try:
            response = await self._http().post(endpoint.url, headers=endpoint.headers, json=endpoint.body)
        except UnicodeEncodeError:
            # Never show the error itself: it quotes the header, which holds the key.
            raise ProviderError(
                f"{self.provider}: the API key holds characters an HTTP header cannot carry",
                hint="Check the key in the environment for stray characters (quotes, spaces, accents).",
            ) from None
        except httpx.TimeoutException:
            raise ProviderError(
                f"{self.provider}: no answer from {where} within {self._timeout:g} s",
                hint="The provider is slow or unreachable; try again, or raise RECALL_GUI_HTTP_TIMEOUT.",
            ) from None
        except httpx.HTTPError as error:
            raise ProviderError(
                f"{self.provider}: cannot reach {where}: {self._scrub(str(error) or type(error).__name__)}",
                hint="Check the network and the provider's base URL (OPENAI_BASE_URL, OLLAMA_HOST, ...).",
            ) from None
        if response.status_code >= 400:
            detail = self._scrub(_error_detail(response))
            hint = _STATUS_HINTS.get(response.status_code) or (
                "The provider had a server error; try again later."
                if response.status_code >= 500
                else "The provider refused the request."
            )
            raise ProviderError(
                f"{self.provider}: HTTP {response.status_code} {response.reason_phrase}"
                + (f": {detail}" if detail else ""),
                hint=hint,
            )
        try:
            values = _extract(self.provider, response.json())
            vector = np.asarray(values, dtype=np.float32)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError, json.JSONDecodeError):
            raise ProviderError(
                f"{self.provider}: the response is not an embedding (malformed JSON from {where})",
                hint="Check that the base URL points at the provider's API.",
            ) from None
        if vector.ndim != 1 or vector.size == 0:
            raise ProviderError(
                f"{self.provider}: the response holds no vector",
                hint="Check that the base URL points at the provider's API.",
            )
        if not np.all(np.isfinite(vector)):
            raise ProviderError(f"{self.provider}: the returned vector holds NaN or infinite values")
        if self.dim is not None and vector.size != self.dim:
            expected = (
                f"the table holds {self.dim}-dimensional vectors"
                if self.dim_from_table
                else f"{self.model} has {self.dim} dimensions"
            )
            raise ProviderError(
                f"{self.provider}: returned a vector of length {vector.size}, but {expected}",
                hint="Check the model name in the registry against the one that built the table.",
            )
        return vector

    def _scrub(self, text: str) -> str:
        for name in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OLLAMA_API_KEY"):
            secret = self._env.get(name, "").strip()
            if secret:
                text = text.replace(secret, "***")
        return text

    async def aclose(self) -> None:
        if self._client is not None and not self._client.is_closed:
            with contextlib.suppress(RuntimeError):  # the loop it was made on is already closed
                await self._client.aclose()
        self._client = None


def _timeout_from_env(env: Mapping[str, str]) -> float:
    try:
        value = float(env.get(TIMEOUT_ENV, "") or DEFAULT_TIMEOUT_S)
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


def _error_detail(response: httpx.Response) -> str:
    """The provider's own error message, if it sent one, kept short."""
    try:
        data = response.json()
    except ValueError:
        text = " ".join(response.text.split())
        return text[:200]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        message = error.get("message")
        return str(message)[:300] if message else ""
    if isinstance(error, str):
        return error[:300]
    return ""
