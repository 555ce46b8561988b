"""S3-compatible storage for tests: a moto server on 127.0.0.1, behind a proxy a test can stop and start.

The moto server runs in its own process (its state lives there). Clients talk to it through
:class:`StoppableProxy`: stopping the proxy closes its listening socket and every open connection, which is
what a client sees when a storage server goes down; starting it again listens on the same port, with the
data still there, which is what a client sees when the server is back. Nothing here contacts any address
but 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.waiting import wait_until

HOST = "127.0.0.1"
ACCESS_KEY = "recall-test-access-key"
SECRET_KEY = "recall-test-secret-key-do-not-print"
REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def port_open(port: int) -> bool:
    try:
        socket.create_connection((HOST, port), 0.2).close()
    except OSError:
        return False
    return True


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    wait_until(lambda: port_open(port), f"the S3 server listens on port {port}", timeout)


class MotoServer:
    """``python -m moto.server`` bound to 127.0.0.1 on a free port, in a child process."""

    def __init__(self) -> None:
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        try:
            wait_for_port(self.port)
        except OSError:
            self.close()
            raise

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    def client(self) -> object:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        )

    def close(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class RunMoto:
    """A worker's moto server while the tests that use it run: started by the first of them and stopped
    after the last test of a module that uses it when the next module does not. (Kept to the end of the
    run before, each worker's held ~60 MB through the window tests that followed.)"""

    def __init__(self) -> None:
        self._server: MotoServer | None = None

    @property
    def running(self) -> bool:
        return self._server is not None

    def server(self) -> MotoServer:
        """The running server, started first if it is not running."""
        if self._server is None:
            self._server = MotoServer()
        return self._server

    def stop(self) -> None:
        """Stop the server this started (nothing when it is not running)."""
        server, self._server = self._server, None
        if server is not None:
            server.close()


class StoppableProxy:
    """A TCP relay from a fixed 127.0.0.1 port to ``target_port`` that can go down and come back."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        #: When set, connections are accepted and then never answered (a server that hangs).
        self.hanging = threading.Event()
        self.start()

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self._listener is not None

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((HOST, self.port))
        listener.listen(64)
        self._listener = listener
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, args=(listener,), daemon=True)
        self._thread.start()

    def hang(self) -> None:
        """Cut open connections; accept new ones but never answer them."""
        self.stop()
        self.hanging.set()
        self.start()

    def resume(self) -> None:
        """Answer again (after :meth:`hang` or :meth:`stop`)."""
        if self.running:
            self.stop()
        self.hanging.clear()
        self.start()

    def stop(self) -> None:
        """Refuse new connections and cut every open one, as a server that went down does."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        self._thread = None
        self._listener = None

    def _serve(self, listener: socket.socket) -> None:
        pairs: dict[socket.socket, socket.socket] = {}
        with selectors.DefaultSelector() as selector:
            listener.setblocking(False)
            selector.register(listener, selectors.EVENT_READ)
            try:
                while not self._stop.is_set():
                    for key, _ in selector.select(0.05):
                        sock = key.fileobj
                        assert isinstance(sock, socket.socket)
                        if sock is listener:
                            self._accept(listener, selector, pairs)
                            continue
                        peer = pairs.get(sock)
                        try:
                            data = sock.recv(65536)
                        except OSError:
                            data = b""
                        if not data or peer is None:
                            self._drop(sock, selector, pairs)
                            continue
                        if peer is sock:  # a hanging connection
                            continue
                        try:
                            peer.sendall(data)
                        except OSError:
                            self._drop(sock, selector, pairs)
            finally:
                for sock in list(pairs):
                    self._drop(sock, selector, pairs)
                selector.unregister(listener)
                listener.close()

    def _accept(
        self,
        listener: socket.socket,
        selector: selectors.BaseSelector,
        pairs: dict[socket.socket, socket.socket],
    ) -> None:
        try:
            client, _ = listener.accept()
        except BlockingIOError:
            return
        if self.hanging.is_set():
            client.setblocking(True)
            pairs[client] = client  # read and drop whatever it sends; never answer
            selector.register(client, selectors.EVENT_READ)
            return
        try:
            upstream = socket.create_connection((HOST, self.target_port), 5)
        except OSError:
            client.close()
            return
        client.setblocking(True)
        upstream.setblocking(True)
        pairs[client], pairs[upstream] = upstream, client
        selector.register(client, selectors.EVENT_READ)
        selector.register(upstream, selectors.EVENT_READ)

    @staticmethod
    def _drop(
        sock: socket.socket, selector: selectors.BaseSelector, pairs: dict[socket.socket, socket.socket]
    ) -> None:
        peer = pairs.pop(sock, None)
        for each in (sock, peer):
            if each is None:
                continue
            pairs.pop(each, None)
            with contextlib.suppress(KeyError, ValueError):
                selector.unregister(each)
            with contextlib.suppress(OSError):
                each.shutdown(socket.SHUT_RDWR)
            each.close()


@dataclass(frozen=True)
class S3Location:
    """A bucket on the test server, reached through a stoppable proxy."""

    bucket: str
    proxy: StoppableProxy

    @property
    def endpoint(self) -> str:
        return self.proxy.endpoint

    def uri(self, *parts: str) -> str:
        return "s3://" + "/".join([self.bucket, *parts])

    def storage_options(self) -> dict[str, str]:
        """What a registry entry's ``storage_options`` holds for this server (LanceDB's key names)."""
        return {
            "aws_endpoint": self.endpoint,
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_region": REGION,
            "allow_http": "true",
        }

    def environment(self) -> dict[str, str]:
        """The standard AWS environment variables that point at this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ALLOW_HTTP": "true",
        }


def upload_tree(client: object, bucket: str, local: Path, prefix: str) -> None:
    """Copy a local LanceDB directory to ``s3://bucket/prefix`` byte for byte."""
    for path in sorted(local.rglob("*")):
        if path.is_file():
            key = f"{prefix}/{path.relative_to(local).as_posix()}"
            client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())  # type: ignore[attr-defined]


@contextlib.contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """Set environment variables for the block (the core reads AWS_* through LanceDB at connect time)."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
