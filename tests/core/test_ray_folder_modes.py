"""The app's cache stays the user's own when Ray runs: Ray opens the folder it is given and its session
folders (``session_*``, ``sockets/``, ``runtime_resources/``) to every user (0777), so that folder lies in
a ``ray`` folder of the user's alone (0700), and nothing below it can be reached by anyone else."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from recall_gui.core.ray import cluster as ray_runtime

ROOT = Path(__file__).resolve().parents[2]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def short_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache folder shallow enough for Ray's socket paths below it (see ``RAY_FOLDER_BYTES``)."""
    folder = Path(tempfile.mkdtemp(prefix="rg-", dir="/tmp"))
    monkeypatch.setenv("RECALL_GUI_CACHE_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_ray_folder_is_made_the_users_own(short_cache: Path) -> None:
    assert ray_runtime._ray_folder() == short_cache / "ray" / "r"
    assert mode(short_cache / "ray") == 0o700


def test_a_ray_folder_an_earlier_version_left_open_is_closed(short_cache: Path) -> None:
    (short_cache / "ray" / "session_old").mkdir(parents=True)
    os.chmod(short_cache / "ray", 0o777)
    assert ray_runtime._ray_folder() == short_cache / "ray" / "r"
    assert mode(short_cache / "ray") == 0o700
    os.chmod(short_cache / "ray", 0o755)
    assert ray_runtime._log_folder() == short_cache / "ray"  # where a joined cluster's start is logged
    assert mode(short_cache / "ray") == 0o700


def test_below_a_deep_cache_rays_own_folder_is_the_users_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALL_GUI_CACHE_DIR", str(tmp_path / ("deep-" + "d" * 60)))
    folder = ray_runtime._ray_folder()
    assert folder is not None and folder.parent.name.startswith("recall-gui-ray-")  # this run's own
    try:
        assert mode(folder.parent) == 0o700
    finally:
        shutil.rmtree(folder.parent)  # a folder of this run only (checked above)


@pytest.mark.process
def test_what_a_real_ray_makes_in_the_cache_is_out_of_other_users_reach(short_cache: Path) -> None:
    if importlib.util.find_spec("ray") is None or importlib.util.find_spec("lance_ray") is None:
        pytest.skip("the scale extra (Ray, lance-ray) is not installed")
    code = "from recall_gui.core.ray.cluster import ray_cluster\nwith ray_cluster(cpus=1):\n    pass\n"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(ROOT), "RECALL_GUI_CACHE_DIR": str(short_cache)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    ray_folder = short_cache / "ray"
    given = ray_folder / "r"
    sessions = [p for p in given.iterdir() if p.name.startswith("session_") and not p.is_symlink()]
    assert sessions, sorted(p.name for p in given.iterdir())  # Ray's files are there (Ray opens them)...
    assert mode(ray_folder) == 0o700  # ...below a folder only this user may enter
