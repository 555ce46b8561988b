"""Ray for the whole-table jobs (near-duplicates, golden checks): an optional extra, started or joined here.

Without an address, a Ray of this machine's cores is started for the job and stopped after it: its files
under the app's cache folder, no dashboard, no usage report. Ray asks cloud metadata hosts which cloud it
runs on while it starts, even with usage reports off; while it starts, web requests are pointed at a closed
local port, so nothing leaves the machine, and the processes it starts get the user's own proxy settings
back. A one-time token of this process guards the local Ray (Ray then writes nothing to ~/.ray).

With an address (``ray://host:10001`` or a cluster's ``host:6379``) the job joins that cluster, whose
nodes must have ``recall-gui[scale]`` installed and reach the databases at the same paths or URIs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import shutil
import stat
import tempfile
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future
from contextlib import asynccontextmanager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_gui.core.base.errors import RecallError
from recall_gui.core.base.paths import app_cache_dir
from recall_gui.core.ray.connection import (
    ADDRESS_HINT,
    RayStartError,
    joined_within,
    on_loopback,
    output_aside,
    parse_address,
    ray_still_busy,
    reach,
)

#: Where the window's Ray engine runs: the cluster this names (Ray's own variable), else a local Ray.
ADDRESS_ENV = "RAY_ADDRESS"
INSTALL_HINT = "Install them with: pip install 'recall-gui[scale]'"
#: A port nothing listens on: Ray's cloud probes fail at once instead of leaving the machine.
_CLOSED_PROXY = "http://127.0.0.1:9"
_PROXY_NAMES = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY")
_LOCAL_HOSTS = "127.0.0.1,localhost,::1"
#: The longest folder Ray's files may go in: a socket path below it (``/session_<date>_<time>_<pid>/
#: sockets/plasma_store``, 62 bytes and more for a longer process id) may have 103 bytes in all (macOS).
RAY_FOLDER_BYTES = 36
#: The name of a folder made for one run's Ray files (removed when that Ray stops).
_SHORT_PREFIX = "recall-gui-ray-"
#: The folder Ray is given, inside one of this user's alone: Ray opens the folder it is given and what it
#: makes there to every user (0777). One letter: the socket paths below it are short.
_RAY_FILES = "r"
#: How long stopping Ray may take before the process goes on without it (a dead cluster never answers).
SHUTDOWN_SECONDS = 10.0


class ScaleUnavailableError(RecallError):
    """Ray or lance-ray is not installed (the ``scale`` extra)."""


def require_scale(what: str = "--engine ray") -> None:
    """Refuse, saying what to install, when Ray or lance-ray cannot be imported."""
    missing = []
    for module, package in (("ray", "ray[data]"), ("lance_ray", "lance-ray")):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        raise ScaleUnavailableError(
            f"{what} needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
            "installed",
            hint=INSTALL_HINT,
        )


@dataclass(frozen=True)
class RayCluster:
    """The Ray a job runs on: the address joined (``None``: one started here) and how long that took."""

    address: str | None
    cpus: float
    start_seconds: float


@dataclass
class _Started:
    """The Ray :func:`ray_cluster` started or joined: the jobs using it, and the folder of this run's files
    (removed once it stops)."""

    users: int
    folder: Path | None


#: Ray is one per process, and so is what this module knows of it: the Ray it started or joined (jobs of
#: the window may overlap), and the lock that makes one job start it (its condition: a job has left).
_ours: list[_Started] = []
_starting = threading.Lock()
_left = threading.Condition(_starting)


@contextmanager
def ray_cluster(
    address: str | None = None,
    *,
    cpus: int | None = None,
    verbose: bool = False,
    done: Callable[[], None] | None = None,
) -> Iterator[RayCluster]:
    """Ray for the duration of the block: the cluster at ``address``, or one started on this machine
    (``cpus``: its cores by default) and stopped at the end. A Ray already running in this process is used
    as it is: a caller's own is left running; when one this function started is still used by another
    job at the end, the block waits for that job to end and then stops it (Ray's processes end with the
    thread that started them), calling ``done`` first: the job itself is over. An address nothing answers
    at is refused within seconds (:class:`RayStartError`); a Ray started here, or joined at a loopback
    address, stays on loopback. ``verbose``: Ray's own log lines and warnings are shown (else only its
    errors)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # A job's thread left behind by a lost cluster must not start a new Ray of its own (read on import).
    os.environ.setdefault("RAY_ENABLE_AUTO_CONNECT", "0")
    where = parse_address(address) if address is not None else None
    if address is None:
        # Read once, when Ray is first imported: kept for the process's life (one token per process).
        os.environ.setdefault("RAY_AUTH_MODE", "token")
        os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(16))
    require_scale()
    if where is not None:
        reach(where)
    import ray

    with _starting:  # one job starts Ray; another waits for it, then uses it
        if ray_still_busy():
            raise RayStartError(
                "Ray is still starting or stopping from the previous run",
                hint="Try again in a few seconds.",
            )
        starter = not ray.is_initialized()
        if starter:
            started: _Started | None
            started, cluster = _start(ray, address, where, cpus, verbose)
        else:
            started = _ours[0] if _ours else None  # None: a caller's own Ray, left as it is
            if started is not None:
                started.users += 1
            cluster = RayCluster(address, _cpus(ray), 0.0)
    try:
        yield cluster
    finally:
        if started is not None:
            _leave(ray, started, starter=starter, done=done)
        elif done is not None:
            done()


def _start(
    ray: Any, address: str | None, where: Any, cpus: int | None, verbose: bool
) -> tuple[_Started, RayCluster]:
    """Start a local Ray (``address`` ``None``) or join the cluster at ``address``; a start that fails is
    stopped again."""
    _quiet(verbose)
    began = time.perf_counter()
    folder = _log_folder() if address is not None else _ray_folder()
    made = folder is not None and folder.parent.name.startswith(_SHORT_PREFIX)
    aside = nullcontext() if verbose else output_aside(folder / "start.log" if folder else None)
    # "auto" and "local" name no host: only a Ray started here, or a loopback address, stays on loopback.
    loopback = address is None or (where is not None and where.loopback)
    try:
        with aside, on_loopback(loopback):
            if address is None:
                _start_local(cpus, verbose, folder)
            else:
                joined_within(lambda: _join(address, verbose), address)
    except BaseException as error:
        if ray.is_initialized():
            _shut_down(ray)  # half started: its processes would outlive the job
        if isinstance(error, RayStartError) or not isinstance(error, Exception):
            raise
        place = f"the Ray cluster at {address}" if address else "a local Ray"
        raise RayStartError(  # Ray raises many kinds: connection, timeout, value, runtime
            f"could not start {place}: {error}",
            hint=ADDRESS_HINT if address else f"See Ray's logs in {folder or '/tmp/ray'}.",
        ) from error
    started = _Started(users=1, folder=folder.parent if made and folder is not None else None)
    _ours[:] = [started]
    return started, RayCluster(address, _cpus(ray), time.perf_counter() - began)


def _leave(ray: Any, started: _Started, *, starter: bool, done: Callable[[], None] | None) -> None:
    """A job using a Ray started here ends. The job that started it waits until the others have left,
    then stops it (and removes this run's folder); ``done`` is called once the job itself is over."""
    over = done or (lambda: None)
    with _left:
        started.users -= 1
        _left.notify_all()
        if not starter:
            over()
            return
        others = started.users > 0
        if others:
            over()  # this job is over; its thread keeps Ray alive for the others
            _left.wait_for(lambda: started.users == 0)
        _ours.clear()
        if _shut_down(ray) and started.folder is not None:
            shutil.rmtree(started.folder, ignore_errors=True)  # a folder of this run only
    if not others:
        over()


def _join(address: str, verbose: bool) -> None:
    import ray

    ray.init(address=address, log_to_driver=verbose, logging_level=_level(verbose))


def _shut_down(ray: Any) -> bool:
    """Stop Ray, bounded: a cluster that died may keep Ray's shutdown waiting for it. Whether it stopped."""
    stopping = threading.Thread(target=ray.shutdown, name="ray-shutdown", daemon=True)
    stopping.start()
    stopping.join(SHUTDOWN_SECONDS)
    return not stopping.is_alive()


def _level(verbose: bool) -> int:
    return logging.INFO if verbose else logging.ERROR


@asynccontextmanager
async def ray_running(address: str | None = None) -> AsyncIterator[RayCluster]:
    """:func:`ray_cluster` for a caller on an event loop, held by a thread of its own for the block (Ray
    takes seconds to start and stop, and its processes end with the thread that started them). Cancelled
    while Ray starts, it is stopped once it has started."""
    holder = _RayHolder(address)
    entered = asyncio.wrap_future(holder.entered)
    try:
        cluster = await asyncio.shield(entered)
    except asyncio.CancelledError:
        holder.release()
        entered.add_done_callback(lambda done: done.cancelled() or done.exception())  # read: not lost
        raise
    try:
        yield cluster
    finally:
        holder.release()
        await asyncio.shield(asyncio.wrap_future(holder.over))


class _RayHolder:
    """A thread that enters :func:`ray_cluster`, waits to be released, and leaves it."""

    def __init__(self, address: str | None) -> None:
        self.entered: Future[RayCluster] = Future()
        #: The job is over (its Ray stopped, or still used by another job).
        self.over: Future[None] = Future()
        self._released = threading.Event()
        self._address = address
        # Not a daemon: a process that ends while Ray stops on a daemon thread may abort.
        threading.Thread(target=self._hold, name="recall-ray-holder", daemon=False).start()

    def release(self) -> None:
        self._released.set()

    def _hold(self) -> None:
        try:
            with ray_cluster(self._address, done=self._done) as cluster:
                self.entered.set_result(cluster)
                self._released.wait()
        except BaseException as error:  # handed to the awaiting task
            target = self.over if self.entered.done() else self.entered
            if not target.done():
                target.set_exception(error)
            if not self.over.done():
                self.over.set_result(None)

    def _done(self) -> None:
        if not self.over.done():
            self.over.set_result(None)


def window_address() -> str | None:
    """The cluster the window's Ray engine joins (:data:`ADDRESS_ENV`), ``None`` for a local Ray."""
    return os.environ.get(ADDRESS_ENV, "").strip() or None


def _cpus(ray: Any) -> float:
    """The cluster's cores."""
    return float(ray.cluster_resources().get("CPU", 0))


def _start_local(cpus: int | None, verbose: bool, folder: Path | None) -> None:
    import ray

    proxies = {name: os.environ.get(name) for name in _PROXY_NAMES}
    # The processes Ray starts inherit this environment: their tasks get the user's settings back.
    restored = {name: value or "" for name, value in proxies.items()}
    os.environ.update(
        http_proxy=_CLOSED_PROXY,
        https_proxy=_CLOSED_PROXY,
        HTTP_PROXY=_CLOSED_PROXY,
        HTTPS_PROXY=_CLOSED_PROXY,
        no_proxy=_LOCAL_HOSTS,
        NO_PROXY=_LOCAL_HOSTS,
    )
    try:
        ray.init(
            address="local",  # a new Ray here, even when RAY_ADDRESS names a cluster
            num_cpus=cpus or os.cpu_count() or 1,
            include_dashboard=False,
            # Ray's files in the app's cache folder; where it cannot be written, in Ray's own (/tmp/ray).
            _temp_dir=str(folder) if folder is not None else None,
            log_to_driver=verbose,
            logging_level=_level(verbose),
            runtime_env={"env_vars": restored},
        )
    finally:
        _restore(proxies)


def _ray_folder() -> Path | None:
    """Ray's files for a Ray started here: under the app's cache folder, in ``ray/r`` (``ray`` this user's
    alone; ``None`` where it cannot be made: it is disposable, and Ray then uses its own). Ray puts its
    sockets a fixed depth below it, and a socket's path is short (107 bytes on Linux, 103 on macOS): below
    a deeper cache folder, Ray's files go to a new folder of this run in /tmp, as Ray's own default does."""
    folder = app_cache_dir() / "ray"
    try:
        if len(os.fsencode(folder / _RAY_FILES)) <= RAY_FOLDER_BYTES:
            return _for_ray(_users_own(folder))
        base = "/tmp" if os.name == "posix" and os.path.isdir("/tmp") else tempfile.gettempdir()
        if len(os.fsencode(os.path.join(base, _SHORT_PREFIX + "x" * 8, _RAY_FILES))) > RAY_FOLDER_BYTES:
            return None
        return _for_ray(Path(tempfile.mkdtemp(prefix=_SHORT_PREFIX, dir=base)))  # made 0700
    except OSError:
        return None


def _for_ray(own: Path) -> Path:
    """The folder Ray is given, inside ``own`` (this user's alone)."""
    folder = own / _RAY_FILES
    folder.mkdir(exist_ok=True)
    return folder


def _log_folder() -> Path | None:
    """Where Ray's start-up lines go when joining a cluster (no sockets here: any depth will do)."""
    try:
        return _users_own(app_cache_dir() / "ray")
    except OSError:
        return None


def _users_own(folder: Path) -> Path:
    """``folder``, made if need be, reachable by this user alone (0700): Ray makes its session folders
    below it open to every user (0777), so no one else may reach them. Raises ``OSError``."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, exist_ok=True)
    if os.name == "posix" and stat.S_IMODE(folder.stat().st_mode) != 0o700:
        os.chmod(folder, 0o700)  # made by an earlier version, open to others
    return folder


def _restore(saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _rays_own_terminal_handler(handler: logging.Handler) -> bool:
    """Whether ``handler`` is Ray's own terminal output: not its log file, nor a handler someone else put
    on its logger (pytest puts its capture handlers on loggers that do not propagate, as Ray's)."""
    ray_class = type(handler).__module__.partition(".")[0] == "ray"
    return (
        ray_class
        and isinstance(handler, logging.StreamHandler)
        and not isinstance(handler, logging.FileHandler)
    )


def _quiet(verbose: bool) -> None:
    """Ray Data reports each step's progress on the terminal: the jobs report their own. A task's error
    comes back as it was raised (not wrapped in Ray's advice on retries), for the job to say it in its
    own words; Ray Data's own lines about it stay in its log file, on the terminal only when
    ``verbose``, as Ray's warnings (and lance's note on forking, which Ray's start-up sets off)."""
    from ray.data import DataContext

    context = DataContext.get_current()
    context.enable_progress_bars = False
    context.raise_original_map_exception = True
    for handler in logging.getLogger("ray.data").handlers:
        if _rays_own_terminal_handler(handler):
            handler.setLevel(logging.INFO if verbose else logging.CRITICAL + 1)
    if verbose:
        return
    warnings.filterwarnings("ignore", message="lance is not fork-safe", category=UserWarning)
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)
