"""One entry of a review, read for the page off the GUI thread: the row in full at the review's version,
its vector's health, and when it changed since it was reviewed the text it had then with the diff; once it
is shown, how much of it the model reads and its near-copies (a search with its own vector)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recall_gui import core
from recall_gui.core.base import SearchHit, one_line
from recall_gui.core.storage import content_sha256, entry_label
from recall_gui.qt.panels.status_note import Tone
from recall_gui.qt.panels.verdict_marks import mark_symbol
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.embedders import ModelReading
    from recall_gui.core.inspect import DiffLine
    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.review import ChangedEntry, Review

#: Neighbours listed beside an entry (those within the duplicates page's default threshold are its
#: near-copies; the others show how far the nearest are).
NEIGHBOURS = 5
#: Unchanged lines kept around a change in the side-by-side view: all of them (each side reads whole).
WHOLE_TEXT = 1 << 30


@dataclass(frozen=True)
class LoadedEntry:
    """What the page shows of one row of the review's snapshot."""

    position: int
    row_id: int
    entry_id: str
    sha: str
    #: The row in full (``None``: it is gone from the version, which a snapshot never expects).
    hit: SearchHit | None
    vector: tuple[str, Tone]
    changed: ChangedEntry | None = None
    #: The text it had when reviewed (``None``: that version is not kept, or it was not changed).
    old_text: str | None = None
    diff: tuple[DiffLine, ...] = ()

    @property
    def label(self) -> str:
        return entry_label(self.entry_id, self.sha)

    @property
    def content(self) -> str:
        return self.hit.content if self.hit is not None else ""


@dataclass(frozen=True)
class NearCopies:
    """The entry's nearest neighbours, and what the page says of them."""

    note: str
    rows: tuple[tuple[str, str, str, str], ...]


def vector_health(hit: SearchHit | None) -> tuple[str, Tone]:
    """The stored vector in words (its width and norm; missing, not finite or zero said plainly)."""
    import numpy as np

    if hit is None or hit.vector is None:
        return "not stored: no search returns this entry", "bad"
    vector = np.asarray(hit.vector, dtype=np.float64)
    width = len(vector)
    bad = int(np.count_nonzero(~np.isfinite(vector)))
    if bad:
        return f"{width}-d, {bad:,} components NaN or infinite: no search returns this entry", "bad"
    norm = hit.vector_norm or 0.0
    if norm == 0:
        return (
            f"{width}-d, all zero: no direction; by L2 it is as near every query as a weak match, "
            "by cosine it has no distance",
            "bad",
        )
    return f"{width}-d · norm {norm:.4f}", "good"


async def load_entry(services: WindowServices, review: Review, position: int) -> LoadedEntry:
    """The row at ``position`` of ``review``'s snapshot, read at its version."""
    session = await services.session()
    snapshot, book = review.snapshot, services.reviews
    row_id = int(snapshot.row_ids[position])
    hit = await core.tables.fetch_row(session, review.target.at(snapshot.version), row_id)
    loaded = LoadedEntry(
        position, row_id, snapshot.id_at(position), snapshot.sha_at(position), hit, vector_health(hit)
    )
    changed = await book.call(review.state.changed_entry, position)
    if changed is None:
        return loaded
    old = await review.old_text(session, changed)
    diff: tuple[DiffLine, ...] = ()
    if old is not None:
        compare = functools.partial(core.inspect.diff_lines, old, loaded.content, context=WHOLE_TEXT)
        diff = await book.call(compare)
    return dataclasses.replace(loaded, changed=changed, old_text=old, diff=diff)


async def model_reading(services: WindowServices, entry: DatabaseEntry) -> ModelReading | None:
    """What ``entry``'s model reads of a text (its model loaded if need be); ``None`` for a cloud model, or
    a model whose tokenizer is not here."""
    return await (await services.session()).models.reading(entry.embedder)


async def tokens_read(
    services: WindowServices, reading: ModelReading | None, text: str
) -> tuple[str, int | None]:
    """How much of ``text`` the model reads, in words, and where it stops (``None``: it reads it all, or
    that is not known)."""
    if reading is None:
        return "What the model reads is not known here: a cloud model, or one without a tokenizer", None
    session = await services.session()
    loop = asyncio.get_running_loop()
    extent = await loop.run_in_executor(session.compute_executor, reading.extent, text)
    said = extent.describe()
    said = said[:1].upper() + said[1:]  # "the model reads …" begins the line
    return (
        (f"{said}; it is tinted in the text.", extent.read_chars) if extent.truncated else (said + ".", None)
    )


async def near_copies(
    services: WindowServices, entry: DatabaseEntry, review: Review, shown: LoadedEntry
) -> NearCopies:
    """The entries whose stored vectors lie nearest to this one's (searched as the agent's search ranks,
    at the review's version), each with its verdict; those within the duplicates page's default
    threshold are its near-copies."""
    hit = shown.hit
    if hit is None or hit.vector is None:
        return NearCopies("No vector: its near-copies cannot be looked for.", ())
    import numpy as np

    harness = await services.harness()
    vector = np.asarray(hit.vector, dtype=np.float32)
    report = await harness.search_vector(
        entry, vector, NEIGHBOURS + 1, label=f"near {shown.label}", version=review.snapshot.version
    )
    result = report.result
    others = [
        other
        for other in result.hits
        if (other.row_id != hit.row_id if other.row_id is not None else other.content != hit.content)
    ][:NEIGHBOURS]
    shas = [content_sha256(other.content) for other in others]
    verdicts = await services.reviews.call(review.state.verdicts_of, shas)
    threshold = core.inspect.DEFAULT_THRESHOLDS.get(result.metric)
    within = [threshold is not None and other.distance <= threshold for other in others]
    rows = tuple(
        (
            f"{other.distance:.4f}{' ≈' if close else ''}",
            entry_label(other.id, sha),
            f"{mark_symbol(verdict)} {verdict.verdict}".strip() if verdict is not None else "",
            one_line(other.content, 200),
        )
        for other, sha, verdict, close in zip(others, shas, verdicts, within, strict=True)
    )
    if threshold is None:
        return NearCopies(f"The nearest entries by {result.metric_label} distance:", rows)
    count = sum(within)
    found = f"{count} near-cop{'y' if count == 1 else 'ies'}" if count else "No near-copy"
    return NearCopies(
        f"{found} within {threshold:g} ({result.metric_label}, the duplicates page's default; marked ≈); "
        "the nearest entries:",
        rows,
    )
