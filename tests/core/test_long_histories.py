"""A table of hundreds of versions: ``versions`` and ``diff`` say on stderr that they list them, a listing
may take the storage timeout per thousand versions, and a timeout on a local folder names its cause (no
network is involved), never "check that the server or network is up"."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.versions import VERSIONS_PER_TIMEOUT, kept_versions, listing_limit
from tests.core.test_cli import cli
from tests.kbtools import write_lance_table

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

VERSIONS = 300


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import lancedb
    import pyarrow as pa

    db = tmp_path_factory.mktemp("history") / "db"
    write_lance_table(db, "notes", ["r0"], ["first"], np.ones((1, 8), np.float32))
    table = lancedb.connect(str(db)).open_table("notes")
    for number in range(1, VERSIONS):
        table.add(
            pa.table(
                {
                    "id": pa.array([f"r{number}"]),
                    "content": pa.array([f"row {number}"]),
                    "vector": pa.FixedSizeListArray.from_arrays(pa.array(np.ones(8, np.float32)), 8),
                }
            )
        )
    return db


def test_a_long_listing_says_so_and_lists_what_lancedb_lists(history: Path) -> None:
    import lancedb

    listed = lancedb.connect(str(history)).open_table("notes").list_versions()
    assert len(listed) == VERSIONS
    assert kept_versions(TableTarget(str(history), "notes")) == VERSIONS

    done = cli("versions", "--path", str(history), "--json")
    assert done.returncode == 0, done.stderr
    assert f'listing {VERSIONS} versions of "notes" (LanceDB reads each one; Ctrl-C stops)…' in done.stderr
    assert [v["version"] for v in json.loads(done.stdout)] == [v["version"] for v in listed]

    diffed = cli("diff", "--path", str(history), "--from", str(listed[-2]["version"]), "--json")
    assert diffed.returncode == 0, diffed.stderr
    assert f'listing {VERSIONS} versions of "notes"' in diffed.stderr
    assert json.loads(diffed.stdout)["added"] == [f"r{VERSIONS - 1}"]


def test_a_short_history_lists_quietly(tmp_path: Path) -> None:
    write_lance_table(tmp_path / "db", "notes", ["a"], ["one"], np.ones((1, 8), np.float32))
    done = cli("versions", "--path", str(tmp_path / "db"))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_the_time_allowed_grows_with_the_history() -> None:
    assert listing_limit(None, 30) == 30
    assert listing_limit(VERSIONS_PER_TIMEOUT // 2, 30) == 30
    assert listing_limit(10 * VERSIONS_PER_TIMEOUT, 30) == 300


@pytest.mark.parametrize("command", [("versions",), ("diff", "--from", "1")])
def test_a_timeout_on_a_local_folder_is_not_blamed_on_the_network(
    history: Path, command: tuple[str, ...]
) -> None:
    done = cli(*command, "--path", str(history), env={"RECALL_GUI_STORAGE_TIMEOUT": "0.001"})
    assert done.returncode == 1
    assert "timed out after 0.001 s" in done.stderr or "did not answer within 0.001 s" in done.stderr
    assert "hint: The folder is local, so no server or network is involved" in done.stderr
    assert "Check that the server or network is up" not in done.stderr
