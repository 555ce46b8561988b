"""What changed between two versions of a table: rows added, removed, and changed in content or vector.

Rows are matched by id. Both versions are read as a stream of batches, and each row is kept only as a
fingerprint: its id, an 8-byte digest of its content, an 8-byte digest of its vector and its row id, so
a diff of two million-row versions holds a few dozen bytes per row, never the texts or vectors. The ids
are then matched by Arrow's hash join. A table without an id column (in either version) is matched by
content instead: a row whose content is new is added, one whose content is gone is removed, and a
content kept with another vector is changed; rows are then named by their row ids, as the app names them.
Nothing is written: both versions are opened read-only (``TableTarget.at``).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.types import SearchHit
from recall_gui.core.session.session import Session
from recall_gui.core.storage.lance_calls import read_batches, read_query
from recall_gui.core.storage.open_table import OpenTable
from recall_gui.core.storage.rows import hits_from_arrow
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.versions import VersionsProgress, find_version, list_versions

if TYPE_CHECKING:
    import pyarrow as pa

Kind = Literal["added", "removed", "changed"]
MatchedBy = Literal["id", "content"]
#: ``progress(rows_read, rows_in_all)`` while the two versions are read.
DiffProgress = Callable[[int, int], None]

#: Odd multipliers for the vectors' digest (fixed, so a digest means the same in every run).
_WEIGHTS = np.random.default_rng(0x5EED).integers(1, 2**63, size=65536, dtype=np.uint64) * 2 + 1
_NONE = 0  # the digest of a missing content or vector


@dataclass(frozen=True)
class RowChange:
    """One row that differs: its id (or row id, when matched by content), how, and where it is."""

    id: str
    kind: Kind
    #: For a changed row: whether its content and/or its vector differ.
    content_changed: bool = False
    vector_changed: bool = False
    #: Its row id in the older version (``None`` if added) and in the newer one (``None`` if removed).
    old_row_id: int | None = None
    new_row_id: int | None = None

    @property
    def what(self) -> str:
        """In words, for a list: ``added``, ``removed``, ``content``, ``vector`` or ``content and vector``."""
        if self.kind != "changed":
            return self.kind
        parts = [
            name for name, on in (("content", self.content_changed), ("vector", self.vector_changed)) if on
        ]
        return " and ".join(parts) or "changed"


@dataclass(frozen=True)
class VersionDiff:
    """The rows that differ between version ``from_version`` and ``to_version`` of one table."""

    table: str
    from_version: int
    to_version: int
    by: MatchedBy
    changes: tuple[RowChange, ...]
    old_rows: int = 0
    new_rows: int = 0
    #: Ids held by more than one row in either version (matched as a group, not row by row).
    duplicate_ids: tuple[str, ...] = field(default_factory=tuple)

    def ids(self, kind: Kind) -> list[str]:
        return [change.id for change in self.changes if change.kind == kind]

    @property
    def added(self) -> list[str]:
        return self.ids("added")

    @property
    def removed(self) -> list[str]:
        return self.ids("removed")

    @property
    def changed(self) -> list[str]:
        return self.ids("changed")

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.from_version,
            "to": self.to_version,
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
            "by": self.by,
        }

    def summary(self) -> str:
        """``3 added, 1 removed, 2 changed``."""
        return f"{len(self.added):,} added, {len(self.removed):,} removed, {len(self.changed):,} changed"


@dataclass
class _Side:
    """One version's rows as fingerprints, in the order they were read."""

    keys: list[pa.Array] = field(default_factory=list)
    contents: list[npt.NDArray[np.uint64]] = field(default_factory=list)
    vectors: list[npt.NDArray[np.uint64]] = field(default_factory=list)
    row_ids: list[npt.NDArray[np.uint64]] = field(default_factory=list)

    def table(self, suffix: str) -> pa.Table:
        import pyarrow as pa

        def joined(parts: list[npt.NDArray[np.uint64]]) -> pa.Array:
            return pa.array(np.concatenate(parts) if parts else np.zeros(0, np.uint64), pa.uint64())

        keys = pa.concat_arrays(self.keys) if self.keys else pa.array([], pa.string())
        return pa.table(
            {
                "key": keys,
                f"content{suffix}": joined(self.contents),
                f"vector{suffix}": joined(self.vectors),
                f"row{suffix}": joined(self.row_ids),
            }
        )


def content_digests(values: pa.Array) -> npt.NDArray[np.uint64]:
    """An 8-byte BLAKE2b digest of each text (0 for a missing one)."""
    digests = np.empty(len(values), np.uint64)
    for position, text in enumerate(values.to_pylist()):
        if text is None:
            digests[position] = _NONE
            continue
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else str(text).encode()
        digests[position] = int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little") | 1
    return digests


def vector_digests(values: pa.Array) -> npt.NDArray[np.uint64]:
    """A digest of each vector's bytes (0 for a missing one): a sum of its 32-bit words times fixed odd
    multipliers, so any change in one component changes it."""
    import pyarrow as pa

    rows = len(values)
    width = getattr(values.type, "list_size", None)
    if width is None or not pa.types.is_fixed_size_list(values.type):  # a variable-length list: row by row
        return content_digests(pa.array([None if v is None else repr(v) for v in values.to_pylist()]))
    flat = values.values.slice(values.offset * width, rows * width).to_numpy(zero_copy_only=False)
    raw = np.ascontiguousarray(flat).view(np.uint8).reshape(rows, -1)
    words = raw.view(np.uint32) if raw.shape[1] % 4 == 0 else raw
    digests = np.zeros(rows, np.uint64)
    # Past the weights' length, each further block of words takes them times another odd number: every
    # component still counts (an odd multiplier never maps a change to 0 mod 2**64).
    for start in range(0, words.shape[1], len(_WEIGHTS)):
        block = words[:, start : start + len(_WEIGHTS)].astype(np.uint64)
        weights = _WEIGHTS[: block.shape[1]] * np.uint64(2 * (start // len(_WEIGHTS)) + 1)
        digests += (block * weights).sum(axis=1, dtype=np.uint64)
    digests |= np.uint64(1)
    if values.null_count:
        digests[values.is_null().to_numpy(zero_copy_only=False)] = _NONE
    return np.asarray(digests, np.uint64)


def _fingerprint(batch: pa.RecordBatch, key: str | None, content: str, vector: str, side: _Side) -> None:
    """Add one batch's rows to ``side`` (on a worker thread: hashing is CPU work)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    contents = batch.column(content)
    side.contents.append(content_digests(contents))
    side.vectors.append(vector_digests(batch.column(vector)))
    side.row_ids.append(batch.column("_rowid").to_numpy().astype(np.uint64))
    if key is not None:
        keys = pc.cast(batch.column(key), pa.string())
        side.keys.append(pc.fill_null(keys, ""))


async def _read(
    session: Session,
    opened: OpenTable,
    key: str | None,
    report: Callable[[int], None],
) -> _Side:
    side = _Side()
    columns = opened.columns
    wanted = list(dict.fromkeys([*([key] if key else []), columns.content, columns.vector]))
    what = f'reading version {opened.version} of "{opened.name}"'
    query = opened.table.query().select(wanted).with_row_id()
    loop = asyncio.get_running_loop()
    async for batch in read_batches(query, what):
        await loop.run_in_executor(
            session.inspect_executor, _fingerprint, batch, key, columns.content, columns.vector, side
        )
        report(batch.num_rows)
    return side


async def diff_versions(
    session: Session,
    target: TableTarget,
    from_version: int,
    to_version: int | None = None,
    *,
    progress: DiffProgress | None = None,
    listing: VersionsProgress | None = None,
) -> VersionDiff:
    """The rows that differ from ``from_version`` to ``to_version`` (``None``: the latest) of ``target``'s
    table; raises :class:`~recall_gui.core.base.errors.InvalidInputError` for a version it does not have
    (``listing``: told how the listing of the versions goes, see ``list_versions``)."""
    versions = await list_versions(session, target, progress=listing)
    old_info = find_version(versions, from_version, target.table_name)
    new_info = versions[-1] if to_version is None else find_version(versions, to_version, target.table_name)
    old = await session.tables.open(target.at(old_info.version))
    new = await session.tables.open(target.at(new_info.version))
    by: MatchedBy = "id" if old.columns.id and new.columns.id else "content"
    total = (old_info.rows or 0) + (new_info.rows or 0)
    read = [0]

    def report(rows: int) -> None:
        read[0] += rows
        if progress is not None:
            progress(read[0], max(total, read[0]))

    old_side = await _read(session, old, old.columns.id if by == "id" else None, report)
    new_side = await _read(session, new, new.columns.id if by == "id" else None, report)
    loop = asyncio.get_running_loop()
    match = _match_by_id if by == "id" else _match_by_content
    changes, duplicates = await loop.run_in_executor(session.inspect_executor, match, old_side, new_side)
    old_count = sum(len(part) for part in old_side.row_ids)
    new_count = sum(len(part) for part in new_side.row_ids)
    return VersionDiff(
        target.table_name,
        old_info.version,
        new_info.version,
        by,
        changes,
        old_count,
        new_count,
        duplicates,
    )


def _match_by_id(old_side: _Side, new_side: _Side) -> tuple[tuple[RowChange, ...], tuple[str, ...]]:
    import pyarrow as pa
    import pyarrow.compute as pc

    old, new = old_side.table("_old"), new_side.table("_new")
    duplicated: set[str] = set()
    for table in (old, new):
        counts = table.group_by("key").aggregate([("key", "count")])
        repeated = counts.filter(pc.greater(counts.column("key_count"), 1)).column("key").to_pylist()
        duplicated.update(repeated)
    changes: list[RowChange] = []
    if duplicated:
        mask_values = pa.array(sorted(duplicated), pa.string())
        changes.extend(_match_groups(old, new, mask_values))
        old = old.filter(pc.invert(pc.is_in(old.column("key"), value_set=mask_values)))
        new = new.filter(pc.invert(pc.is_in(new.column("key"), value_set=mask_values)))
    joined = old.join(new, keys="key", join_type="full outer")
    keys = joined.column("key").to_pylist()
    old_rows = joined.column("row_old").to_pylist()
    new_rows = joined.column("row_new").to_pylist()
    old_content = joined.column("content_old").to_numpy(zero_copy_only=False)
    new_content = joined.column("content_new").to_numpy(zero_copy_only=False)
    old_vector = joined.column("vector_old").to_numpy(zero_copy_only=False)
    new_vector = joined.column("vector_new").to_numpy(zero_copy_only=False)
    for i, key in enumerate(keys):
        old_row, new_row = old_rows[i], new_rows[i]
        if old_row is None:
            changes.append(RowChange(key, "added", new_row_id=new_row))
        elif new_row is None:
            changes.append(RowChange(key, "removed", old_row_id=old_row))
        else:
            content = bool(old_content[i] != new_content[i])
            vector = bool(old_vector[i] != new_vector[i])
            if content or vector:
                changes.append(RowChange(key, "changed", content, vector, old_row, new_row))
    return tuple(sorted(changes, key=_order)), tuple(sorted(duplicated))


def _match_groups(old: pa.Table, new: pa.Table, keys: pa.Array) -> list[RowChange]:
    """Rows whose id is held by several rows: a group counts as changed when its rows' contents or
    vectors (as a multiset) differ, as added or removed when it is absent on one side."""
    import pyarrow.compute as pc

    def groups(table: pa.Table, suffix: str) -> dict[str, list[tuple[int, int, int]]]:
        picked = table.filter(pc.is_in(table.column("key"), value_set=keys))
        found: dict[str, list[tuple[int, int, int]]] = {}
        for key, content, vector, row in zip(
            picked.column("key").to_pylist(),
            picked.column(f"content{suffix}").to_pylist(),
            picked.column(f"vector{suffix}").to_pylist(),
            picked.column(f"row{suffix}").to_pylist(),
            strict=True,
        ):
            found.setdefault(key, []).append((content, vector, row))
        return found

    before, after = groups(old, "_old"), groups(new, "_new")
    changes = []
    for key in sorted(set(before) | set(after)):
        old_rows, new_rows = before.get(key, []), after.get(key, [])
        if not old_rows:
            changes.append(RowChange(key, "added", new_row_id=new_rows[0][2]))
        elif not new_rows:
            changes.append(RowChange(key, "removed", old_row_id=old_rows[0][2]))
        else:
            contents = sorted(r[0] for r in old_rows) != sorted(r[0] for r in new_rows)
            vectors = sorted(r[1] for r in old_rows) != sorted(r[1] for r in new_rows)
            if contents or vectors:
                changes.append(RowChange(key, "changed", contents, vectors, old_rows[0][2], new_rows[0][2]))
    return changes


def _match_by_content(old_side: _Side, new_side: _Side) -> tuple[tuple[RowChange, ...], tuple[str, ...]]:
    """Rows matched by their content's digest; named by row id (old for removed, new otherwise)."""

    def rows(side: _Side) -> dict[tuple[int, int], list[int]]:
        found: dict[tuple[int, int], list[int]] = {}
        if not side.contents:
            return found
        contents = np.concatenate(side.contents)
        vectors = np.concatenate(side.vectors)
        row_ids = np.concatenate(side.row_ids)
        for content, vector, row in zip(contents.tolist(), vectors.tolist(), row_ids.tolist(), strict=True):
            found.setdefault((content, vector), []).append(row)
        return found

    before, after = rows(old_side), rows(new_side)
    gone: dict[int, list[tuple[int, int]]] = {}  # content -> (vector, old row) of rows not kept as they were
    came: dict[int, list[tuple[int, int]]] = {}
    for pair in set(before) | set(after):
        old_rows, new_rows = before.get(pair, []), after.get(pair, [])
        extra = len(new_rows) - len(old_rows)
        if extra > 0:
            came.setdefault(pair[0], []).extend((pair[1], row) for row in new_rows[-extra:])
        elif extra < 0:
            gone.setdefault(pair[0], []).extend((pair[1], row) for row in old_rows[extra:])
    changes: list[RowChange] = []
    for content in set(gone) | set(came):
        removed, added = sorted(gone.get(content, [])), sorted(came.get(content, []))
        paired = min(len(removed), len(added))
        for (_v_old, old_row), (_v_new, new_row) in zip(removed[:paired], added[:paired], strict=True):
            changes.append(RowChange(str(new_row), "changed", False, True, old_row, new_row))
        changes.extend(RowChange(str(row), "removed", old_row_id=row) for _v, row in removed[paired:])
        changes.extend(RowChange(str(row), "added", new_row_id=row) for _v, row in added[paired:])
    return tuple(sorted(changes, key=_order)), ()


def _order(change: RowChange) -> tuple[int, str]:
    return ({"added": 0, "removed": 1, "changed": 2}[change.kind], change.id)


async def fetch_sides(
    session: Session, target: TableTarget, diff: VersionDiff, change: RowChange
) -> tuple[SearchHit | None, SearchHit | None]:
    """The row of ``change`` as it was in the older version and as it is in the newer one (``None`` on the
    side where it does not exist), vectors included."""

    async def one(version: int, row_id: int | None) -> SearchHit | None:
        if row_id is None:
            return None
        opened = await session.tables.open(target.at(version))
        taking = opened.table.take_row_ids([row_id]).with_row_id()
        rows = await read_query(taking, f'reading version {version} of "{target.table_name}"')
        hits = hits_from_arrow(rows, opened.columns)
        return hits[0] if hits else None

    return await one(diff.from_version, change.old_row_id), await one(diff.to_version, change.new_row_id)
