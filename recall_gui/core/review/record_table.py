"""A review file's records as columns (:class:`RecordTable`): what a review of 100,000 verdicts is loaded as.

Decoding 100,000 lines one ``json.loads`` at a time and making an object of each takes most of a second;
Arrow's JSON reader decodes the whole file in one call, and the checks every line must pass are run on the
columns. A file any line of which fails them is read line by line instead
(:func:`~recall_gui.core.review.review_file.parse_lines`), which says which lines and why. A record is
made an object only when it is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.review.records import FORMAT, UNDO, VERDICT, VERDICTS, ReviewRecord
from recall_gui.core.storage.content_identity import DIGEST_BYTES

if TYPE_CHECKING:
    import pyarrow as pa

#: The columns, in the order of :class:`ReviewRecord`'s fields as a line names them.
FIELDS = (
    ("record", "string"),
    ("kind", "string"),
    ("content_sha256", "string"),
    ("id", "string"),
    ("verdict", "string"),
    ("note", "string"),
    ("who", "string"),
    ("when", "string"),
    ("db", "string"),
    ("uri", "string"),
    ("table", "string"),
    ("table_version", "int64"),
    ("undoes", "string"),
    ("format", "int64"),
)
#: Bytes Arrow's reader takes at a time: more than the longest line read as a record (a longer one fails
#: the read, and the file is read line by line, which says so).
BLOCK_BYTES = 2 << 20
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_RECORD_ID = r"^[0-9A-Za-z_-]{1,64}$"


def schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([(name, pa.string() if kind == "string" else pa.int64()) for name, kind in FIELDS])


def instant(moment: datetime) -> int:
    """Microseconds since 1970 (UTC): the order of records in time."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


@dataclass(eq=False)
class RecordTable:
    """Records by row: the columns, and what the ledger computes with (times, digests, kinds, verdicts)."""

    table: pa.Table
    #: ``when`` as microseconds since 1970, UTC.
    instants: npt.NDArray[np.int64]
    digests: npt.NDArray[np.uint8]
    undo: npt.NDArray[np.bool_]
    #: The verdict as its place in VERDICTS plus one; 0 in an undo.
    codes: npt.NDArray[np.int8]
    _made: dict[int, ReviewRecord] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.instants)

    def record(self, row: int) -> ReviewRecord:
        """Row ``row`` as a record (made once)."""
        made = self._made.get(row)
        if made is None:
            made = _record(self.table.slice(row, 1).to_pylist()[0])
            self._made[row] = made
        return made

    def records(self, rows: Sequence[int] | npt.NDArray[np.intp]) -> list[ReviewRecord]:
        """Many rows as records, in one conversion."""
        import pyarrow as pa

        taken = self.table.take(pa.array(np.asarray(rows, np.int64)))
        return [_record(values) for values in taken.to_pylist()]

    def texts(self, name: str, rows: npt.NDArray[np.intp]) -> list[str]:
        """Column ``name`` at ``rows`` (a missing text as "")."""
        import pyarrow as pa

        values = self.table.column(name).take(pa.array(np.asarray(rows, np.int64))).to_pylist()
        return ["" if value is None else value for value in values]

    @staticmethod
    def of(records: Sequence[ReviewRecord]) -> RecordTable:
        """Records read line by line (their times parsed by Python, as each line was checked)."""
        import pyarrow as pa

        rows = [record.to_dict() for record in records]
        table = pa.Table.from_pylist(rows, schema=schema()) if rows else schema().empty_table()
        instants = np.array([instant(record.moment) for record in records], np.int64)
        built = _columns(table, instants)
        built._made.update(enumerate(records))
        return built


def read_json_records(raw: bytes) -> RecordTable | None:
    """The records of a review file's bytes read as columns, or ``None`` when some line is not a record
    as the checks of :meth:`ReviewRecord.from_dict` say (then the file is read line by line)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    if not raw or raw.isspace():
        return RecordTable.of([])
    try:
        table = pj.read_json(
            pa.py_buffer(raw),
            read_options=pj.ReadOptions(block_size=BLOCK_BYTES),
            parse_options=pj.ParseOptions(explicit_schema=schema(), unexpected_field_behavior="ignore"),
        ).combine_chunks()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    kind, verdict, undoes = table.column("kind"), table.column("verdict"), table.column("undoes")
    is_undo = pc.equal(kind, UNDO)
    checks = [
        pc.equal(table.column("format"), FORMAT),
        pc.or_(pc.equal(kind, VERDICT), is_undo),
        pc.match_substring_regex(table.column("record"), _RECORD_ID),
        pc.match_substring_regex(table.column("content_sha256"), r"^[0-9a-f]{64}$"),
        pc.if_else(is_undo, pc.is_null(verdict), pc.is_in(verdict, value_set=pa.array(VERDICTS))),
        pc.if_else(is_undo, pc.match_substring_regex(undoes, _RECORD_ID), True),
        pc.is_valid(table.column("who")),
        pc.match_substring_regex(table.column("when"), r"(Z|[+-]\d\d:\d\d)$"),
    ]
    for check in checks:
        if not pc.all(pc.fill_null(check, False)).as_py():
            return None
    try:
        moments = table.column("when").cast(pa.timestamp("us", "UTC"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    instants = np.asarray(moments.cast(pa.int64()).to_numpy(zero_copy_only=False), np.int64)
    return _columns(table, instants)


def _columns(table: pa.Table, instants: npt.NDArray[np.int64]) -> RecordTable:
    import pyarrow as pa
    import pyarrow.compute as pc

    table = table.combine_chunks()
    rows = table.num_rows
    hexes = table.column("content_sha256")
    digests = (
        np.frombuffer(bytes.fromhex("".join(hexes.to_pylist())), np.uint8).reshape(rows, DIGEST_BYTES)
        if rows
        else np.zeros((0, DIGEST_BYTES), np.uint8)
    )
    undo = np.asarray(pc.equal(table.column("kind"), UNDO).to_numpy(zero_copy_only=False), bool)
    places = pc.index_in(table.column("verdict"), value_set=pa.array(VERDICTS))
    codes = np.asarray(pc.fill_null(places, -1).to_numpy(zero_copy_only=False), np.int8) + 1
    return RecordTable(table, instants, digests, undo, codes)


def _record(values: dict[str, Any]) -> ReviewRecord:
    return ReviewRecord(
        record=values["record"],
        kind=values["kind"],
        content_sha256=values["content_sha256"],
        entry_id=values["id"] or "",
        verdict=values["verdict"],
        note=values["note"] or "",
        who=values["who"],
        when=values["when"],
        db=values["db"] or "",
        uri=values["uri"] or "",
        table=values["table"] or "",
        table_version=values["table_version"],
        undoes=values["undoes"] if values["kind"] == UNDO else None,
    )
