"""The Ray engine when Ray fails: an address nothing (or nothing Ray) answers at ends within the bound with
one message naming it; Ray stays on loopback; a cluster that dies during a job gives an error and no result;
Ray's own lines only with ``--verbose``; ``ray://`` works with the scale extra. Every server here is on
127.0.0.1."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DEEP_CACHE
from tests.core.test_check_command import golden
from tests.core.test_cli import ROOT, cli
from tests.kbtools import KnowledgeBase
from tests.waiting import wait_until

#: The whole run, start-up included, for an address that cannot serve: the issue's bound.
BOUND_S = 30.0

# Not imported here: Ray reads its settings (a token of this run) when first imported.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="the scale extra (Ray, lance-ray) is not installed"
)


def closed_port() -> int:
    """A loopback port nothing listens at (just freed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def mute_listener() -> Iterator[int]:
    """A loopback port that accepts connections and never says a word (not a Ray cluster)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield int(server.getsockname()[1])
    server.close()
    for connection in held:
        connection.close()


def command(name: str, kb: KnowledgeBase, tmp_path: Path) -> list[str]:
    if name == "duplicates":
        return ["duplicates", "--registry", str(kb.registry_dir), "--db", kb.name]
    path = golden(tmp_path, [{"db_name": kb.name, "query": "capital of France", "expect": ["paris"]}])
    return ["check", "--registry", str(kb.registry_dir), str(path)]


def timed_cli(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = cli(*args)
    return done, time.monotonic() - started


@pytest.mark.process
@pytest.mark.parametrize("name", ["check", "duplicates"])
@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_address_nothing_listens_at_ends_at_once_with_one_message(
    kb: KnowledgeBase, tmp_path: Path, name: str, scheme: str
) -> None:
    address = f"{scheme}127.0.0.1:{closed_port()}"
    done, seconds = timed_cli(*command(name, kb, tmp_path), "--engine", "ray", "--ray-address", address)
    assert done.returncode == 2
    assert seconds < BOUND_S
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == f"error: could not reach the Ray cluster at {address}: the connection was refused " + (
        "(nothing listens at that port)"
    )
    assert lines[1].startswith("hint: Check the address") and len(lines) == 2, done.stderr


@pytest.mark.process
def test_an_address_that_answers_but_not_as_ray_ends_within_the_bound(
    kb: KnowledgeBase, tmp_path: Path, mute_listener: int
) -> None:
    """Ray would retry such an address for minutes, printing its C++ log lines: one message instead."""
    address = f"127.0.0.1:{mute_listener}"
    done, seconds = timed_cli(*command("check", kb, tmp_path), "--engine", "ray", "--ray-address", address)
    assert done.returncode == 2
    assert seconds < BOUND_S
    lines = done.stderr.splitlines()
    assert lines[0].startswith(f"error: the Ray cluster at {address} did not answer within "), done.stderr
    assert len(lines) == 2 and lines[1].startswith("hint: "), done.stderr


@pytest.mark.process
def test_a_bad_address_is_refused_before_ray_starts(kb: KnowledgeBase, tmp_path: Path) -> None:
    done = cli(*command("check", kb, tmp_path), "--engine", "ray", "--ray-address", "127.0.0.1")
    assert done.returncode == 2
    assert done.stderr.startswith("error: 127.0.0.1 is not a Ray address (host:port, or ray://host[:port]")


@pytest.mark.process
def test_verbose_is_refused_on_the_local_engine(kb: KnowledgeBase, tmp_path: Path) -> None:
    done = cli(*command("duplicates", kb, tmp_path), "--verbose")
    assert done.returncode != 0
    assert "--verbose is for --engine ray" in done.stderr


def descendants_listening(pid: int) -> list[tuple[str, str]]:
    """(process name, listening address) of every socket the process's descendants listen on."""
    import psutil

    found = []
    for child in psutil.Process(pid).children(recursive=True):
        try:
            for connection in child.net_connections(kind="inet"):
                if connection.status == psutil.CONN_LISTEN:
                    found.append((child.name(), connection.laddr.ip))
        except psutil.Error:
            continue  # a worker that ended meanwhile
    return found


def is_loopback(ip: str) -> bool:
    import ipaddress

    address = ipaddress.ip_address(ip)
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


@pytest.mark.ray
def test_a_local_ray_starts_below_a_cache_folder_too_deep_for_its_sockets(ray_address: str) -> None:
    """The run's Ray was started with a cache folder deeper than a socket path allows below it: its files
    went to a folder of the temporary directory instead, and every socket path fits in 107 bytes."""
    import ray

    session = Path(ray._private.worker._global_node.get_session_dir_path())
    assert DEEP_CACHE not in str(session)
    assert session.parent.parent.name.startswith("recall-gui-ray-")
    sockets = list((session / "sockets").iterdir())
    assert sockets, f"no sockets in {session}"
    assert all(len(os.fsencode(socket_path)) <= 107 for socket_path in sockets)


@pytest.mark.process
def test_a_local_ray_listens_and_dials_on_loopback_only(ray_address: str) -> None:
    """The tests' own Ray (started as the app starts one) and a driver joining it at 127.0.0.1."""
    assert ray_address.startswith("127.0.0.1:")
    listening = descendants_listening(os.getpid())
    assert any(name.startswith("gcs_server") for name, _ip in listening), listening
    assert all(is_loopback(ip) for _name, ip in listening), listening
    joined = subprocess.run(
        [
            sys.executable,
            "-c",
            "import ray, sys\n"
            "from recall_gui.core.ray.cluster import ray_cluster\n"
            "with ray_cluster(sys.argv[1]):\n"
            "    print(ray.get_runtime_context().gcs_address, ray.util.get_node_ip_address())\n",
            ray_address,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert joined.returncode == 0, joined.stderr
    assert joined.stdout.split() == [ray_address, "127.0.0.1"]


@pytest.mark.process
@pytest.mark.ray
@pytest.mark.parametrize("name", ["check", "duplicates"])
def test_a_ray_that_dies_during_the_job_ends_with_an_error_and_no_result(
    kb: KnowledgeBase, tmp_path: Path, name: str
) -> None:
    """A local Ray of no cores (Ray's own override) keeps the job's tasks waiting; once Ray says so, its
    head is killed: one ``error:`` line, status 2, nothing on stdout — before Ray's core would end the
    process a minute later without a word."""
    import psutil

    args = [*command(name, kb, tmp_path), "--engine", "ray", "--verbose", "--json"]
    process = subprocess.Popen(
        [sys.executable, "-m", "recall_gui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",  # Ray's lines on stdout as they are printed
            "RAY_OVERRIDE_RESOURCES": json.dumps({"CPU": 0}),
        },
    )
    out: list[str] = []
    err: list[str] = []
    readers = [
        threading.Thread(target=lines.extend, args=(stream,), daemon=True)
        for lines, stream in ((out, process.stdout), (err, process.stderr))
    ]
    for reader in readers:
        reader.start()
    try:
        # Ray's verbose lines (on stdout or stderr) say when the job's first task waits for a core.
        wait_until(
            lambda: any("can fulfill resource request" in line for line in (*out, *err)),
            "Ray says the job's tasks wait for a core",
            timeout=120,
        )
        heads = [
            child
            for child in psutil.Process(process.pid).children(recursive=True)
            if child.name().startswith("gcs_server")
        ]
        assert len(heads) == 1
        heads[0].send_signal(signal.SIGKILL)
        process.wait(timeout=BOUND_S + 30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    for reader in readers:
        reader.join(10)
    for stream in (process.stdout, process.stderr):
        assert stream is not None
        stream.close()
    assert process.returncode == 2, "".join(err)
    assert not any(line.startswith(("{", "[")) for line in out), out  # no JSON result, whole or part
    errors = [line for line in err if line.startswith("error: ")]
    assert len(errors) == 1, "".join(err)
    assert errors[0].startswith("error: the Ray cluster stopped answering during the ")
    assert "no result is given" in errors[0]


@pytest.mark.process
@pytest.mark.ray
def test_ray_client_addresses_work_with_the_scale_extra(
    ray_address: str,
    make_kb: Any,
    tmp_path: Path,
) -> None:
    """``ray://`` through Ray's own Client server on loopback, in front of the tests' Ray: the same
    outcome as the local engine (the scale extra installs ``ray[client]``)."""
    from tests.core.test_ray_engine import checks_of_two_databases
    from tests.s3server import port_open

    port = closed_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ray.util.client.server",
            "--mode",
            "legacy",
            "--address",
            ray_address,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # It joins the tests' Ray as a driver: at its loopback address, as the app would.
        env={**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"},
    )
    try:
        wait_until(lambda: port_open(port), "Ray's Client server listens", timeout=120)
        registry, path = checks_of_two_databases(make_kb, tmp_path)
        local = cli("check", "--registry", str(registry), "--json", str(path))
        on_ray = cli(
            "check",
            "--registry",
            str(registry),
            "--json",
            "--engine",
            "ray",
            "--ray-address",
            f"ray://127.0.0.1:{port}",
            str(path),
        )
    finally:
        server.terminate()
        server.wait(30)
    assert (on_ray.returncode, on_ray.stdout, on_ray.stderr) == (local.returncode, local.stdout, local.stderr)


def test_the_scale_extra_installs_ray_client() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    from packaging.requirements import Requirement

    ray = next(Requirement(text) for text in extras["scale"] if Requirement(text).name == "ray")
    assert {"data", "client"} <= ray.extras


@pytest.mark.ray
def test_a_normal_ray_run_is_quiet(ray_address: str, kb: KnowledgeBase, tmp_path: Path) -> None:
    """No lance fork note, no progress-bar warning, no Ray log line: stderr stays empty, on a Ray the
    command starts and on one it joins."""
    runs = [
        cli(*command("check", kb, tmp_path), "--engine", "ray"),
        *(
            cli(*command(name, kb, tmp_path), "--engine", "ray", "--ray-address", ray_address)
            for name in ("check", "duplicates")
        ),
    ]
    for done in runs:
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""


OVERLAPPING_JOBS = """
import asyncio, time
from recall_gui.core.ray.cluster import ray_running

async def main():
    first = ray_running()
    await first.__aenter__()  # the first job starts a local Ray
    import ray  # not before: Ray reads the token of the Ray started here on import
    async with ray_running():  # a second job, as another page of the window starts one, uses it
        await first.__aexit__(None, None, None)  # the first ends while the second still runs
        print(ray.is_initialized(), ray.get(ray.put(41)) + 1)
    deadline = time.monotonic() + 30  # the first job's thread stops it once the last job has left
    while ray.is_initialized() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    print(ray.is_initialized())

asyncio.run(main())
"""


@pytest.mark.ray
def test_overlapping_jobs_share_one_ray_which_the_last_to_end_stops(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", OVERLAPPING_JOBS],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "RECALL_GUI_CACHE_DIR": str(tmp_path / "c")},
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "42", "False"]


@pytest.mark.process
def test_ray_is_started_without_a_standard_error_to_set_aside(tmp_path: Path) -> None:
    """A process launched with no fd 2 (some desktop launchers): setting Ray's output aside is skipped."""
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from recall_gui.core.ray.connection import output_aside\n"
        "os.close(2)\n"
        "with output_aside(Path(sys.argv[1])):\n"
        "    pass\n"
        "print('went on')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "start.log")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
        check=False,
    )
    assert done.stdout.strip() == "went on"
