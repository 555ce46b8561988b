"""The cache of finished maps: a t-SNE map is kept on disk (with the count of rows it was made from) and
read back by another session; a damaged file there is made again, never an error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from recall_gui.core.session.map_cache import MAPS_KEPT, KeptMap, MapCache, MapKey, Projection

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


def other_key(version: int) -> MapKey:
    return ("/kb", "notes", "vector", version, "2025-01-01T00:00:00", "pca", 0, 1_000_000, "l2", "r1")


def pca_map(value: float) -> KeptMap:
    return KeptMap(Projection(np.full((1, 2), value, np.float32), "pca", 0), np.array([1], np.uint64), 1)


def test_a_cache_without_a_folder_keeps_maps_in_memory_only() -> None:
    cache = MapCache()
    made = KeptMap(Projection(np.zeros((1, 2), np.float32), "tsne", 0), np.array([1], np.uint64), 1)
    assert cache.put(KEY, made) == "no cache folder is set"
    assert cache.get(KEY) is made
    assert MapCache().get(KEY) is None  # nothing on disk for another session
    cache.forget()
    assert cache.get(KEY) is None


def test_the_least_recently_used_map_is_dropped_past_the_bound() -> None:
    cache = MapCache()
    for version in range(MAPS_KEPT):
        cache.put(other_key(version), pca_map(version))
    assert cache.get(other_key(0)) is not None  # read again: now the most recently used
    cache.put(other_key(MAPS_KEPT), pca_map(MAPS_KEPT))
    assert cache.get(other_key(1)) is None
    assert [cache.get(other_key(v)) is not None for v in (0, *range(2, MAPS_KEPT + 1))] == [True] * MAPS_KEPT


def test_a_pca_map_is_never_written_to_disk(tmp_path: Path) -> None:
    assert MapCache(tmp_path).put(other_key(1), pca_map(1.0)) == ""
    assert list(tmp_path.iterdir()) == []


def test_a_map_file_of_another_map_is_not_used(tmp_path: Path) -> None:
    """A file whose name no longer matches what it holds (copied, or a digest that collides)."""
    kept(tmp_path)
    cache = MapCache(tmp_path)
    other: MapKey = ("/kb", "notes", "vector", 4, "2025-01-01T00:00:00", "tsne", 0, 1_000_000, "l2", "r1")
    source, target = cache.path(KEY), cache.path(other)
    assert source is not None and target is not None
    target.write_bytes(source.read_bytes())
    assert cache.get(other) is None


def test_a_map_file_with_fewer_places_than_rows_is_made_again(tmp_path: Path) -> None:
    kept(tmp_path)
    path = MapCache(tmp_path).path(KEY)
    assert path is not None
    with np.load(path) as stored:
        arrays = {name: stored[name] for name in stored.files}
    arrays["positions"] = arrays["positions"][:4]
    with path.open("wb") as file:
        np.savez(file, **arrays)
    assert MapCache(tmp_path).get(KEY) is None


def test_a_map_kept_without_a_count_reads_back_without_one(tmp_path: Path) -> None:
    made = KeptMap(Projection(np.ones((2, 2), np.float32), "tsne", 0), np.array([3, 9], np.uint64), None)
    assert MapCache(tmp_path).put(KEY, made) == ""
    found = MapCache(tmp_path).get(KEY)
    assert found is not None and found.total is None
    assert found.row_ids.tolist() == [3, 9]


def test_only_a_linear_map_places_another_vector() -> None:
    mean = np.array([1.0, 1.0, 1.0], np.float32)
    components = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]], np.float32)
    pca = Projection(np.zeros((1, 2), np.float32), "pca", 0, mean=mean, components=components)
    assert pca.place([3.0, 5.0, 4.0]) == (2.0, 6.0)
    assert Projection(np.zeros((1, 2), np.float32), "tsne", 0).place([3.0, 5.0, 4.0]) is None
