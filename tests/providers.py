"""A local stand-in for the cloud embedding providers cosh supports, on 127.0.0.1.

It speaks the request and response shapes of OpenAI (``POST {base}/embeddings``), Gemini
(``POST {base}/models/{model}:embedContent``) and Ollama (``POST /api/embed``), checks the API key the way
each provider sends it, and answers with vectors from a real model (the packaged one), so a search through
it is a real search. A test sets :attr:`FakeProvider.fault` to make it misbehave the ways real providers
do: an HTTP error status with the provider's error body, a late answer, malformed JSON, a vector of the
wrong length.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

#: A key shaped like a real one; tests check it never shows up anywhere a user or a log could see it.
SECRET_KEY = "sk-test-5up3r53cr3t-k3y-n0t-f0r-y0ur-3y35"

FAULTS = ("401", "429", "500", "timeout", "malformed", "wrong_length")
#: Faults beyond :data:`FAULTS`: "trickle" sends a good answer one byte every ``trickle_s`` seconds (each
#: read is quick, the whole answer is not); "echo_key" refuses with the key quoted back in escaped forms.
MORE_FAULTS = ("trickle", "echo_key")


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeProvider:
    """A threaded HTTP server; ``embed`` turns a text into its vector."""

    embed: Callable[[str], Sequence[float]]
    key: str = SECRET_KEY
    #: ``None`` to behave, or one of :data:`FAULTS` and :data:`MORE_FAULTS`.
    fault: str | None = None
    #: How long a "timeout" answer takes (longer than the client waits).
    delay_s: float = 5.0
    #: The pause between two bytes of a "trickle" answer.
    trickle_s: float = 0.2
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        provider = self
        self._closing = threading.Event()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = None
                provider.requests.append(Request(self.path, dict(self.headers.items()), body))
                status, payload = provider.answer(self.path, dict(self.headers.items()), body)
                if provider.fault == "timeout":
                    provider._closing.wait(provider.delay_s)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                if provider.fault == "trickle":
                    self._trickle(status, data)
                    return
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up waiting
                    pass

            def _trickle(self, status: int, data: bytes) -> None:
                head = f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\n"
                head += f"Content-Length: {len(data)}\r\n\r\n"
                self.wfile.write(head.encode())
                for byte in data:
                    if provider._closing.wait(provider.trickle_s):
                        return
                    try:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    except OSError:  # the client gave up waiting
                        return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def environment(self, provider: str) -> dict[str, str]:
        """The provider's usual variables, pointing at this server."""
        if provider == "openai":
            return {"OPENAI_API_KEY": self.key, "OPENAI_BASE_URL": f"{self.url}/v1"}
        if provider == "gemini":
            return {"GEMINI_API_KEY": self.key, "GEMINI_BASE_URL": f"{self.url}/v1beta"}
        return {"OLLAMA_API_KEY": self.key, "OLLAMA_HOST": f"127.0.0.1:{self.port}"}

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    # --- what the server says ----------------------------------------------------------------------

    def answer(self, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        provider, text = _parse(path, body)
        if provider is None:
            return 404, {"error": {"message": f"no route {path}"}}
        sent_key = _key_sent(provider, headers)
        if self.fault == "401" or sent_key != self.key:
            return 401, _error_body(provider, f"Incorrect API key provided: {sent_key}.", "invalid_api_key")
        if self.fault == "echo_key":
            quoted = [repr(sent_key), repr(sent_key.encode()), quote(sent_key, safe="")]
            forms = " ".join([*quoted, json.dumps(repr(sent_key))])
            return 403, _error_body(provider, f"Key not allowed: {forms}", "forbidden")
        if self.fault == "429":
            return 429, _error_body(provider, "Rate limit reached for requests", "rate_limit_exceeded")
        if self.fault == "500":
            return 500, _error_body(provider, "The server had an error while processing your request.", None)
        if self.fault == "malformed":
            return 200, b'{"data": [{"embedding": [0.1, 0.2,'
        vector = [float(x) for x in self.embed(text or "")]
        if self.fault == "wrong_length":
            vector = vector[:100]
        if provider == "openai":
            return 200, {
                "object": "list",
                "data": [{"object": "embedding", "index": 0, "embedding": vector}],
                "model": body.get("model"),
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        if provider == "gemini":
            return 200, {"embedding": {"values": vector}}
        return 200, {"model": body.get("model"), "embeddings": [vector]}


def _parse(path: str, body: Any) -> tuple[str | None, str | None]:
    if not isinstance(body, dict):
        return None, None
    if path.endswith("/embeddings"):
        inputs = body.get("input")
        return "openai", inputs[0] if isinstance(inputs, list) and inputs else inputs
    if path.endswith(":embedContent"):
        parts = body.get("content", {}).get("parts", [{}])
        return "gemini", parts[0].get("text")
    if path == "/api/embed":
        return "ollama", body.get("input")
    return None, None


def _key_sent(provider: str, headers: dict[str, str]) -> str:
    lowered = {k.lower(): v for k, v in headers.items()}
    if provider == "gemini":
        return lowered.get("x-goog-api-key", "")
    return lowered.get("authorization", "").removeprefix("Bearer ")


def _error_body(provider: str, message: str, code: str | None) -> dict[str, Any]:
    if provider == "ollama":
        return {"error": message}
    if provider == "gemini":
        return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}
