"""What a table's files tell when they cannot be read: a vector changed past its 65,536th component is a
change, a damaged table is "damaged", a table the user may not read is "permission denied", never a
columns problem with a hint to name columns (through ``diff``, ``list`` and ``versions`` on ``--path``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.core.test_cli import ROOT, cli
from tests.kbtools import write_lance_table

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

WIDE = 70_000


def test_diff_sees_a_change_past_the_65536th_component(tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(3, WIDE)).astype(np.float32)
    write_lance_table(tmp_path / "db", "notes", ["a", "b", "c"], ["one", "two", "three"], vectors)
    table = lancedb.connect(str(tmp_path / "db")).open_table("notes")
    changed = vectors[1].copy()
    changed[WIDE - 1] += 1.0  # the last component only
    table.delete("id = 'b'")
    table.add(
        pa.table(
            {
                "id": pa.array(["b"]),
                "content": pa.array(["two"]),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(changed), WIDE),
            }
        )
    )
    versions = [v["version"] for v in table.list_versions()]

    def vectors_at(version: int) -> dict[str, np.ndarray]:
        table.checkout(version)
        rows = table.to_arrow()
        width = rows.column("vector").type.list_size
        flat = rows.column("vector").combine_chunks().values.to_numpy()
        return dict(zip(rows.column("id").to_pylist(), flat.reshape(-1, width), strict=True))

    old, new = vectors_at(versions[0]), vectors_at(versions[-1])
    expected = sorted(i for i in old.keys() & new.keys() if not np.array_equal(old[i], new[i]))
    assert expected == ["b"]  # NumPy's verdict, from LanceDB's two versions

    done = cli("diff", "--path", str(tmp_path / "db"), "--from", str(versions[0]), "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert (found["changed"], found["added"], found["removed"]) == (expected, [], [])


def test_a_damaged_table_is_said_to_be_damaged(tmp_path: Path) -> None:
    write_lance_table(tmp_path / "db", "notes", ["a"], ["one"], np.ones((1, 8), np.float32))
    (manifest,) = (tmp_path / "db" / "notes.lance" / "_versions").glob("*.manifest")
    with manifest.open("r+b") as file:
        file.truncate(50)

    listed = cli("list", "--path", str(tmp_path / "db"))
    assert listed.returncode == 1
    assert "FAILED storage" in listed.stdout
    assert 'notes: table "notes" cannot be read: its files are damaged or incomplete (' in listed.stdout
    assert "columns" not in listed.stdout + listed.stderr

    versions = cli("versions", "--path", str(tmp_path / "db"))
    assert versions.returncode == 1
    assert "its files are damaged or incomplete" in versions.stderr
    assert "hint: Check " in versions.stderr and "a file may be truncated or missing" in versions.stderr
    assert "column" not in versions.stderr


@pytest.fixture
def unreadable_folder() -> Iterator[Path]:
    """A folder whose table the user may not read (chmod 000), in a folder any user may enter."""
    base = Path(tempfile.mkdtemp(prefix="recall-unreadable-"))
    base.chmod(0o755)
    try:
        write_lance_table(base / "kb", "notes", ["a"], ["one"], np.ones((1, 8), np.float32))
        for path in [base / "kb", *(base / "kb").rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        (base / "kb" / "notes.lance").chmod(0)
        yield base
    finally:
        (base / "kb" / "notes.lance").chmod(0o755)
        shutil.rmtree(base)


def as_a_user_who_may_not_read(base: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command as this user (not root: chmod binds it), or as nobody when the tests run as root."""
    if os.geteuid() != 0:
        return cli(*args)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no user to whom chmod 000 applies")
    home = base / "home"
    home.mkdir(mode=0o777, exist_ok=True)
    home.chmod(0o777)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "HOME": str(home),
        "RECALL_GUI_CONFIG_DIR": str(home / "config"),
        "RECALL_GUI_DATA_DIR": str(home / "data"),
        "RECALL_GUI_CACHE_DIR": str(home / "cache"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
        "RECALL_GUI_DOWNLOAD_MODELS": "0",
    }
    command = [setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    return subprocess.run(
        [*command, sys.executable, "-m", "recall_gui", *args],
        capture_output=True, text=True, env=env, cwd=str(home), timeout=120, check=False,
    )  # fmt: skip


def test_a_table_the_user_may_not_read_is_said_so(unreadable_folder: Path) -> None:
    folder = str(unreadable_folder / "kb")
    listed = as_a_user_who_may_not_read(unreadable_folder, "list", "--path", folder)
    assert listed.returncode == 1, listed.stderr
    assert "FAILED storage" in listed.stdout
    assert (
        f'notes: table "notes" cannot be read: you may not read its files (permission denied on '
        f"{folder}/notes.lance)" in listed.stdout
    )
    searched = as_a_user_who_may_not_read(unreadable_folder, "versions", "--path", folder)
    assert searched.returncode == 1
    assert "hint: Give your user read access to that folder" in searched.stderr
    assert "column" not in searched.stderr
