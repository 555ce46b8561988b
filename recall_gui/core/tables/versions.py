"""A table's versions as LanceDB keeps them: number, time, row count and tags, read without writing.

LanceDB writes a new version on every change (add, delete, update, overwrite) and keeps the old ones
until they are cleaned up; ``list_versions`` reports each with its row count, and tags name some. An
older version is opened as ``TableTarget.at(version)`` (LanceDB's ``checkout``: nothing is restored or
tagged).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.session.session import Session
from recall_gui.core.storage.lance_calls import TIMEOUT_ENV, bounded, operation_timeout
from recall_gui.core.storage.target import TableTarget, is_local_uri, local_path


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


#: Versions listed within one storage timeout (``RECALL_GUI_STORAGE_TIMEOUT``): LanceDB reads every
#: version's manifest, so a long history gets that timeout per thousand
#: (docs/PERFORMANCE_LOG.md#bounds-behind-constants).
VERSIONS_PER_TIMEOUT = 1000
#: How often a long listing reports that it is still reading (seconds).
PROGRESS_EVERY_S = 0.5

#: ``progress(versions, seconds)``: how many versions are being read (``None``: unknown), and for how long.
VersionsProgress = Callable[[int | None, float], None]


def kept_versions(target: TableTarget) -> int | None:
    """How many versions a local table keeps (its manifests, counted without reading them); ``None`` for
    object storage, or a folder that cannot be listed."""
    if not is_local_uri(target.uri):
        return None
    try:
        folder = local_path(target.uri) / f"{target.table_name}.lance" / "_versions"
        with os.scandir(folder) as entries:
            return sum(1 for entry in entries if entry.name.endswith(".manifest"))
    except OSError:
        return None


def listing_limit(count: int | None, timeout_s: float) -> float:
    """The time a listing of ``count`` versions may take: the storage timeout per thousand versions."""
    return timeout_s * max(1.0, (count or 0) / VERSIONS_PER_TIMEOUT)


async def list_versions(
    session: Session, target: TableTarget, *, progress: VersionsProgress | None = None
) -> tuple[TableVersion, ...]:
    """Every version of ``target``'s table still kept, oldest first (the last one is the latest).

    LanceDB lists them in one call, reading each version's manifest; ``progress`` is told how many there
    are and how long the listing has run, every :data:`PROGRESS_EVERY_S`. Cancelling the awaiting task
    stops waiting for it. A listing that runs out of time says why: a local folder is not a network."""
    opened = await session.tables.open(target.at(None))
    what = f'listing the versions of "{target.table_name}"'
    count = kept_versions(target)
    limit_s = listing_limit(count, operation_timeout())
    table: Any = opened.native  # list_versions is untyped in LanceDB; no query is built
    reporter = asyncio.create_task(_report(progress, count)) if progress is not None else None
    try:
        listed: list[dict[str, Any]] = await bounded(
            table.list_versions(), what, limit_s, timeout_hint=_slow_listing_hint(target, count)
        )
    finally:
        if reporter is not None:
            reporter.cancel()
    tagged: dict[str, Any] = await bounded(table.tags.list(), what)
    tags_of: dict[int, list[str]] = {}
    for name, tag in sorted(tagged.items()):
        tags_of.setdefault(int(tag["version"]), []).append(name)
    latest = max((int(item["version"]) for item in listed), default=opened.version)
    versions = []
    for item in sorted(listed, key=lambda found: int(found["version"])):
        number = int(item["version"])
        rows = (item.get("metadata") or {}).get("total_rows")
        stamp = _time_of(item.get("timestamp"))
        versions.append(
            TableVersion(
                number,
                stamp,
                int(rows) if rows is not None else None,
                tuple(tags_of.get(number, ())),
                number == latest,
            )
        )
    return tuple(versions)


def _time_of(stamp: Any) -> dt.datetime:
    """A version's time: LanceDB's Python table gives a datetime, its compiled table nanoseconds since the
    epoch, turned into one here as the Python table turns them."""
    if isinstance(stamp, dt.datetime):
        return stamp
    if isinstance(stamp, int):
        return dt.datetime.fromtimestamp(stamp // 1e9) + dt.timedelta(microseconds=(stamp % 1e9) // 1e3)
    return dt.datetime.fromtimestamp(0)


async def _report(progress: VersionsProgress, count: int | None) -> None:
    started = time.monotonic()
    while True:
        progress(count, time.monotonic() - started)
        await asyncio.sleep(PROGRESS_EVERY_S)


def _slow_listing_hint(target: TableTarget, count: int | None) -> str:
    """Why a listing ran out of time: a local folder's history is long, not a network down."""
    many = f"{count:,} versions" if count is not None else "many versions"
    if is_local_uri(target.uri):
        return (
            f"The folder is local, so no server or network is involved: LanceDB reads each of its {many} "
            f"one by one. Raise {TIMEOUT_ENV} (it allows that many seconds per "
            f"{VERSIONS_PER_TIMEOUT:,} versions), or let the table's owner clean up old versions."
        )
    return (
        f"LanceDB reads each of the {many} from the storage one by one: check that it answers, or raise "
        f"{TIMEOUT_ENV} for a long history."
    )


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


async def latest_version(session: Session, target: TableTarget) -> int:
    """The number of the table's latest version now (another program may have written it since it was
    opened), whatever version ``target`` names."""
    opened = await session.tables.open(target.at(None))
    return opened.version


async def versions_on_disk(
    session: Session, target: TableTarget, first: int, last: int | None, newest: int | None
) -> tuple[int, ...]:
    """The numbers of the versions of ``target``'s table still on disk from ``first`` to ``last`` (``None``:
    the latest), of those the ``newest`` last ones (``None``: all), oldest first.

    Each number is tried by a checkout on a table handle of its own (one manifest read), from the newest
    down: the whole history is not listed, which reads every version's manifest (minutes on a long one).
    """
    what = f'looking for versions of "{target.table_name}"'
    top = await latest_version(session, target)
    if last is not None:
        top = min(top, last)
    oldest = oldest_kept(target)
    first = max(first, oldest) if oldest is not None else first
    connection = await session.tables.connect(target.uri, target.options.storage_options)
    table = await bounded(connection.open_table(target.table_name), what)
    found: list[int] = []
    try:
        for number in range(top, first - 1, -1):
            if newest is not None and len(found) >= newest:
                break
            if await bounded(_kept(table, number), what):
                found.append(number)
    finally:
        table.close()  # type: ignore[no-untyped-call]
        session.tables.forget(target.uri)  # the connection keeps each manifest it read
    return tuple(reversed(found))


#: Lance's second naming of manifests: ``u64::MAX - version``, written in 20 digits (newest sorts first).
_V2_NAMES_ABOVE = 2**63


def oldest_kept(target: TableTarget) -> int | None:
    """The oldest version a local table still keeps (read from its manifests' names); ``None`` for object
    storage, or a folder that cannot be listed."""
    if not is_local_uri(target.uri):
        return None
    numbers = []
    try:
        folder = local_path(target.uri) / f"{target.table_name}.lance" / "_versions"
        with os.scandir(folder) as entries:
            for entry in entries:
                stem, _, kind = entry.name.partition(".")
                if kind == "manifest" and stem.isdigit():
                    number = int(stem)
                    numbers.append(2**64 - 1 - number if number > _V2_NAMES_ABOVE else number)
    except OSError:
        return None
    return min(numbers, default=None)


async def _kept(table: Any, number: int) -> bool:
    """Whether version ``number`` is still on disk (LanceDB says ``ValueError`` for one cleaned up)."""
    try:
        await table.checkout(number)
    except ValueError:
        return False
    return True
