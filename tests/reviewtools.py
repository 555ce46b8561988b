"""Helpers for review tests: small LanceDB tables written by the test (never by the app), their registry
entries, review records written by hand, and the command line run in this process."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.kbtools import cosh_entry, write_lance_table, write_registry

WIDTH = 8


def sha(text: str) -> str:
    """The oracle for a content's digest: hashlib over the UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Table:
    """A table the test wrote: its folder, registry and rows."""

    name: str
    db_dir: Path
    registry_dir: Path
    ids: tuple[str, ...]
    contents: tuple[str, ...]

    def entry(self) -> Any:
        from recall_gui.core.registry.registry import load_registry

        found = load_registry(self.registry_dir).get(self.name)
        assert found is not None
        return found

    def rewrite(self, ids: Sequence[str], contents: Sequence[str]) -> Table:
        """A new version holding these rows (the test writes its own table)."""
        import lancedb
        import numpy as np
        import pyarrow as pa

        vectors = np.random.default_rng(len(contents)).random((len(contents), WIDTH), dtype=np.float32)
        data = pa.table(
            {
                "id": pa.array(list(ids), pa.utf8()),
                "content": pa.array(list(contents), pa.utf8()),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), WIDTH),
            }
        )
        lancedb.connect(str(self.db_dir)).open_table(self.name).add(data, mode="overwrite")
        return Table(self.name, self.db_dir, self.registry_dir, tuple(ids), tuple(contents))

    def delete(self, where: str) -> None:
        import lancedb

        lancedb.connect(str(self.db_dir)).open_table(self.name).delete(where)


def write_table(
    folder: Path, ids: Sequence[str], contents: Sequence[str], name: str = "notes", vectors: Any = None
) -> Table:
    """A cosh-style table of ``ids`` and ``contents`` (vectors at random unless given) registered in its
    own registry."""
    import numpy as np

    if vectors is None:
        vectors = np.random.default_rng(7).random((len(ids), WIDTH), dtype=np.float32)
    write_lance_table(folder / "lancedb", name, ids, contents, vectors)
    registry = write_registry(folder / "registry", [cosh_entry(name, folder / "lancedb")])
    return Table(name, folder / "lancedb", registry, tuple(ids), tuple(contents))


def record_line(
    content: str,
    verdict: str | None,
    *,
    record: str,
    who: str = "alice",
    when: str = "2025-06-01T10:00:00Z",
    entry_id: str = "x",
    undoes: str | None = None,
    version: int | None = 1,
) -> str:
    """A review record written by hand (the format of docs/REVIEW.md), as one line."""
    data: dict[str, Any] = {
        "format": 1,
        "record": record,
        "kind": "undo" if undoes else "verdict",
        "db": "notes",
        "uri": "/somewhere",
        "table": "notes",
        "table_version": version,
        "id": entry_id,
        "content_sha256": sha(content),
        "verdict": verdict,
        "note": "",
        "who": who,
        "when": when,
    }
    if undoes:
        data["undoes"] = undoes
    return json.dumps(data) + "\n"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``recall-gui`` with ``args`` in this process: its exit status, stdout and stderr."""
    from recall_gui.cli import main

    try:
        status = main(list(args))
    except SystemExit as stop:  # argparse refuses the arguments
        status = int(stop.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err
