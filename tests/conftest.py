"""Shared fixtures: isolated app directories, the real embedding model, real LanceDB knowledge bases.

Nothing here fakes an embedding: knowledge bases are embedded with all-MiniLM-L6-v2 as the app serves it
(float32, from the published weights), exactly as the app embeds queries.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.kbtools import PASSAGES, KnowledgeBase, cosh_entry, write_lance_table, write_registry
from tests.owners import Housekeeping, Made, collector_sees_only_new
from tests.run_ray import RunRay
from tests.s3server import RunMoto

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _few_malloc_arenas() -> None:
    """A test run makes hundreds of sessions, each with worker threads of its own; glibc gives each new
    thread a malloc arena and keeps what a model's threads freed there, so the run's resident memory grew
    by gigabytes with nothing alive. Two arenas, as glibc's MALLOC_ARENA_MAX=2 would set, keep it flat."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(name).mallopt(-8, 2)  # M_ARENA_MAX


_few_malloc_arenas()
# Never reach for the network: a model that is not cached must fail fast (and here it does).
os.environ["RECALL_GUI_DOWNLOAD_MODELS"] = "0"
os.environ["HF_HUB_OFFLINE"] = "1"


_MADE = Made()
_HOUSEKEEPING = Housekeeping()
_RUN_RAY = RunRay()
_RUN_MOTO = RunMoto()
#: The test modules that use the moto server (filled at collection).
_MOTO_MODULES: set[Path] = set()
_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """After the last test that uses the run's Ray, Ray stops, and the worker's moto server after the last
    module that uses it; after each test, and after a module's last test and its fixtures, the process's
    housekeeping (tests/owners.py)."""
    result = yield
    if _RUN_RAY.running and (nextitem is None or not _uses_ray(nextitem)):
        _RUN_RAY.stop()
    if _RUN_MOTO.running and (nextitem is None or nextitem.path not in _MOTO_MODULES):
        _RUN_MOTO.stop()
    if nextitem is None or nextitem.path != item.path:
        _HOUSEKEEPING.after_module()
    else:
        _HOUSEKEEPING.after_test()
    return result


def pytest_runtest_setup(item: pytest.Item) -> None:
    if os.environ.get(MEMORY_LOG_ENV):
        item.stash[_RESIDENT_BEFORE] = _resident_and_peak_mb(reset_peak=True)[0]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call" and report.failed:
        item.stash[_FAILED] = True  # its traceback holds what the test held: not a leak to report
    if report.when == "teardown" and os.environ.get(MEMORY_LOG_ENV):
        _log_memory(Path(os.environ[MEMORY_LOG_ENV]), item)
    return report


#: A file each test's process appends its memory to after the test (for finding the tests that raise a
#: run's peak: docs/TESTING.md).
MEMORY_LOG_ENV = "RECALL_GUI_TEST_MEMORY_LOG"
_RESIDENT_BEFORE = pytest.StashKey[int]()


def _resident_and_peak_mb(reset_peak: bool = False) -> tuple[int, int]:
    """The process's resident size and its peak since the last reset, in MB (Linux)."""
    if reset_peak:  # where it cannot be reset, the logged peak is the process's own so far
        with contextlib.suppress(OSError):
            Path("/proc/self/clear_refs").write_text("5")  # 5: reset the peak resident size
    fields = dict(
        line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line
    )
    rss, peak = (int(fields[key].split()[0]) // 1024 for key in ("VmRSS", "VmHWM"))
    return rss, peak


def _log_memory(log: Path, item: pytest.Item) -> None:
    """The worker, its resident size when the test began and after it, the peak in between, the time."""
    rss, peak = _resident_and_peak_mb()
    before = item.stash.get(_RESIDENT_BEFORE, rss)
    with log.open("a", encoding="utf-8") as out:
        out.write(f"{os.getpid()}\t{before}\t{rss}\t{peak}\t{time.time():.1f}\t{item.nodeid}\n")


def _drop_logged_tracebacks(item: pytest.Item) -> None:
    """The test's captured log records keep their exceptions' tracebacks, and with them the locals of every
    frame: what the code that logged held, not what the test kept. Their text is kept for the report."""
    import logging

    from _pytest.logging import caplog_handler_key, caplog_records_key

    records = [record for phase in item.stash.get(caplog_records_key, {}).values() for record in phase]
    handler = item.stash.get(caplog_handler_key, None)
    records += handler.records if handler is not None else []
    for record in records:
        if record.exc_info:
            record.exc_text = record.exc_text or logging.Formatter().formatException(record.exc_info)
            record.exc_info = None


@pytest.fixture(autouse=True)
def nothing_outlives_its_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """A window or core session a test makes is closed and gone when the test ends (tests/owners.py)."""
    _MADE.track_imported()
    since = _MADE.mark()
    with collector_sees_only_new():
        yield
        _MADE.track_imported()
        # The test's fixture values, which pytest drops only after the last teardown (this one).
        if getattr(request.node, "funcargs", None):
            request.node.funcargs.clear()
        _drop_logged_tracebacks(request.node)
        exempt = request.node.get_closest_marker("outlives") or request.node.stash.get(_FAILED, False)
        outliving = _MADE.outliving(since, within_s=0 if exempt else 5.0)
    if outliving and not exempt:
        pytest.fail(f"still alive after the test that made it: {'; '.join(outliving)}", pytrace=False)


@pytest.fixture(autouse=True)
def isolated_app_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own config and data dirs, and never sees a real cosh registry."""
    root = tmp_path_factory.mktemp("app")
    monkeypatch.setenv("RECALL_GUI_CONFIG_DIR", str(root / "config"))
    monkeypatch.setenv("RECALL_GUI_DATA_DIR", str(root / "data"))
    monkeypatch.setenv("XDG_DATA_HOME", str(root / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "xdg-config"))
    monkeypatch.delenv("RECALL_REGISTRY_DIR", raising=False)
    # Model caches a developer's machine may have stay unseen: a test sees only the ones it makes.
    monkeypatch.setenv("HF_HUB_CACHE", str(root / "hf-hub"))
    for key in ("FASTEMBED_CACHE_DIR", "HF_HOME"):
        monkeypatch.delenv(key, raising=False)
    for key in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OLLAMA_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(key, raising=False)
    return root


@pytest.fixture(scope="session", autouse=True)
def shared_model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One staged offline-model folder for the whole run (staging is cheap, but once is enough)."""
    cache = tmp_path_factory.mktemp("cache")
    previous = os.environ.get("RECALL_GUI_CACHE_DIR")
    os.environ["RECALL_GUI_CACHE_DIR"] = str(cache)
    os.environ.setdefault("FASTEMBED_CACHE_PATH", str(cache / "fastembed"))
    yield cache
    if previous is None:
        os.environ.pop("RECALL_GUI_CACHE_DIR", None)
    else:
        os.environ["RECALL_GUI_CACHE_DIR"] = previous


@pytest.fixture
def session() -> Iterator[Any]:
    """A core session (open tables, vectors in memory, loaded models) for one test, closed after it."""
    import asyncio

    from recall_gui.core.session.session import Session

    opened = Session()
    yield opened
    asyncio.run(opened.aclose())


@pytest.fixture(scope="session")
def embedder() -> Any:
    """cosh's default model as the app serves it on a fresh install (float32, from its published
    weights), loaded once per run: knowledge bases are embedded as cosh builds them.

    Only its query session is kept (~200 MB), and it embeds the tests' passages too (the same vectors:
    tests/core/test_pipelined_search.py); the app's second session, for bulk work, would be held by each
    worker for the whole run."""
    from recall_gui.core.embedders.local import LocalEmbedder
    from recall_gui.core.embedders.pool import load_local_model

    served = load_local_model("AllMiniLML6V2")
    assert served.dim is not None
    return LocalEmbedder(served._model, served.model_info, served.dim)


@pytest.fixture(scope="session")
def passage_vectors(embedder: Any) -> Any:
    import numpy as np

    return np.vstack(embedder.embed_many(list(PASSAGES.values())))


@pytest.fixture
def make_kb(tmp_path: Path, passage_vectors: Any) -> Callable[..., KnowledgeBase]:
    """Build a cosh-style knowledge base of :data:`PASSAGES` (embedded once per run) in ``tmp_path``."""
    counter = iter(range(1_000_000))

    def build(name: str = "notes", description: str = "", **table_kwargs: Any) -> KnowledgeBase:
        base = tmp_path / f"kb{next(counter)}"
        db_dir = base / "lancedb"
        ids, contents = tuple(PASSAGES), tuple(PASSAGES.values())
        write_lance_table(db_dir, name, ids, contents, passage_vectors, **table_kwargs)
        registry_dir = write_registry(base / "registry", [cosh_entry(name, db_dir, description)])
        return KnowledgeBase(name, db_dir, registry_dir, ids, contents, passage_vectors)

    return build


@pytest.fixture
def kb(make_kb: Callable[..., KnowledgeBase]) -> KnowledgeBase:
    return make_kb()


@pytest.fixture
def cosh_kb(tmp_path: Path, passage_vectors: Any) -> KnowledgeBase:
    """:data:`PASSAGES` written as cosh's TUI writes a knowledge base: one row per document, every row
    with the id "content" (``rag.ingest("content", text)``)."""
    base = tmp_path / "cosh-kb"
    contents = tuple(PASSAGES.values())
    ids = ("content",) * len(contents)
    write_lance_table(base / "lancedb", "docs", ids, contents, passage_vectors)
    registry_dir = write_registry(base / "registry", [cosh_entry("docs", base / "lancedb")])
    return KnowledgeBase("docs", base / "lancedb", registry_dir, ids, contents, passage_vectors)


# --- fixtures for fault and trust tests (reusable by window tests) --------------------------------------


@pytest.fixture
def fake_provider(embedder: Any) -> Iterator[Any]:
    """A local OpenAI/Gemini/Ollama stand-in on 127.0.0.1 that embeds with the real model."""
    from tests.providers import FakeProvider

    server = FakeProvider(embed=embedder.embed_sync)
    yield server
    server.close()


@pytest.fixture
def moto_server() -> Any:
    """The worker's moto S3 server on 127.0.0.1, shared by the tests of the modules that use it in turn
    (``_RUN_MOTO``; skipped when moto[server] is not installed)."""
    pytest.importorskip("moto.server", reason="moto[server] is in the test extra")
    pytest.importorskip("boto3", reason="boto3 is in the test extra")
    return _RUN_MOTO.server()


@pytest.fixture
def s3(moto_server: Any) -> Iterator[Any]:
    """A fresh bucket on the moto server, reached through a proxy the test can stop and start."""
    from tests.s3server import S3Location, StoppableProxy

    bucket = f"kb-{next(_buckets)}"
    moto_server.client().create_bucket(Bucket=bucket)
    proxy = StoppableProxy(moto_server.port)
    yield S3Location(bucket, proxy)
    proxy.stop()


_buckets = iter(range(1_000_000))


@dataclass(frozen=True)
class DemoBuild:
    """The demo knowledge base, built once per run by `recall-gui demo` in a throwaway home."""

    env: dict[str, str]
    data_dir: Path
    db_dir: Path
    registry_dir: Path
    cosh_dir: Path
    cosh_before: dict[str, tuple[int, int, str]]
    stdout: str
    stderr: str


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory: pytest.TempPathFactory, shared_model_cache: Path) -> DemoBuild:
    """Runs `recall-gui demo` once (about half a minute) with a cosh registry present, which it must not
    touch. ``env`` runs further commands against the app's own registry (no cosh registry in sight)."""
    import subprocess
    import sys

    from tests.kbtools import snapshot_tree

    root = tmp_path_factory.mktemp("demo-home")
    cosh_dir = write_registry(root / "xdg-with-cosh" / "cosh", [cosh_entry("agent-notes", root / "nowhere")])
    base = {k: v for k, v in os.environ.items() if k not in ("RECALL_REGISTRY_DIR",)}
    env = base | {
        "RECALL_GUI_DATA_DIR": str(root / "data"),
        "RECALL_GUI_CONFIG_DIR": str(root / "config"),
        "RECALL_GUI_CACHE_DIR": str(shared_model_cache),
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    cosh_before = snapshot_tree(cosh_dir)
    done = subprocess.run(
        [sys.executable, "-m", "recall_gui", "demo"],
        check=False,
        capture_output=True,
        text=True,
        env=env | {"XDG_DATA_HOME": str(root / "xdg-with-cosh")},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    (root / "xdg-empty").mkdir()
    return DemoBuild(
        env=env | {"XDG_DATA_HOME": str(root / "xdg-empty")},
        data_dir=root / "data",
        db_dir=root / "data" / "demo",
        registry_dir=root / "data" / "registry",
        cosh_dir=cosh_dir,
        cosh_before=cosh_before,
        stdout=done.stdout,
        stderr=done.stderr,
    )


@pytest.fixture(scope="session")
def kb_100k(demo_build: DemoBuild, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    """100,000 rows from the demo's real passages and vectors (perturbed copies, IVF index), registered
    active as "python-docs-100k" in its own registry. Built once per run (about 15 s)."""
    import lancedb
    import numpy as np

    from recall_gui.core.demo import DEMO_NAME
    from tests.kbtools import write_perturbed_table

    demo = lancedb.connect(str(demo_build.db_dir)).open_table(DEMO_NAME).to_arrow()
    vectors = np.vstack(demo.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)
    ids, contents = demo.column("id").to_pylist(), demo.column("content").to_pylist()
    root = tmp_path_factory.mktemp("kb-100k")
    name = "python-docs-100k"
    write_perturbed_table(root / "db", name, ids, contents, vectors, rows=100_000)
    registry = write_registry(root / "registry", [cosh_entry(name, root / "db")])
    return KnowledgeBase(name, root / "db", registry, tuple(ids), tuple(contents), vectors)


#: The app's cache folder while the run's Ray starts: deeper than Ray's sockets allow below it.
DEEP_CACHE = "cache-" + "d" * 60


@pytest.fixture
def ray_address(shared_model_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The address of the run's local Ray of one core (tests/run_ray.py: started once for the tests that
    use it, which run one after another; it takes seconds). It is started with a cache folder too deep for
    Ray's socket paths, as a user's may be."""
    import importlib.util

    if importlib.util.find_spec("ray") is None or importlib.util.find_spec("lance_ray") is None:
        pytest.skip("the scale extra (Ray, lance-ray) is not installed")
    # Not imported before this: Ray reads its settings (a token of this run) when first imported.
    deep_cache = tmp_path_factory.getbasetemp() / DEEP_CACHE
    deep_cache.mkdir(exist_ok=True)
    return _RUN_RAY.address(deep_cache, shared_model_cache)


@pytest.fixture
def world_readable_kb(passage_vectors: Any) -> Iterator[KnowledgeBase]:
    """The 12-passage knowledge base in a folder any user can read (pytest's tmp dirs are private to
    root), for sessions run as another user; see tests/readonly.py."""
    import shutil
    import tempfile

    from tests.readonly import make_writable

    base = Path(tempfile.mkdtemp(prefix="recall-ro-"))
    base.chmod(0o755)
    ids, contents = tuple(PASSAGES), tuple(PASSAGES.values())
    write_lance_table(base / "kb", "notes", ids, contents, passage_vectors)
    registry = write_registry(base / "registry", [cosh_entry("notes", base / "kb")])
    yield KnowledgeBase("notes", base / "kb", registry, ids, contents, passage_vectors)
    make_writable(base)
    shutil.rmtree(base)


# --- the fast loop: tests that start no process ----------------------------------------------------------

#: Fixtures that start processes (the demo build, servers, Ray) or stand on what one built: a test using
#: any is marked ``process``, left out of `make test-fast`.
PROCESS_FIXTURES = frozenset({"demo_build", "kb_100k", "moto_server", "s3", "ray_address"})
#: Set by `make test-fast`: a test that starts a process without the ``process`` mark fails, naming it.
NO_PROCESSES_ENV = "RECALL_GUI_NO_PROCESSES"


#: The tests that hold much memory run on one worker, one after another (``--dist loadgroup``, the group
#: ``ONE_WORKER``), so that no two of them meet (the run's memory peak): those that use a fixture of
#: ``ONE_WORKER_FIXTURES`` (the demo's build and the 100k-row table, then built once a run rather than once
#: a worker; the run's Ray, 0.5-0.9 GB of processes while a job runs) or a Ray of their own; those that
#: keep the whole app running in a process of its own (a window, or the MCP server as an agent starts it:
#: 0.25-0.6 GB each): every module of ``APP_PROCESS_FOLDER`` and ``APP_PROCESS_MODULES``; and the modules
#: with a test whose own peak is 450 MB or more above its start (``HEAVY_MODULES``, found with
#: docs/TESTING.md's memory log).
ONE_WORKER = "one-worker"
ONE_WORKER_FIXTURES = frozenset({"demo_build", "kb_100k", "ray_address"})
APP_PROCESS_FOLDER = "tests/mcp/"
APP_PROCESS_MODULES = frozenset(
    {
        "tests/core/test_exact_model.py",
        "tests/core/test_stand_in_said.py",
        "tests/packaging/test_wheel.py",
        "tests/qt/test_agent_view.py",
        "tests/qt/test_smoke.py",
        "tests/qt/test_trust_read_only.py",
        "tests/qt/test_trust_shortcuts.py",
    }
)
HEAVY_MODULES = frozenset(
    {
        "tests/core/test_browse.py",
        "tests/core/test_direct_embedding.py",
        "tests/core/test_map_layout.py",
        "tests/core/test_models_command.py",
        "tests/core/test_ray_engine.py",
        "tests/core/test_trust_health.py",
        "tests/qt/test_trust_concurrency.py",
    }
)


def _uses_ray(item: pytest.Item) -> bool:
    """Whether the test is one of the Ray group's (the run's Ray, or a Ray of its own)."""
    return "ray_address" in getattr(item, "fixturenames", ()) or item.get_closest_marker("ray") is not None


def _runs_on_one_worker(item: pytest.Item, root: Path) -> bool:
    """Whether the test holds much memory (``ONE_WORKER``)."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if ONE_WORKER_FIXTURES.intersection(fixtures) or item.get_closest_marker("ray") is not None:
        return True
    if not item.path.is_relative_to(root):
        return False
    module = item.path.relative_to(root).as_posix()
    return module in APP_PROCESS_MODULES | HEAVY_MODULES or module.startswith(APP_PROCESS_FOLDER)


@pytest.hookimpl(tryfirst=True)  # before xdist's, which files each test of a group under its group
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        ray = item.get_closest_marker("ray") is not None
        if "moto_server" in fixtures:
            _MOTO_MODULES.add(item.path)
        if PROCESS_FIXTURES.intersection(fixtures) or ray:
            item.add_marker(pytest.mark.process)
        if _runs_on_one_worker(item, config.rootpath):
            item.add_marker(pytest.mark.xdist_group(ONE_WORKER))


@pytest.fixture(autouse=True)
def no_unmarked_processes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under `make test-fast`, starting a process from a test not marked ``process`` fails it."""
    if os.environ.get(NO_PROCESSES_ENV) != "1" or request.node.get_closest_marker("process"):
        return
    import multiprocessing.process
    import subprocess

    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(
            f"{request.node.nodeid} starts a process: mark it `process` (pytestmark in its module), so "
            "that `make test-fast` leaves it out"
        )

    monkeypatch.setattr(subprocess.Popen, "_execute_child", refused)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refused)


# --- skips CI does not allow ------------------------------------------------------------------------------

#: With this set (CI does), a skip whose reason is not on tests/allowed_skips.txt fails the run: a check
#: that silently did not run is a check that did not pass.
STRICT_SKIPS_ENV = "RECALL_GUI_STRICT_SKIPS"
_ALLOWED_SKIPS = Path(__file__).with_name("allowed_skips.txt")
_unlisted_skips: list[str] = []


def allowed_skip_reasons(path: Path = _ALLOWED_SKIPS) -> list[str]:
    """The allowed reasons (a skip is allowed when its reason contains one), without comments."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Without pytest-qt (`make test-core` runs without Qt), its settings in pyproject.toml are still
    known, so ``--strict-config`` accepts them."""
    import importlib.util

    if importlib.util.find_spec("pytestqt") is None:
        for name in ("qt_api", "qt_log_level_fail"):
            parser.addini(name, "pytest-qt's (not installed)")
        parser.addini("qt_log_ignore", "pytest-qt's (not installed)", type="linelist")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and os.environ.get(STRICT_SKIPS_ENV) == "1" and not hasattr(report, "wasxfail"):
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if not any(allowed in reason for allowed in allowed_skip_reasons()):
            _unlisted_skips.append(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _RUN_RAY.stop()  # a run stopped early (-x, Ctrl+C) may end within the Ray tests
    _RUN_MOTO.stop()
    if _unlisted_skips:
        print(f"\n{len(_unlisted_skips)} skip(s) not on {_ALLOWED_SKIPS.name} ({STRICT_SKIPS_ENV}=1):")
        for line in _unlisted_skips:
            print(f"  {line}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
