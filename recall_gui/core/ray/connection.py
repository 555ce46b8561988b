"""Reaching a Ray cluster, and noticing when it is gone: the address checked before Ray dials it, Ray kept
on loopback for a loopback address, a job watched while it runs.

Ray retries an unreachable address for minutes, printing its own log lines, and a driver whose cluster
died is ended by Ray's C++ core a minute later without a word: both become one :class:`RayStartError` or
:class:`RayLostError` here, with the address and what to check.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from recall_gui.core.base.errors import RecallError

T = TypeVar("T")

#: How long the address may take to accept a connection before it is called unreachable.
REACH_SECONDS = 5.0
#: How long joining a cluster that accepted the connection may take (Ray's own retries last minutes).
JOIN_SECONDS = 15.0
#: How often a running job looks at its cluster, and how many failed looks in a row mean it is gone.
WATCH_SECONDS = 1.0
WATCH_MISSES = 2
#: Ray Client's port when ``ray://host`` names none.
CLIENT_PORT = 10001
#: Ray's switch (read where it decides a node's address): off, a loopback address stays loopback.
_CLUSTER_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
ADDRESS_HINT = (
    "Check the address (a cluster's head as host:6379, or ray://host:10001 for Ray Client), that the "
    "cluster runs, and that this machine can reach that port."
)


class RayStartError(RecallError):
    """Ray could not be started, or its cluster could not be reached."""


class RayLostError(RecallError):
    """The Ray cluster stopped answering while a job ran: the job's result is not given."""


@dataclass(frozen=True)
class RayAddress:
    """A cluster's address as typed: ``host:port``, ``[v6]:port`` or ``ray://host[:port]``."""

    text: str
    host: str
    port: int
    client: bool

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_address(text: str) -> RayAddress | None:
    """The address's host and port, ``None`` for Ray's own words (``auto``, ``local``); refuses the rest."""
    if text in ("auto", "local"):
        return None
    client = text.startswith("ray://")
    rest = text.removeprefix("ray://").rstrip("/")
    host, port = rest, str(CLIENT_PORT) if client else ""
    if rest.startswith("["):
        host, _, after = rest[1:].partition("]")
        if after.startswith(":"):
            port = after[1:]
        elif after:
            host = ""
    elif ":" in rest:
        host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or "/" in host:
        raise RayStartError(
            f"{text} is not a Ray address (host:port, or ray://host[:port] for Ray Client)",
            hint=ADDRESS_HINT,
        )
    return RayAddress(text, host, int(port), client)


def reach(address: RayAddress) -> None:
    """Refuse at once an address nothing answers at (refused, unreachable, unknown host, no answer within
    :data:`REACH_SECONDS`), before Ray retries it for minutes."""
    problem = _unreachable(address.host, address.port, REACH_SECONDS)
    if problem is not None:
        raise RayStartError(
            f"could not reach the Ray cluster at {address.text}: {problem}", hint=ADDRESS_HINT
        )


def _unreachable(host: str, port: int, seconds: float) -> str | None:
    try:
        with socket.create_connection((host, port), timeout=seconds):
            return None
    except ConnectionRefusedError:
        return "the connection was refused (nothing listens at that port)"
    except socket.gaierror:
        return f"the host name {host} cannot be resolved"
    except TimeoutError:
        return f"no answer within {seconds:g} s"
    except OSError as error:
        return error.strerror or str(error)


@contextmanager
def on_loopback(local: bool) -> Iterator[None]:
    """While Ray starts or joins in the block: a Ray started here, or joined at a loopback address
    (``local``), binds and dials loopback only, where Ray would swap 127.0.0.1 for the machine's network
    address. The processes Ray starts inherit the setting; a Ray imported earlier reads it from its
    constants, set too (on a tested Ray). Put back as it was after the block."""
    if not local:
        yield
        return
    saved = os.environ.get(_CLUSTER_SWITCH)
    os.environ[_CLUSTER_SWITCH] = "0"
    constants = sys.modules.get("ray._private.ray_constants")
    from recall_gui.core.base.compat import is_tested

    patch = constants is not None and is_tested("ray") and hasattr(constants, "ENABLE_RAY_CLUSTER")
    before = getattr(constants, "ENABLE_RAY_CLUSTER", None)
    if patch:
        constants.ENABLE_RAY_CLUSTER = False  # type: ignore[union-attr]
    try:
        yield
    finally:
        if patch:
            constants.ENABLE_RAY_CLUSTER = before  # type: ignore[union-attr]
        if saved is None:
            os.environ.pop(_CLUSTER_SWITCH, None)
        else:
            os.environ[_CLUSTER_SWITCH] = saved


@contextmanager
def output_aside(path: Path | None) -> Iterator[None]:
    """Whatever the process writes to its standard error in the block goes to ``path`` (else nowhere):
    Ray's C++ core logs there directly, past Python's logging, while it starts or dials a cluster."""
    sys.stderr.flush()
    try:
        target = open(path if path is not None else os.devnull, "ab")  # noqa: SIM115 (closed below)
    except OSError:
        target = open(os.devnull, "ab")  # noqa: SIM115
    try:
        saved = os.dup(2)
    except OSError:  # no standard error at all (some desktop launchers): nothing to set aside
        target.close()
        yield
        return
    os.dup2(target.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        target.close()


#: The threads a Ray start or stop runs on; one still alive means Ray is not yet started or stopped.
RAY_THREADS = ("ray-join", "ray-shutdown")


def ray_still_busy() -> bool:
    """Whether a join given up on, or a stop past its bound, still runs in this process."""
    return any(thread.name in RAY_THREADS and thread.is_alive() for thread in threading.enumerate())


class _Join:
    """One join attempt: its outcome, and whether the caller gave up on it first (then a join that
    succeeds late is shut down at once: nobody would use or stop it)."""

    def __init__(self, join: Callable[[], None]) -> None:
        self.join = join
        self.lock = threading.Lock()
        self.outcome: list[BaseException | None] = []
        self.given_up = False

    def run(self) -> None:
        try:
            self.join()
        except BaseException as error:  # handed to the waiting thread, which raises it
            result: BaseException | None = error
        else:
            result = None
        with self.lock:
            self.outcome.append(result)
            late = self.given_up and result is None
        if late:
            import ray

            ray.shutdown()

    def give_up(self) -> bool:
        """Give up unless it has ended; whether it was given up."""
        with self.lock:
            self.given_up = not self.outcome
            return self.given_up


def joined_within(join: Callable[[], None], address: str, seconds: float = JOIN_SECONDS) -> None:
    """Run ``join`` (Ray's ``init``) for at most ``seconds``: past that the address answers but not as a
    Ray cluster, and the attempt is left behind (a daemon thread, which stops Ray should it still join)
    with a :class:`RayStartError`."""
    attempt = _Join(join)
    thread = threading.Thread(target=attempt.run, name="ray-join", daemon=True)
    thread.start()
    thread.join(seconds)
    if attempt.give_up():
        raise RayStartError(
            f"the Ray cluster at {address} did not answer within {seconds:g} s (something listens there, "
            "but not a Ray cluster's head, or it is overloaded)",
            hint=ADDRESS_HINT,
        )
    if attempt.outcome[0] is not None:
        raise attempt.outcome[0]


def cluster_problem() -> str | None:
    """Why the Ray this process is connected to cannot serve a job any more, or ``None`` while it can:
    its head (GCS) no longer accepts connections. Ray Client connections report their own loss."""
    import ray

    if not ray.is_initialized():
        return "Ray was shut down"
    if ray.util.client.ray.is_connected():  # type: ignore[no-untyped-call]
        return None
    gcs = ray.get_runtime_context().gcs_address
    host, _, port = gcs.rpartition(":")
    problem = _unreachable(host.strip("[]"), int(port), WATCH_SECONDS * 2)
    return None if problem is None else f"its head at {gcs} no longer answers ({problem})"


def watched(job: Callable[[], T], cancel: threading.Event, what: str) -> T:
    """Run ``job`` (blocking Ray calls) while looking at the cluster every :data:`WATCH_SECONDS`: when it is
    gone, ``cancel`` is set, the job is left behind and :class:`RayLostError` says so — never a result of
    part of the job."""
    outcome: list[tuple[bool, object]] = []

    def run() -> None:
        try:
            outcome.append((True, job()))
        except BaseException as error:  # handed to the watching thread, which raises it
            outcome.append((False, error))

    thread = threading.Thread(target=run, name="ray-job", daemon=True)
    thread.start()
    misses = 0
    while True:
        thread.join(WATCH_SECONDS)
        if outcome:
            done, value = outcome[0]
            if done:
                return value  # type: ignore[return-value]
            raise value  # type: ignore[misc]
        problem = cluster_problem()
        misses = misses + 1 if problem is not None else 0
        if problem is not None and misses >= WATCH_MISSES:
            cancel.set()
            raise RayLostError(
                f"the Ray cluster stopped answering during {what}: {problem}; no result is given",
                hint="Run it again once the cluster is back, or on the local engine.",
            )
