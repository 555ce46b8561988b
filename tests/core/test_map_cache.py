"""The cache of finished maps: a t-SNE map is kept on disk (with the count of rows it was made from) and
read back by another session; a damaged file there is made again, never an error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from recall_gui.core.session.map_cache import KeptMap, MapCache, MapKey, Projection

KEY: MapKey = ("/kb", "notes", "vector", 3, "2025-01-01T00:00:00", "tsne", 0, 1_000_000, "l2", "r1")


def kept(folder: Path) -> KeptMap:
    positions = np.arange(10, dtype=np.float32).reshape(5, 2)
    row_ids = np.array([4, 8, 15, 16, 23], np.uint64)
    made = KeptMap(Projection(positions, "tsne", 0, how="t-SNE of 5 rows"), row_ids, 7)
    MapCache(folder).put(KEY, made)
    return made


def test_a_kept_map_is_read_back_by_another_cache(tmp_path: Path) -> None:
    made = kept(tmp_path)
    found = MapCache(tmp_path).get(KEY)
    assert found is not None
    assert np.array_equal(found.projection.positions, made.projection.positions)
    assert np.array_equal(found.row_ids, made.row_ids)
    assert found.projection.how == "t-SNE of 5 rows" and found.total == 7


def test_a_map_file_written_without_its_count_reads_as_not_counted(tmp_path: Path) -> None:
    made = kept(tmp_path)
    path = MapCache(tmp_path).path(KEY)
    assert path is not None
    with np.load(path) as stored:
        arrays = {name: stored[name] for name in stored.files if name != "total"}
    with path.open("wb") as file:
        np.savez(file, **arrays)
    found = MapCache(tmp_path).get(KEY)
    assert found is not None and found.total is None and np.array_equal(found.row_ids, made.row_ids)


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"PK\x03\x04" + b"\x00garbage" * 40,  # a zip's signature, then garbage
        lambda data: data[: len(data) // 2],  # cut short while written
        lambda data: data[:200] + b"\xff" * 60 + data[260:],  # bytes changed inside
    ],
)
def test_a_damaged_map_file_is_made_again(tmp_path: Path, damage: Callable[[bytes], bytes]) -> None:
    made = kept(tmp_path)
    cache = MapCache(tmp_path)
    path = cache.path(KEY)
    assert path is not None
    path.write_bytes(damage(path.read_bytes()))
    assert cache.get(KEY) is None
    assert cache.put(KEY, made) == ""  # made again, and kept again
    found = MapCache(tmp_path).get(KEY)
    assert found is not None and np.array_equal(found.row_ids, made.row_ids)
