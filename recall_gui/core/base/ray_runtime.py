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
import tempfile
import threading
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_gui.core.base.errors import RecallError
from recall_gui.core.base.paths import app_cache_dir
from recall_gui.core.base.ray_reach import (
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


@contextmanager
def ray_cluster(
    address: str | None = None, *, cpus: int | None = None, verbose: bool = False
) -> Iterator[RayCluster]:
    """Ray for the duration of the block: the cluster at ``address``, or one started on this machine
    (``cpus``: its cores by default) and stopped at the end. Ray already running in this process (a
    caller's own) is used as it is and left running. An address nothing answers at is refused within
    seconds (:class:`RayStartError`); a Ray started here, or joined at a loopback address, stays on
    loopback. ``verbose``: Ray's own log lines and warnings are shown (else only its errors)."""
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

    if ray_still_busy():
        raise RayStartError(
            "Ray is still starting or stopping from the previous run",
            hint="Try again in a few seconds.",
        )
    if ray.is_initialized():
        yield RayCluster(address, _cpus(ray), 0.0)
        return
    _quiet(verbose)
    started = time.perf_counter()
    folder = _log_folder() if address is not None else _ray_folder()
    made = folder is not None and folder.name.startswith(_SHORT_PREFIX)
    aside = nullcontext() if verbose else output_aside(folder / "start.log" if folder else None)
    try:
        with aside, on_loopback(where is None or where.loopback):
            if address is None:
                _start_local(cpus, verbose, folder)
            else:
                joined_within(lambda: _join(address, verbose), address)
    except RayStartError:
        raise
    except Exception as error:  # Ray raises many kinds: connection, timeout, value, runtime
        place = f"the Ray cluster at {address}" if address else "a local Ray"
        raise RayStartError(
            f"could not start {place}: {error}",
            hint=ADDRESS_HINT if address else f"See Ray's logs in {folder or '/tmp/ray'}.",
        ) from error
    try:
        seconds = time.perf_counter() - started
        yield RayCluster(address, _cpus(ray), seconds)
    finally:
        if _shut_down(ray) and made and folder is not None:
            shutil.rmtree(folder, ignore_errors=True)  # a folder of this run only: its logs go with it


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
    """:func:`ray_cluster` for a caller on an event loop: Ray starts and stops on a worker thread (it
    takes seconds). Cancelled while Ray starts, it is stopped once it has started."""
    loop = asyncio.get_running_loop()
    stack = ExitStack()
    starting = loop.run_in_executor(None, stack.enter_context, ray_cluster(address))
    try:
        cluster = await asyncio.shield(starting)
    except asyncio.CancelledError:
        starting.add_done_callback(
            lambda done: done.cancelled() or done.exception() or loop.run_in_executor(None, stack.close)
        )
        raise
    try:
        yield cluster
    finally:
        await asyncio.shield(loop.run_in_executor(None, stack.close))


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
    """Ray's files for a Ray started here: under the app's cache folder (``None`` where it cannot be made:
    it is disposable, and Ray then uses its own). Ray puts its sockets a fixed depth below it, and a
    socket's path is short (107 bytes on Linux, 103 on macOS): below a deeper cache folder, Ray's files
    go to a new folder of this run in /tmp, as Ray's own default does."""
    folder = app_cache_dir() / "ray"
    try:
        if len(os.fsencode(folder)) <= RAY_FOLDER_BYTES:
            folder.mkdir(parents=True, exist_ok=True)
            return folder
        base = "/tmp" if os.name == "posix" and os.path.isdir("/tmp") else tempfile.gettempdir()
        if len(os.fsencode(os.path.join(base, _SHORT_PREFIX + "x" * 8))) > RAY_FOLDER_BYTES:
            return None
        return Path(tempfile.mkdtemp(prefix=_SHORT_PREFIX, dir=base))
    except OSError:
        return None


def _log_folder() -> Path | None:
    """Where Ray's start-up lines go when joining a cluster (no sockets here: any depth will do)."""
    folder = app_cache_dir() / "ray"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder


def _restore(saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _quiet(verbose: bool) -> None:
    """Ray Data reports each step's progress on the terminal: the jobs report their own. Ray's warnings
    (and lance's note on forking, which Ray's start-up sets off) only when ``verbose``."""
    from ray.data import DataContext

    context = DataContext.get_current()
    context.enable_progress_bars = False
    if verbose:
        return
    warnings.filterwarnings("ignore", message="lance is not fork-safe", category=UserWarning)
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)
