"""A stand-in for the Hugging Face model hub on 127.0.0.1: the few endpoints fastembed's download asks
(a repository's info, its file tree, and each file by revision), serving the files a test gives it.

``trickle`` holds every file download (after its headers) until released, so a test can cancel one
midway; ``failing`` answers every request with an error status (a hub that is up but cannot serve);
``requests`` lists what was asked, so a test can see that nothing else was.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

REVISION = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class ModelHub:
    """Serves ``files`` ({path in repo: local file}) of the repository ``repo``."""

    repo: str
    files: dict[str, Path]
    requests: list[str] = field(default_factory=list)
    #: When set, a file's body is sent in small pieces, waiting for ``resume`` between them.
    trickle: bool = False
    resume: threading.Event = field(default_factory=threading.Event)
    started_body: threading.Event = field(default_factory=threading.Event)
    #: When set, every request is answered with this status.
    failing: int | None = None

    def __post_init__(self) -> None:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                return

            def do_HEAD(self) -> None:
                hub.requests.append(f"HEAD {self.path}")
                hub.answer(self, body=False)

            def do_GET(self) -> None:
                hub.requests.append(f"GET {self.path}")
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a cancelled client
                    hub.answer(self, body=True)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self.resume.set()
        self._server.shutdown()
        self._server.server_close()

    # --- answers -------------------------------------------------------------------------------------

    def _entries(self) -> list[dict[str, Any]]:
        entries = []
        for name, path in sorted(self.files.items()):
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            entries.append(
                {
                    "type": "file",
                    "path": name,
                    "size": len(data),
                    "oid": hashlib.sha1(data).hexdigest(),
                    "lfs": {"oid": digest, "size": len(data), "pointerSize": 134},
                }
            )
        return entries

    def answer(self, handler: BaseHTTPRequestHandler, *, body: bool) -> None:
        if self.failing is not None:
            return self._send(handler, self.failing, b'{"error": "failing"}', "application/json", body)
        path = unquote(urlsplit(handler.path).path)
        api = f"/api/models/{self.repo}"
        if path in (api, f"{api}/revision/main", f"{api}/revision/{REVISION}"):
            info = {
                "id": self.repo,
                "modelId": self.repo,
                "sha": REVISION,
                "private": False,
                "siblings": [{"rfilename": name} for name in sorted(self.files)],
            }
            return self._send(handler, 200, json.dumps(info).encode(), "application/json", body)
        if path.startswith(f"{api}/tree/"):
            return self._send(handler, 200, json.dumps(self._entries()).encode(), "application/json", body)
        for revision in (REVISION, "main"):
            prefix = f"/{self.repo}/resolve/{revision}/"
            if path.startswith(prefix) and path[len(prefix) :] in self.files:
                return self._send_file(handler, self.files[path[len(prefix) :]], body)
        return self._send(handler, 404, b'{"error": "not found"}', "application/json", body)

    def _send(self, handler: BaseHTTPRequestHandler, status: int, data: bytes, kind: str, body: bool) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(data)))
        handler.send_header("X-Repo-Commit", REVISION)
        if status == 404:
            handler.send_header("X-Error-Code", "EntryNotFound")
        handler.end_headers()
        if body:
            handler.wfile.write(data)

    def _send_file(self, handler: BaseHTTPRequestHandler, path: Path, body: bool) -> None:
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        start = 0
        ranged = handler.headers.get("Range", "")
        if ranged.startswith("bytes=") and ranged.endswith("-"):
            start = int(ranged[len("bytes=") : -1])
        handler.send_response(206 if start else 200)
        handler.send_header("Content-Type", "application/octet-stream")
        handler.send_header("Content-Length", str(len(data) - start))
        if start:
            handler.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        handler.send_header("X-Repo-Commit", REVISION)
        handler.send_header("ETag", f'"{digest}"')
        handler.send_header("X-Linked-Etag", f'"{digest}"')
        handler.send_header("X-Linked-Size", str(len(data)))
        handler.send_header("Accept-Ranges", "bytes")
        handler.end_headers()
        if not body:
            return
        rest = data[start:]
        if not self.trickle:
            handler.wfile.write(rest)
            return
        for offset in range(0, len(rest), 1 << 16):
            handler.wfile.write(rest[offset : offset + (1 << 16)])
            handler.wfile.flush()
            self.started_body.set()
            if not self.resume.wait(timeout=60):
                return


@contextmanager
def model_hub(repo: str, files: dict[str, Path]) -> Iterator[ModelHub]:
    hub = ModelHub(repo, files)
    try:
        yield hub
    finally:
        hub.close()
