"""The selected entry in the detail tab: a search hit (its rank and distance) or a browsed row (its place,
its vector read when it is selected), or a row opened by its row id from another page."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QTabWidget

from recall_gui import core
from recall_gui.core.base import RecallError, SearchHit, one_line
from recall_gui.core.storage import content_sha256, entry_label
from recall_gui.qt.models.browse_model import BrowseModel
from recall_gui.qt.panels.detail_panel import DetailPanel
from recall_gui.qt.panels.results_panel import ResultsPanel
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.search import Document
    from recall_gui.core.tables import BrowseRow
    from recall_gui.qt.pages.knowledge.browsing import Browser
    from recall_gui.qt.pages.knowledge.looking_at import LookingAt
    from recall_gui.qt.pages.knowledge.would_see import WouldSee


def context_text(document: Document, entry_id: str) -> tuple[str, str]:
    """What the detail says of an entry's document: its place and neighbours, and a tooltip with the rule."""
    ids = [chunk_id for chunk_id, _ in document.chunks]
    if entry_id not in ids:
        return f"{document.key} ({len(ids)} chunks)", document.layout.describe()
    at, names = document.at, document.names()
    parts = [f"{document.key} · chunk {at + 1} of {len(ids)}"]
    if at > 0:
        parts.append(f"previous: {names[at - 1]} “{one_line(document.chunks[at - 1][1], 60)}”")
    if at + 1 < len(ids):
        parts.append(f"next: {names[at + 1]} “{one_line(document.chunks[at + 1][1], 60)}”")
    return "\n".join(parts), document.layout.describe()


class EntryDetail:
    """Which entry is open in the detail, and showing it there (the tools under the table follow it)."""

    def __init__(
        self,
        services: WindowServices,
        looking_at: LookingAt,
        *,
        browser: Browser,
        results: ResultsPanel,
        browse_model: BrowseModel,
        detail: DetailPanel,
        side: QTabWidget,
        would_see: WouldSee,
    ) -> None:
        self.services = services
        self.looking_at = looking_at
        self.browser = browser
        self.results = results
        self.browse_model = browse_model
        self.detail = detail
        self.side = side
        #: The tools under the table, which follow the selection.
        self.would_see = would_see
        lane = services.operations.lane
        #: Reading the open entry's document around it, a browsed row's vector, and where the model stops
        #: reading its text.
        self.reading_context, self.reading_vector = lane("context"), lane("detail")
        self.reading_text = lane("model reads")
        #: The entry open in the detail: a search hit, a browsed row, or ``None``.
        self.item: object | None = None

    def select(self, item: object) -> None:
        """Open ``item`` (``None``: nothing) in the detail, and the tools for it."""
        if item is self.item and item is not None:
            return  # the same row again (selection and current row change together)
        self.item = item
        if item is not None:
            self.side.setCurrentWidget(self.detail)
        if item is None:
            self.detail.clear()
        elif isinstance(item, SearchHit):
            self._show_hit(item)
        else:
            self._show_row(item)  # type: ignore[arg-type]
        if item is not None:
            self.request_context(item)
            self.reading_text.start(self.load_reading(item))
        self.would_see.show(item)

    def _show_hit(self, hit: SearchHit) -> None:
        result = self.results.results_model.result
        rank = result.hits.index(hit) + 1 if result and hit in result.hits else 0
        metric = result.metric_label if result else ""
        self.detail.show_entry(
            entry_id=self.looking_at.name(hit.id, hit.content),
            content=hit.content,
            position=f"rank {rank} · distance {hit.distance:.6f} ({metric})" + self.looking_at.at(),
            metadata=hit.extra,
            vector=hit.vector,
            norm=hit.vector_norm,
            id_tip=self._id_tip(hit.id, hit.content),
        )

    def _show_row(self, row: BrowseRow) -> None:
        total, browsing = self.browse_model.total, self.browser.browsing
        of_total = f" of {total:,}" if total is not None else ""
        self.detail.show_entry(
            entry_id=self.looking_at.name(row.id, row.content),
            id_tip=self._id_tip(row.id, row.content),
            content=row.content,
            position=f"row {row.offset + 1:,}{of_total}{self.looking_at.at()}",
            metadata=row.extra,
            vector=None,
            norm=None,
            vector_pending=row.row_id is not None,
            highlight=browsing.filter_text if browsing is not None else "",
        )
        if row.row_id is not None:
            self.reading_vector.start(self.load_vector(row))

    async def load_vector(self, row: BrowseRow) -> None:
        """Read a browsed row's vector (pages leave vectors out) and show it if the row is still open."""
        entry = self.looking_at.current
        if entry is None or row.row_id is None:
            return

        hit = await core.tables.fetch_row(await self.services.session(), self.looking_at.target(), row.row_id)
        if self.item is row:
            self.detail.set_vector(hit.vector if hit else None, hit.vector_norm if hit else None)

    def request_context(self, item: object) -> None:
        """Read ``item``'s document around it (a newer request replaces an older one)."""
        self.reading_context.start(self.load_context(item))

    async def load_context(self, item: object) -> None:
        """Show the entry's document and the chunks before and after it, if the entry is still open."""
        entry = self.looking_at.current
        entry_id = getattr(item, "id", None)
        if entry is None or entry_id is None:
            return

        content = getattr(item, "content", "")
        named = str(entry_id)
        if self.looking_at.repeats.is_shared(named):  # the row among those that share its id
            named = entry_label(named, content_sha256(str(content))) + content_sha256(str(content))[8:]
        try:
            document = await core.search.document_of(
                await self.services.session(), entry, named, layout=self.looking_at.document_layout
            )
        except RecallError as error:
            if self.item is item:
                self.detail.set_context("none detected", error.message)
            return
        if self.item is not item:
            return
        self.detail.set_context(*context_text(document, str(entry_id)))

    async def open_row(self, row_id: int, how: str = "chosen on the map") -> SearchHit | None:
        """Show the row with LanceDB row id ``row_id`` in the entry detail (vector included)."""
        entry = self.looking_at.current
        if entry is None:
            return None

        hit = await core.tables.fetch_row(await self.services.session(), self.looking_at.target(), row_id)
        if hit is None or self.looking_at.current is not entry:
            return hit
        self.item = hit
        self.side.setCurrentWidget(self.detail)
        self.detail.show_entry(
            entry_id=self.looking_at.name(hit.id, hit.content),
            content=hit.content,
            position=f"row id {row_id}, {how}{self.looking_at.at()}",
            metadata=hit.extra,
            vector=hit.vector,
            norm=hit.vector_norm,
            id_tip=self._id_tip(hit.id, hit.content),
        )
        self.reading_text.start(self.load_reading(hit))
        return hit

    def _id_tip(self, entry_id: str, content: str) -> str:
        """What the id's tooltip says where other rows share it: how many, and what tells this one apart."""
        repeats = self.looking_at.repeats
        if not repeats.is_shared(entry_id):
            return ""
        return (
            f'The id "{entry_id}" is shared by {repeats.count(entry_id):,} rows of this table; this entry is '
            f"named by its content, whose sha256 is {content_sha256(content)}"
        )

    async def load_reading(self, item: object) -> None:
        """Mark where the model stops reading the open entry's text, if it is still open."""
        entry, content = self.looking_at.current, getattr(item, "content", None)
        if entry is None or not isinstance(content, str):
            return
        session = await self.services.session()
        try:
            reading = await session.models.reading(entry.embedder)
        except RecallError as error:
            if self.item is item:
                self.detail.set_reading(None, f"the model cannot be loaded here ({error.message})")
            return
        if reading is None:
            if self.item is item:
                self.detail.set_reading(None, "this model's tokenizer is not here")
            return
        loop = asyncio.get_running_loop()
        extent = await loop.run_in_executor(session.compute_executor, reading.extent, content)
        if self.item is item:
            self.detail.set_reading(extent)
