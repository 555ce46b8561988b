"""A table's versions as LanceDB keeps them: number, time, row count and tags, read without writing.

LanceDB writes a new version on every change (add, delete, update, overwrite) and keeps the old ones
until they are cleaned up; ``list_versions`` reports each with its row count, and tags name some. An
older version is opened as ``TableTarget.at(version)`` (LanceDB's ``checkout``: nothing is restored or
tagged).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from recall_gui.core.errors import InvalidInputError
from recall_gui.core.session import Session
from recall_gui.core.tables import bounded
from recall_gui.core.target import TableTarget


@dataclass(frozen=True)
class TableVersion:
    """One version of a table."""

    version: int
    #: When it was written, as LanceDB reports it (local time, without a zone).
    timestamp: dt.datetime
    #: Rows in it (``None`` if LanceDB did not say).
    rows: int | None
    tags: tuple[str, ...] = ()
    latest: bool = False

    @property
    def time_text(self) -> str:
        return self.timestamp.strftime("%Y-%m-%d %H:%M:%S")

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "timestamp": self.timestamp.isoformat(),
            "rows": self.rows,
            "tags": list(self.tags),
            "latest": self.latest,
        }


async def list_versions(session: Session, target: TableTarget) -> tuple[TableVersion, ...]:
    """Every version of ``target``'s table still kept, oldest first (the last one is the latest)."""
    opened = await session.tables.open(target.at(None))
    what = f'listing the versions of "{target.table_name}"'
    table: Any = opened.table  # list_versions is untyped in LanceDB
    listed: list[dict[str, Any]] = await bounded(table.list_versions(), what)
    tagged: dict[str, Any] = await bounded(table.tags.list(), what)
    tags_of: dict[int, list[str]] = {}
    for name, tag in sorted(tagged.items()):
        tags_of.setdefault(int(tag["version"]), []).append(name)
    latest = max((int(item["version"]) for item in listed), default=opened.version)
    versions = []
    for item in sorted(listed, key=lambda found: int(found["version"])):
        number = int(item["version"])
        rows = (item.get("metadata") or {}).get("total_rows")
        stamp = item.get("timestamp")
        versions.append(
            TableVersion(
                number,
                stamp if isinstance(stamp, dt.datetime) else dt.datetime.fromtimestamp(0),
                int(rows) if rows is not None else None,
                tuple(tags_of.get(number, ())),
                number == latest,
            )
        )
    return tuple(versions)


def find_version(versions: tuple[TableVersion, ...], number: int, table: str) -> TableVersion:
    """The version numbered ``number``, or a clear refusal listing the versions there are."""
    for version in versions:
        if version.version == number:
            return version
    raise InvalidInputError(
        f'table "{table}" has no version {number} (its versions: {describe_numbers(versions)})',
        hint="Run `recall-gui versions --db NAME` to list them.",
    )


def describe_numbers(versions: tuple[TableVersion, ...]) -> str:
    """``1–5, 8`` for versions 1 to 5 and 8 (runs shortened), ``none`` for none."""
    numbers = [version.version for version in versions]
    if not numbers:
        return "none"
    runs: list[tuple[int, int]] = []
    for number in numbers:
        if runs and number == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs)
