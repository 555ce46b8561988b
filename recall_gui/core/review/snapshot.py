"""One version of a table as a review sees it: each row's row id, its id as shown and its content's sha256,
in the order a scan returns the rows. Nothing else of a row is held (a few dozen bytes per row).

LanceDB computes the digests as it reads (the texts never reach Python); reading and hashing a million
rows still takes a second or more, so a version's snapshot is kept in the app's cache folder
(``<cache>/reviews``), keyed by the table, the version and what identifies that version on disk (a table
dropped and made again restarts its numbers): a version never changes, so a kept one is read back as it
is, mapped from the file. A cache folder that cannot be written costs only time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.credentials import without_credentials
from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.paths import app_cache_dir
from recall_gui.core.storage.content_identity import DIGEST_BYTES, is_sha_prefix
from recall_gui.core.storage.lance_calls import read_batches
from recall_gui.core.storage.open_table import OpenTable
from recall_gui.core.storage.target import is_local_uri, local_path, without_secrets
from recall_gui.core.tables.versions import list_versions

if TYPE_CHECKING:
    import pyarrow as pa

    from recall_gui.core.session.session import Session
    from recall_gui.core.storage.target import TableTarget

#: Bump when what a kept snapshot holds changes, so older files are not read.
REVISION = 2
#: Snapshots kept in the cache folder (the newest; each is ~70 bytes per row).
KEPT_FILES = 8
CACHE_FOLDER = "reviews"

Positions = npt.NDArray[np.intp]


def digest_keys(digests: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """The first 8 bytes of each digest as a number: a sortable key (equal keys are checked whole)."""
    return np.ascontiguousarray(digests[:, :8]).view("<u8").ravel()


def digests_of(shas: list[str]) -> npt.NDArray[np.uint8]:
    """Hex digests as rows of 32 bytes."""
    return np.frombuffer(bytes.fromhex("".join(shas)), np.uint8).reshape(len(shas), DIGEST_BYTES)


@dataclass(eq=False)
class TableSnapshot:
    """The rows of one version of a table: row ids, ids (as text) and content digests, by position."""

    uri: str
    table: str
    version: int
    row_ids: npt.NDArray[np.uint64]
    ids: pa.Array
    digests: npt.NDArray[np.uint8]
    #: Positions sorted by digest key, and the keys in that order (to find a content's rows).
    order: Positions
    sorted_keys: npt.NDArray[np.uint64]
    #: For each row, how many rows of the version share its id.
    id_counts: npt.NDArray[np.int64]
    #: Whether the table has an id column (without one, the row id serves as id).
    has_ids: bool = True
    #: Why the snapshot was not kept in the cache folder ("" when it was, or was read from it).
    not_kept: str = ""

    def __len__(self) -> int:
        return len(self.row_ids)

    def id_at(self, position: int) -> str:
        value = self.ids[position].as_py()
        return "" if value is None else str(value)

    def sha_at(self, position: int) -> str:
        return bytes(self.digests[position]).hex()

    def positions_of_sha(self, sha: str) -> Positions:
        """The positions of the rows holding the content with digest ``sha`` (several when copied)."""
        wanted = bytes.fromhex(sha)
        key = np.frombuffer(wanted[:8], "<u8")[0]
        start = int(np.searchsorted(self.sorted_keys, key, side="left"))
        end = int(np.searchsorted(self.sorted_keys, key, side="right"))
        found = [int(p) for p in self.order[start:end] if self.digests[p].tobytes() == wanted]
        return np.array(sorted(found), np.intp)

    def positions_of_prefix(self, prefix: str) -> Positions:
        """The positions of the rows whose content's sha256 starts with the hex digits ``prefix``."""
        if not is_sha_prefix(prefix):
            raise InvalidInputError(
                f"{prefix!r} is not the start of a sha256 (1 to 64 hex digits)",
                hint="Give the content's sha256 as 64 hex digits, or its first 8 or more.",
            )
        if len(prefix) == 2 * DIGEST_BYTES:
            return self.positions_of_sha(prefix)
        whole = bytes.fromhex(prefix[: len(prefix) // 2 * 2])
        mask = np.all(self.digests[:, : len(whole)] == np.frombuffer(whole, np.uint8), axis=1)
        if len(prefix) % 2:  # the odd last digit: the high half of the next byte
            mask &= (self.digests[:, len(whole)] >> 4) == int(prefix[-1], 16)
        return np.flatnonzero(mask)

    def match_digests(self, digests: npt.NDArray[np.uint8]) -> tuple[Positions, Positions]:
        """Each (given index, row position) pair where row content equals the given digest."""
        if not len(digests) or not len(self):
            return np.empty(0, np.intp), np.empty(0, np.intp)
        keys = digest_keys(digests)
        # Looked up in the keys' own order: the searches walk the sorted keys once (far fewer cache misses).
        by_key = np.argsort(keys, kind="stable")
        left, right = np.empty(len(keys), np.intp), np.empty(len(keys), np.intp)
        left[by_key] = np.searchsorted(self.sorted_keys, keys[by_key], side="left")
        right[by_key] = np.searchsorted(self.sorted_keys, keys[by_key], side="right")
        counts = right - left
        given = np.repeat(np.arange(len(keys)), counts)
        # Each given key's run of rows in key order, as one flat index into ``order``.
        starts = np.repeat(left - np.cumsum(counts) + counts, counts)
        positions = self.order[starts + np.arange(len(given))]
        same = np.all(self.digests[positions] == digests[given], axis=1)
        return given[same], positions[same]

    def positions_of_id(self, entry_id: str) -> Positions:
        """The positions of the rows whose id is ``entry_id``."""
        import pyarrow as pa
        import pyarrow.compute as pc

        mask = pc.equal(self.ids, pa.scalar(entry_id, self.ids.type)).to_numpy(zero_copy_only=False)
        return np.flatnonzero(mask)

    def positions_with_ids(self, entry_ids: list[str]) -> npt.NDArray[np.bool_]:
        """A mask of the rows whose id is one of ``entry_ids``."""
        import pyarrow as pa
        import pyarrow.compute as pc

        value_set = pa.array(entry_ids, self.ids.type)
        return np.asarray(pc.is_in(self.ids, value_set=value_set).to_numpy(zero_copy_only=False), bool)

    @cached_property
    def _row_order(self) -> Positions:
        return np.argsort(self.row_ids, kind="stable")

    def positions_of_row_ids(self, row_ids: npt.ArrayLike) -> Positions:
        """The positions of the given row ids (in their order; those not in this version are left out)."""
        wanted = np.asarray(row_ids, np.uint64)
        ordered = self.row_ids[self._row_order]
        places = np.searchsorted(ordered, wanted)
        places[places >= len(ordered)] = 0
        hit = (ordered[places] == wanted) if len(ordered) else np.zeros(len(wanted), bool)
        return np.asarray(self._row_order[places[hit]], np.intp)


# --- reading a version ---------------------------------------------------------------------------------


async def read_snapshot(session: Session, target: TableTarget) -> TableSnapshot:
    """The snapshot of ``target``'s table at its version (the latest when none is named): from the cache
    folder when kept, else read and hashed (on the session's inspection thread) and kept."""
    opened = await session.tables.open(target)
    stamp = await _version_stamp(session, target, opened)
    key = _cache_key(opened, stamp)
    folder = app_cache_dir() / CACHE_FOLDER
    path = folder / f"{hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]}.arrow"
    loop = asyncio.get_running_loop()
    kept = await loop.run_in_executor(session.inspect_executor, _load, path, key)
    if kept is not None:
        return _snapshot(opened, kept, "")
    table = await _read_rows(session, opened)
    table = await loop.run_in_executor(session.inspect_executor, _with_lookups, table)
    not_kept = await loop.run_in_executor(session.inspect_executor, _save, path, key, table)
    return _snapshot(opened, table, not_kept)


def _cache_key(opened: OpenTable, stamp: str) -> list[Any]:
    """What identifies a snapshot: the place (the endpoint among the storage options, never a secret), the
    table, its version and the version's stamp, the columns read."""
    columns = opened.columns
    return [
        REVISION,
        without_credentials(opened.uri),
        sorted(without_secrets(opened.storage_options).items()),
        opened.name,
        opened.version,
        stamp,
        columns.id,
        columns.content,
    ]


async def _version_stamp(session: Session, target: TableTarget, opened: OpenTable) -> str:
    """What tells this version from another of the same number (a table made again): its manifest's size
    and time for a local table, else the version's time as LanceDB lists it."""
    if is_local_uri(opened.uri):
        folder = local_path(opened.uri) / f"{opened.name}.lance" / "_versions"
        for name in (f"{opened.version}.manifest", f"{2**64 - 1 - opened.version:020d}.manifest"):
            with contextlib.suppress(OSError):
                found = (folder / name).stat()
                return f"{found.st_size}:{found.st_mtime_ns}"
    versions = await list_versions(session, target)
    return next((v.timestamp.isoformat() for v in versions if v.version == opened.version), "")


#: The names the snapshot's query gives what it selects.
_DIGEST, _ID = "review_digest", "review_id"


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


async def _read_rows(session: Session, opened: OpenTable) -> pa.Table:
    """Every row's row id, id and content digest. The digests are computed by LanceDB's engine as it reads
    (DataFusion's ``sha256`` of the text's UTF-8 bytes, on its own threads): the texts never reach Python."""
    import pyarrow as pa

    columns = opened.columns
    wanted = {_DIGEST: f"sha256({_quoted(columns.content)})"}
    if columns.id:
        wanted[_ID] = _quoted(columns.id)
    query = opened.table.query().select(wanted).with_row_id()
    what = f'reading version {opened.version} of "{opened.name}"'
    loop = asyncio.get_running_loop()
    parts = [
        await loop.run_in_executor(session.inspect_executor, _fingerprint, batch, columns.id is not None)
        async for batch in read_batches(query, what)
    ]
    return pa.Table.from_batches(parts, schema=_schema())


def _schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            ("row_id", pa.uint64()),
            ("id", pa.string()),
            ("digest", pa.binary(DIGEST_BYTES)),
            ("key", pa.uint64()),
        ]
    )


def _fingerprint(batch: pa.RecordBatch, has_ids: bool) -> pa.RecordBatch:
    """One batch's row ids, ids as text and content digests, with each digest's key (a missing text is
    the empty one)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    row_ids = batch.column("_rowid").cast(pa.uint64())
    ids = id_texts(batch.column(_ID)) if has_ids else row_ids.cast(pa.string())
    empty = pa.scalar(hashlib.sha256(b"").digest(), pa.binary())
    binary = pc.fill_null(batch.column(_DIGEST), empty).cast(pa.binary(DIGEST_BYTES))
    rows = len(binary)
    digests = np.frombuffer(binary.buffers()[1], np.uint8, rows * DIGEST_BYTES, binary.offset * DIGEST_BYTES)
    keys = digest_keys(digests.reshape(rows, DIGEST_BYTES))
    return pa.record_batch([row_ids, ids, binary, pa.array(keys)], schema=_schema())


def id_texts(values: pa.Array) -> pa.Array:
    """Ids as the tool and the window show them: text as it is, a missing one as "", anything else as its
    text (numbers cast by Arrow, other values by Python)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = values.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind):
        return pc.fill_null(pc.cast(values, pa.string()), "")
    return pa.array(["" if value is None else str(value) for value in values.to_pylist()], pa.string())


def _with_lookups(table: pa.Table) -> pa.Table:
    """``table`` with what finds rows fast, kept with it: the positions in the order of the digests'
    keys, and how many rows share each row's id."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = table.combine_chunks()
    order = np.argsort(table.column("key").to_numpy())
    if table.num_rows:
        encoded = np.asarray(
            pc.dictionary_encode(table.column("id").combine_chunks()).indices.to_numpy(zero_copy_only=False),
            np.intp,
        )
        counts = np.bincount(encoded)[encoded]
    else:
        counts = np.zeros(0, np.int64)
    table = table.append_column("order", pa.array(order.astype(np.int64)))
    return table.append_column("id_count", pa.array(counts.astype(np.int64)))


def _snapshot(opened: OpenTable, table: pa.Table, not_kept: str) -> TableSnapshot:
    table = table.combine_chunks()
    rows = table.num_rows
    digest_column = table.column("digest")
    if rows and digest_column.num_chunks:
        chunk = digest_column.chunk(0)
        digests = np.frombuffer(
            chunk.buffers()[1], np.uint8, rows * DIGEST_BYTES, chunk.offset * DIGEST_BYTES
        )
        digests = digests.reshape(rows, DIGEST_BYTES)
    else:
        digests = np.zeros((0, DIGEST_BYTES), np.uint8)
    keys = table.column("key").to_numpy()
    order = np.asarray(table.column("order").to_numpy(), np.intp)
    ids = table.column("id")
    return TableSnapshot(
        uri=opened.uri,
        table=opened.name,
        version=opened.version,
        row_ids=table.column("row_id").to_numpy(),
        ids=ids.chunk(0) if ids.num_chunks else ids.combine_chunks(),
        digests=digests,
        order=order,
        sorted_keys=keys[order],
        id_counts=table.column("id_count").to_numpy(),
        has_ids=opened.columns.id is not None,
        not_kept=not_kept,
    )


def _load(path: Path, key: list[Any]) -> pa.Table | None:
    import pyarrow as pa

    try:
        with pa.memory_map(str(path)) as source:
            table = pa.ipc.open_file(source).read_all()
    except (OSError, pa.ArrowInvalid):
        return None
    meta = table.schema.metadata or {}
    if meta.get(b"key") != json.dumps(key).encode():
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # the newest-used files are the ones kept
    return table


def _save(path: Path, key: list[Any], table: pa.Table) -> str:
    """Keep ``table`` at ``path`` (atomically); returns why it could not be ("" when it was)."""
    import pyarrow as pa

    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with pa.OSFile(str(temporary), "wb") as sink:
            schema = table.schema.with_metadata({"key": json.dumps(key)})
            with pa.ipc.new_file(sink, schema) as writer:
                writer.write_table(table.replace_schema_metadata(schema.metadata))
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            temporary.unlink()
        reason = error.strerror or error
        return f"the review's snapshot was not kept in {path.parent} ({reason}): hashed again next time"
    _forget_old(path.parent)
    return ""


def _forget_old(folder: Path) -> None:
    with contextlib.suppress(OSError):
        files = sorted(folder.glob("*.arrow"), key=lambda found: found.stat().st_mtime_ns, reverse=True)
        for old in files[KEPT_FILES:]:
            old.unlink(missing_ok=True)
