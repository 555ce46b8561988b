"""Two (or more) reviewers' files made one (``recall-gui review merge A B -o C``): every record kept, as it
was written, in the order of time; a record found in both files (one copied the other) once; the lines
that are not records kept too, after the records; and the contents on which reviewers' latest verdicts
differ listed. Nothing is dropped, and the files merged are only read.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.output_paths import refuse_output
from recall_gui.core.base.regular_files import read_regular
from recall_gui.core.review.ledger import Conflict, Ledger
from recall_gui.core.review.record_table import RecordTable
from recall_gui.core.review.records import ReviewRecord
from recall_gui.core.review.review_file import MAX_FILE_BYTES, DamagedLine, read_line


@dataclass(frozen=True)
class MergedFile:
    """The lines of the merged file, and what the merge found."""

    lines: tuple[bytes, ...]
    records: int
    #: Records found in more than one file (the same record id and the same line): written once.
    repeated: int
    damaged: tuple[DamagedLine, ...]
    conflicts: tuple[Conflict, ...]
    #: Record ids written with different lines in different files: both lines are kept; the first read
    #: counts.
    clashes: tuple[str, ...]


def _lines(path: Path) -> list[tuple[int, bytes]]:
    """The lines of a file that are not blank, with their numbers."""
    try:
        raw = read_regular(path, MAX_FILE_BYTES)
    except OSError as error:  # a FIFO, a device, a folder or too large (FileRefused) said as it is
        raise InvalidInputError(
            f"the review file {path} cannot be read ({error.strerror or error})"
        ) from None
    return [(number, line) for number, line in enumerate(raw.split(b"\n"), start=1) if line.strip()]


def merge_files(paths: Sequence[Path]) -> MergedFile:
    """Merge the review files at ``paths`` (see the module's text)."""
    seen: dict[str, bytes] = {}
    kept: list[tuple[tuple[object, int, int], bytes, ReviewRecord]] = []
    damaged_lines: list[bytes] = []
    damaged: list[DamagedLine] = []
    repeated = 0
    clashes: list[str] = []
    for source, path in enumerate(paths):
        for number, line in _lines(path):
            record = read_line(line)
            if isinstance(record, str):
                damaged.append(DamagedLine(path, number, record))
                damaged_lines.append(line + b"\n")
                continue
            earlier = seen.get(record.record)
            if earlier == line:
                repeated += 1
                continue
            if earlier is not None:
                clashes.append(record.record)
            seen.setdefault(record.record, line)
            kept.append(((record.moment, source, number), line + b"\n", record))
    kept.sort(key=lambda item: item[0])
    ledger = Ledger(RecordTable.of([record for _key, _line, record in kept]))
    return MergedFile(
        lines=tuple(line for _key, line, _record in kept) + tuple(damaged_lines),
        records=len(kept),
        repeated=repeated,
        damaged=tuple(damaged),
        conflicts=ledger.conflicts(),
        clashes=tuple(clashes),
    )


def write_merged(merged: MergedFile, output: Path, inputs: Sequence[Path]) -> None:
    """Write the merged file to ``output``, a new file: an existing one is never replaced (it may be a
    review file whose records would be lost). The file appears whole or not at all."""
    if output.exists() or output.is_symlink():
        raise InvalidInputError(
            f"{output} exists: the merged file is written to a new file only",
            hint="Name a new file with -o; then replace the old one yourself if you mean to.",
        )
    refuse_output(output, inputs=[("a file being merged", path) for path in inputs], what="the merged file")
    folder = output.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(b"".join(merged.lines))
                file.flush()
                os.fsync(file.fileno())
            os.link(temporary, output)  # fails if another program made ``output`` meanwhile
        finally:
            os.unlink(temporary)
    except FileExistsError:
        raise InvalidInputError(f"{output} appeared while merging: nothing was written to it") from None
    except OSError as error:
        raise InvalidInputError(
            f"the merged file could not be written to {output} ({error.strerror or error})"
        ) from None
