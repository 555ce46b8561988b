"""Cloud embedding providers cosh supports: OpenAI, Gemini and Ollama, over HTTP with httpx.

Keys and hosts come from the providers' usual environment variables, checked before any request: a key
an HTTP header cannot carry, or an address that is no URL, is refused naming its variable. A key is sent
only in a request header, and every error text this module raises is scrubbed of every form a key can
take in it first. Every failure names the provider and, for HTTP errors, the status. The timeout bounds
each request as a whole, however slowly the answer arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import numpy as np

from recall_gui.core.base.credentials import masked, url_secrets
from recall_gui.core.base.endpoints import address_problem, header_value_problem
from recall_gui.core.base.env_numbers import positive_number
from recall_gui.core.base.errors import InvalidInputError, ProviderError
from recall_gui.core.embedders.base import ModelInfo, Vector

if TYPE_CHECKING:
    import httpx  # imported where a request is made: a command that makes none never loads it

TIMEOUT_ENV = "RECALL_GUI_HTTP_TIMEOUT"
DEFAULT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Endpoint:
    """Where and how to send one provider's embedding request."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]
    secret: str | None


#: Where each provider's key comes from, in order; openai and gemini need one, ollama only behind a proxy.
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "ollama": ("OLLAMA_API_KEY",),
}
_KEY_REQUIRED = frozenset({"openai", "gemini"})
#: Each provider's address variable and its default.
ADDRESS_VARIABLES: dict[str, tuple[str, str]] = {
    "openai": ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
    "gemini": ("GEMINI_BASE_URL", "https://generativelanguage.googleapis.com/v1beta"),
    "ollama": ("OLLAMA_HOST", "http://localhost:11434"),
}


def _provider_known(provider: str) -> None:
    if provider not in KEY_VARIABLES:
        raise ProviderError(
            f'unknown embedding provider "{provider}"', hint="cosh's providers are openai, gemini and ollama."
        )


def _api_key(provider: str, env: Mapping[str, str]) -> str | None:
    """The provider's key from the first of its variables that is set; refused when it is missing but
    needed, or cannot be sent in a header (the message names the variable, never the value)."""
    variables = KEY_VARIABLES[provider]
    for variable in variables:
        key = env.get(variable, "").strip()
        if not key:
            continue
        problem = header_value_problem(key)
        if problem is not None:
            raise ProviderError(
                f"{provider}: the API key in {variable} holds {problem}, which an HTTP header cannot carry",
                hint=f"Set {variable} to the key alone, on one line, without spaces or quotes "
                "(the key is not shown here).",
            )
        return key
    if provider in _KEY_REQUIRED:
        raise ProviderError(
            f"{provider}: {variables[0]} is not set",
            hint=f"Set {variables[0]} in the environment recall-gui starts from.",
        )
    return None


def _base_url(provider: str, env: Mapping[str, str]) -> str:
    """The provider's address from its variable (or the default), refused when it is no HTTP(S) URL."""
    variable, default = ADDRESS_VARIABLES[provider]
    address = env.get(variable, "").strip()
    if not address:
        return default
    if provider == "ollama" and "://" not in address:
        address = f"http://{address}"  # OLLAMA_HOST is usually host:port
    problem = address_problem(address)
    if problem is not None:
        raise ProviderError(
            f"{provider}: {variable} is not a usable address: {problem}",
            hint=f"Set {variable} to the provider's address (by default {default}), or unset it.",
        )
    return address.rstrip("/")


def configuration_problem(provider: str, env: Mapping[str, str]) -> str | None:
    """Why ``provider`` cannot be asked for an embedding with ``env`` (key and address), without a request."""
    try:
        _provider_known(provider)
        _api_key(provider, env)
        _base_url(provider, env)
        _timeout_from_env(env, provider)
    except ProviderError as error:
        return error.message.removeprefix(f"{provider}: ")
    return None


def _endpoint(provider: str, model: str, text: str, dim: int | None, env: Mapping[str, str]) -> Endpoint:
    _provider_known(provider)
    key = _api_key(provider, env)
    base = _base_url(provider, env)
    if provider == "openai":
        return Endpoint(
            f"{base}/embeddings",
            {"Authorization": f"Bearer {key}"},
            {"model": model, "input": [text]},
            key,
        )
    if provider == "gemini":
        body: dict[str, Any] = {"model": f"models/{model}", "content": {"parts": [{"text": text}]}}
        if dim:
            body["outputDimensionality"] = dim
        return Endpoint(f"{base}/models/{model}:embedContent", {"x-goog-api-key": key or ""}, body, key)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return Endpoint(f"{base}/api/embed", headers, {"model": model, "input": text}, key)


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


def cloud_model_info(provider: str, model: str) -> ModelInfo:
    """A cloud model is the agent's own: the provider embeds the query as it does for cosh."""
    return ModelInfo(f"{provider} / {model}", True, f"{provider}'s API, asked as cosh asks it")


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
        self.model_info = cloud_model_info(self.provider, model)
        self._env = env if env is not None else os.environ
        self._timeout_given = timeout
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def _timeout(self) -> float:
        """The bound on one request; raises :class:`ProviderError` when the variable is no usable number."""
        given = self._timeout_given
        return given if given is not None else _timeout_from_env(self._env, self.provider)

    def _http(self) -> httpx.AsyncClient:
        import httpx

        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            self._client = httpx.AsyncClient(timeout=self._timeout, follow_redirects=False)
            self._client_loop = loop
        return self._client

    async def embed_query(self, text: str) -> Vector:
        """The query's vector; every failure is a :class:`ProviderError` whose texts hold no secret.

        The error is raised outside the handler that caught it, so it carries no chained exception
        either: those quote headers and bodies as they were.
        """
        try:
            return await self._embed(text)
        except ProviderError as error:
            failure = ProviderError(self._scrub(error.message), hint=self._scrub(error.hint or "") or None)
        raise failure

    async def _embed(self, text: str) -> Vector:
        import httpx

        endpoint = _endpoint(self.provider, self.model, text, self.dim, self._env)
        timeout = self._timeout
        where = urlsplit(endpoint.url).hostname or self.provider
        variable = ADDRESS_VARIABLES[self.provider][0]
        failure: ProviderError | None = None
        try:
            async with asyncio.timeout(timeout):  # httpx bounds each read; this, the whole answer
                response = await self._http().post(endpoint.url, headers=endpoint.headers, json=endpoint.body)
        except (TimeoutError, httpx.TimeoutException):
            failure = ProviderError(
                f"{self.provider}: no answer from {where} within {timeout:g} s",
                hint="The provider is slow or unreachable; try again, or raise RECALL_GUI_HTTP_TIMEOUT.",
            )
        except httpx.HTTPError as error:
            failure = ProviderError(
                f"{self.provider}: cannot reach {where}: {str(error) or type(error).__name__}",
                hint=f"Check the network and the provider's address ({variable}).",
            )
        except (httpx.InvalidURL, UnicodeError, OverflowError) as error:
            # The checks above should leave nothing for these; if the HTTP stack still refuses, say where.
            failure = ProviderError(
                f"{self.provider}: the request could not be made: {type(error).__name__}: {error}",
                hint=f"Check {variable} and the provider's API key variable for stray characters.",
            )
        if failure is not None:
            raise failure
        if response.status_code >= 400:
            detail = _shortened(self._scrub(_error_detail(response)))  # scrubbed whole, then cut
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
        return masked(scrub_secrets(text, self._secrets()))

    def _secrets(self) -> list[str]:
        """Every key variable's value (as set and as used), and any password in an address variable."""
        secrets: list[str] = []
        for variables in KEY_VARIABLES.values():
            for variable in variables:
                value = self._env.get(variable, "")
                secrets += [value, value.strip()]
        for variable, _default in ADDRESS_VARIABLES.values():
            secrets += url_secrets(self._env.get(variable, ""))
        return [secret for secret in secrets if secret]

    async def aclose(self) -> None:
        if self._client is not None and not self._client.is_closed:
            with contextlib.suppress(RuntimeError):  # the loop it was made on is already closed
                await self._client.aclose()
        self._client = None


#: A piece of a key split at characters a header cannot carry is masked from this length on; shorter ones
#: say nothing about the key.
MASKED_PART_LENGTH = 6
_HEADER_UNSAFE = re.compile(r"[^\x21-\x7e]+")


def _escaped_forms(text: str) -> set[str]:
    """How error texts quote ``text``: Python's repr, as bytes, JSON (ASCII or not), percent-encoded."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "backslashreplace")
    return {
        repr(text)[1:-1],
        repr(raw)[2:-1],
        json.dumps(text)[1:-1],
        json.dumps(text, ensure_ascii=False)[1:-1],
        quote(raw, safe=""),
    }


def secret_forms(secret: str) -> set[str]:
    """Every form ``secret`` can take in an error text: as is, escaped once or twice (a repr inside JSON),
    and the pieces it falls into at characters a header cannot carry."""
    forms = {secret}
    parts = [part for part in _HEADER_UNSAFE.split(secret) if len(part) >= MASKED_PART_LENGTH]
    for base in [secret, *parts]:
        once = _escaped_forms(base)
        forms |= {base} | once
        for escaped in once:
            forms |= _escaped_forms(escaped)
    return {form for form in forms if form}


def scrub_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every form of every secret replaced by ``***`` (longest forms first)."""
    forms: set[str] = set()
    for secret in secrets:
        if secret:
            forms |= secret_forms(secret)
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "***")
    return text


def _timeout_from_env(env: Mapping[str, str], provider: str) -> float:
    """``$RECALL_GUI_HTTP_TIMEOUT`` in seconds (default 30); a value that is no finite number above 0 is
    refused, naming the variable, rather than replaced unseen (``inf`` crashed the HTTP stack)."""
    try:
        return positive_number(TIMEOUT_ENV, DEFAULT_TIMEOUT_S, "seconds", env)
    except InvalidInputError as error:
        raise ProviderError(f"{provider}: {error.message}", hint=error.hint) from None


def _error_detail(response: httpx.Response) -> str:
    """The provider's own error message, if it sent one (a body that is no JSON: its text)."""
    try:
        data = response.json()
    except ValueError:
        return " ".join(response.text.split())
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        message = error.get("message")
        return str(message) if message else ""
    if isinstance(error, str):
        return error
    return ""


def _shortened(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
