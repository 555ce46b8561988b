"""Finished maps: each row's place on a plane, kept per table version in memory and, for the neighbour
layout, in the app's cache folder (never beside the knowledge base). The session owns the one cache.
A cache folder that cannot be written costs only time: the map is made again next time, and
:meth:`MapCache.put` says why.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import zipfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.regular_files import open_regular

Method = Literal["pca", "tsne"]


Positions = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Projection:
    """Each row's place on the map (row ``i`` of the matrix it was made from)."""

    positions: Positions
    method: Method
    seed: int
    #: PCA only: the centre and the two components, to place other vectors on the same plane.
    mean: npt.NDArray[np.float32] | None = None
    components: npt.NDArray[np.float32] | None = None
    #: How the map was made, in words (the sample, the neighbours, the metric).
    how: str = ""
    #: The neighbour layout: the rows laid out by t-SNE (the others were placed from them); not kept on disk.
    sampled_rows: npt.NDArray[np.intp] | None = None

    def place(self, vector: npt.ArrayLike) -> tuple[float, float] | None:
        """Where ``vector`` lands on this plane; ``None`` for a projection that is not linear (t-SNE)."""
        if self.mean is None or self.components is None:
            return None
        point = self.components @ (np.asarray(vector, np.float32) - self.mean)
        return float(point[0]), float(point[1])


class KeptMap(NamedTuple):
    """A finished map: its projection, the row of each point, and how many rows with a usable vector it
    was made from (all of them mapped, or a sample; ``None`` in a file written before it was kept)."""

    projection: Projection
    row_ids: npt.NDArray[np.uint64]
    total: int | None


#: What identifies a map: URI, table, vector column, version, the version's time (a table dropped and
#: made again restarts its version numbers), projection, seed, the sampling bound, the metric its
#: neighbours are found by, and the layout's revision (a map made by an older layout is not reused).
MapKey = tuple[str, str, str, int, str, str, int, int, str, str]


#: Finished maps kept in memory (each costs 16 bytes per point: two float32 places and a uint64 row id).
MAPS_KEPT = 8


class MapCache:
    """Finished projections with the row ids they map, by :data:`MapKey`; t-SNE's are also kept on
    disk under ``folder`` (they take minutes to make, and a version never changes)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._maps: OrderedDict[MapKey, KeptMap] = OrderedDict()

    def get(self, key: MapKey) -> KeptMap | None:
        found = self._maps.get(key)
        if found is not None:
            self._maps.move_to_end(key)
            return found
        found = self._load(key)
        if found is not None:
            self._keep(key, found)
        return found

    def put(self, key: MapKey, kept: KeptMap) -> str:
        """Keep a map; returns why it could not be kept on disk ("" if it was, or PCA's, never saved)."""
        self._keep(key, kept)
        return self._save(key, kept) if kept.projection.method != "pca" else ""

    def _keep(self, key: MapKey, value: KeptMap) -> None:
        self._maps[key] = value
        self._maps.move_to_end(key)
        while len(self._maps) > MAPS_KEPT:
            self._maps.popitem(last=False)

    def forget(self) -> None:
        self._maps.clear()

    def path(self, key: MapKey) -> Path | None:
        if self.folder is None:
            return None
        digest = hashlib.sha256(json.dumps(list(key)).encode("utf-8")).hexdigest()[:32]
        return self.folder / f"{digest}.npz"

    def _load(self, key: MapKey) -> KeptMap | None:
        path = self.path(key)
        if path is None:
            return None
        try:
            # Opened here: np.load leaves a file it opened open when the file is not a zip archive.
            with open_regular(path) as file, np.load(file, allow_pickle=False) as stored:
                if json.loads(str(stored["key"])) != list(key):
                    return None
                positions = np.asarray(stored["positions"], np.float32)
                row_ids = np.asarray(stored["row_ids"], np.uint64)
                how = str(stored["how"]) if "how" in stored else ""
                total = int(stored["total"]) if "total" in stored else None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return None  # a damaged cache file is made again
        if positions.shape != (len(row_ids), 2):
            return None
        projection = Projection(positions, key[5], key[6], how=how)  # type: ignore[arg-type]
        return KeptMap(projection, row_ids, total)

    def _save(self, key: MapKey, kept: KeptMap) -> str:
        path = self.path(key)
        if path is None:
            return "no cache folder is set"
        buffer = io.BytesIO()
        arrays: dict[str, Any] = {
            "key": json.dumps(list(key)),
            "positions": kept.projection.positions,
            "row_ids": kept.row_ids,
            "how": kept.projection.how,
        }
        if kept.total is not None:
            arrays["total"] = kept.total
        np.savez(buffer, **arrays)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(buffer.getvalue())
            os.replace(temporary, path)
        except OSError as error:  # a cache that cannot be written only costs the next run its time
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
            reason = error.strerror or type(error).__name__
            return f"the cache folder {path.parent} cannot be written ({reason})"
        return ""
