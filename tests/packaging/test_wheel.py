"""The wheel alone gives a working recall-gui: built from a copy of the sources, installed with pipx (a fresh
venv holding only the wheel and its dependencies, its command on a bin dir), and run from a directory where
the checkout is not importable.

One install per run (about a minute with a warm pip cache); every test below uses it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from recall_gui import __version__
from recall_gui.core.demo import demo_passages
from recall_gui.core.search.harness import Harness
from tests.kbtools import KnowledgeBase

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.process]

#: What a fresh copy of the sources must not carry along: environments, build output, caches.
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", "bench"
)


@dataclass(frozen=True)
class Installed:
    wheel: Path
    command: Path  # the `recall-gui` pipx put on its bin dir
    python: Path  # the interpreter of the venv pipx made
    home: Path  # the venv and everything pipx wrote
    cwd: Path  # somewhere the checkout is not


def run(command: list[str], env: Mapping[str, str], cwd: Path, timeout: float = 600) -> str:
    done = subprocess.run(
        command, env=dict(env), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{command} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def clean_env(**extra: str) -> dict[str, str]:
    """This run's isolated app dirs (conftest), without anything that would make the checkout importable."""
    env = {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    return {**env, **extra}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCES)
    env = clean_env()
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(root / "dist"), str(source)],
        env,
        root,
    )
    (wheel,) = (root / "dist").glob("recall_gui-*.whl")
    home, bin_dir = root / "pipx", root / "bin"
    pipx_env = clean_env(
        PIPX_HOME=str(home), PIPX_BIN_DIR=str(bin_dir), PIPX_MAN_DIR=str(root / "man"), USE_EMOJI="0"
    )
    # --no-compile: byte-compiling ~600 MB of dependencies is most of an install's time, and not needed.
    run([sys.executable, "-m", "pipx", "install", "--pip-args=--no-compile", str(wheel)], pipx_env, root)
    cwd = root / "elsewhere"
    cwd.mkdir()
    return Installed(
        wheel, bin_dir / "recall-gui", home / "venvs" / "recall-gui" / "bin" / "python", home, cwd
    )


def test_the_wheel_carries_the_files_the_app_reads_at_run_time(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    for data in (
        "recall_gui/core/embedders/offline_model/tokenizer.json",
        "recall_gui/core/embedders/offline_model/tokenizer_config.json",
        "recall_gui/core/embedders/offline_model/LICENSE.md",
        "recall_gui/qt/assets/recall-gui.svg",
        "recall_gui/core/demo_data/python-docs.arrow",
        # The faces' lists, which lazy_loader reads at run time (and type checkers of a user's code).
        "recall_gui/core/__init__.pyi",
        *(
            f"recall_gui/{face.relative_to(ROOT / 'recall_gui')}"
            for face in (ROOT / "recall_gui/core").glob("*/__init__.pyi")
        ),
    ):
        assert data in names
    assert not any(name.startswith(("tests/", "packaging/", "bench/")) for name in names)


def test_the_command_runs_the_installed_package_not_the_checkout(installed: Installed) -> None:
    where = run(
        [str(installed.python), "-c", "import recall_gui; print(recall_gui.__file__)"],
        clean_env(),
        installed.cwd,
    )
    assert Path(where.strip()).is_relative_to(installed.home)
    assert (
        run([str(installed.command), "--version"], clean_env(), installed.cwd).strip()
        == f"recall-gui {__version__}"
    )


def test_search_on_a_knowledge_base_built_here_returns_the_checkouts_json(
    installed: Installed, kb: KnowledgeBase, tmp_path: Path
) -> None:
    env = clean_env(RECALL_GUI_CACHE_DIR=str(tmp_path / "cache"))  # its own staged model folder
    query = [
        "search",
        "--registry",
        str(kb.registry_dir),
        "--db",
        kb.name,
        "--limit",
        "3",
        "capital of France",
    ]
    out = run([str(installed.command), *query], env, installed.cwd)
    assert json.loads(out)["results"][0]["id"] == "paris"

    async def in_checkout() -> str:
        harness = Harness(kb.registry_dir)
        try:
            return await harness.recall_search({"db_name": kb.name, "query": "capital of France", "limit": 3})
        finally:
            await harness.aclose()

    assert out == asyncio.run(in_checkout()) + "\n"


def test_the_demo_corpus_and_the_icon_are_reachable_from_the_installed_package(installed: Installed) -> None:
    script = (
        "from importlib import resources; from recall_gui.core.demo import demo_passages; "
        "print(len(demo_passages())); "
        "print(resources.files('recall_gui.qt').joinpath('assets', 'recall-gui.svg').read_text())"
    )
    out = run([str(installed.python), "-c", script], clean_env(), installed.cwd)
    count, svg = out.split("\n", 1)
    assert int(count) == len(demo_passages()) > 500
    assert svg.rstrip("\n") == (ROOT / "recall_gui" / "qt" / "assets" / "recall-gui.svg").read_text().rstrip(
        "\n"
    )


def test_the_installed_window_starts_and_searches(
    installed: Installed, kb: KnowledgeBase, tmp_path: Path
) -> None:
    env = clean_env(QT_QPA_PLATFORM="offscreen", RECALL_GUI_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(
        [str(installed.command), "--smoke", "--registry", str(kb.registry_dir)],
        env=env,
        cwd=installed.cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"search in {kb.name}: 5 rows" in done.stderr
