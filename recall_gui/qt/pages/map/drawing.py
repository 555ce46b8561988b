"""Drawing the map: its points in the colours of the chosen column, the legend, the knowledge page's
search results ringed, and the note that says what the map shows and how it was made."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QComboBox, QLabel

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.qt.pages.map.shown import MapShown
from recall_gui.qt.panels.status_note import StatusNote, Tone
from recall_gui.qt.scope.table_scope import TableScope
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.inspect import Colouring, TableMap
    from recall_gui.core.storage import TableTarget
    from recall_gui.qt.panels.map_view import MapView

NO_COLOUR = "(one colour)"
METHOD_TEXTS = {
    "tsne": "The neighbour layout keeps rows that are near in vector space (by the agent's metric) near on\n"
    "the map: t-SNE of a sample, every other row placed where its nearest sampled rows are, then drawn\n"
    "toward its nearest rows. Distances between far-apart groups mean little.",
    "pca": "PCA: the two directions in which the vectors differ most. Linear: a query lands where it\n"
    "belongs, but unrelated topics may overlap.",
}


class Drawing:
    """Draws :class:`MapShown`'s map; ``plain`` is the colour of points when no column colours them."""

    def __init__(
        self,
        services: WindowServices,
        knowledge: TableScope,
        shown: MapShown,
        *,
        ensure_view: Callable[[], Awaitable[MapView]],
        status: StatusNote,
        legend: QLabel,
        colour_combo: QComboBox,
        plain: Callable[[], str],
        map_shown: SignalInstance,
    ) -> None:
        self.services = services
        self.knowledge = knowledge
        self.shown = shown
        self._ensure_view = ensure_view
        self.status, self.legend, self.colour_combo = status, legend, colour_combo
        self._plain = plain
        self._map_shown = map_shown

    async def fill_columns(self, target: TableTarget) -> None:
        """Offer the columns of ``target`` to colour by, keeping the one chosen while it is there."""
        try:
            facts = await core.tables.describe_schema(await self.services.session(), target)
        except RecallError:
            return
        chosen = self.colour_combo.currentData()
        names = [c.name for c in facts.columns if c.role == "" and not c.arrow_type.startswith("struct")]
        self.colour_combo.clear()
        self.colour_combo.addItem(NO_COLOUR, None)
        for name in names:
            self.colour_combo.addItem(name, name)
        self.colour_combo.setCurrentIndex(
            max(self.colour_combo.findData(chosen), 0) if chosen in names else 0
        )
        if chosen not in names:
            self.shown.colour_column = None

    async def draw(self) -> None:
        """Draw the map's points in their colours, and say what the map shows and how it was made."""
        from recall_gui.qt.panels.map_colours import coloured, legend_html

        shown = self.shown
        table_map, view = shown.table_map, await self._ensure_view()
        if table_map is None:
            return
        if view.table_map is not table_map:
            view.begin(table_map)
        colouring = await self._colouring_of(table_map)
        column = None if colouring is None else colouring.column
        loop = asyncio.get_running_loop()
        groups, codes, palette = await loop.run_in_executor(
            self.services.chores, coloured, len(table_map), colouring, self._plain()
        )
        if shown.table_map is not table_map or shown.colour_column != column:
            return  # a newer map or colouring is drawn instead
        view.show_points(codes, palette)
        view.show_chosen(shown.chosen)
        self.legend.setText(legend_html(colouring, groups))
        self.show_search()
        self.status.show_note(self._describe(table_map), self._tone(table_map))
        self.status.setToolTip(METHOD_TEXTS[table_map.method])
        self._map_shown.emit()

    def _describe(self, table_map: TableMap) -> str:
        cached = " (kept from before)" if table_map.from_cache else ""
        older = " — an older version, not the latest" if self.knowledge.version is not None else ""
        took = f", {table_map.elapsed_s:.0f} s" if table_map.elapsed_s >= 1 else ""
        not_kept = (
            f" Not kept for next time ({table_map.not_kept}): laid out again then, which is slower."
            if table_map.not_kept
            else ""
        )
        return (
            f"{table_map.table}: {table_map.describe()}{older}{cached}. "
            f"Laid out by {table_map.how}{took}.{not_kept} "
            "Hover a point for its id, click to open it; drag a rectangle or lasso to narrow the table."
        )

    def _tone(self, table_map: TableMap) -> Tone:
        if table_map.sampled or self.knowledge.version is not None or table_map.not_kept:
            return "warning"
        return "good"

    async def colour(self, column: str | None) -> None:
        """Colour the points by ``column``'s values (``None``: one colour)."""
        self.shown.colour_column = column
        await self.draw()

    async def _colouring_of(self, table_map: TableMap) -> Colouring | None:
        """The chosen column's values at the points of ``table_map``: those read for a map of the same
        points, else read (one colour if they cannot be)."""
        shown = self.shown
        column, target, kept = shown.colour_column, shown.target, shown.colours
        if column is None or target is None:
            return None
        loop = asyncio.get_running_loop()
        if kept is not None and kept[1].column == column:
            fits = await loop.run_in_executor(self.services.chores, kept[0].same_points, table_map)
            if fits:
                return kept[1]
        try:
            colouring = await core.inspect.colour_by(
                await self.services.session(), target, table_map, column, workers=self.services.chores
            )
        except RecallError as error:
            if shown.colour_column == column:
                shown.colour_column = None
                self.colour_combo.setCurrentIndex(0)
            self.services.show_error(error)
            return None
        shown.colours = (table_map, colouring)
        return colouring

    def show_search(self) -> None:
        """Ring the knowledge page's current results on the map (when they come from the version mapped)."""
        table_map, view = self.shown.table_map, self.shown.view
        if table_map is None or view is None:
            return
        report = self.knowledge.last_report
        if report is None or report.result.table_version != table_map.version:
            view.show_hits([], None)
            return
        row_ids = [hit.row_id for hit in report.result.hits if hit.row_id is not None]
        found = [int(i) for i in table_map.index_of(row_ids)] if row_ids else []
        query_at = None
        if report.vector is not None:
            query_at = table_map.projection.place(report.vector)
        shown = [i for i in found if i >= 0]
        if query_at is None and shown:  # t-SNE is not linear: the query goes among its nearest results
            near = table_map.positions[shown[:3]].mean(axis=0)
            query_at = (float(near[0]), float(near[1]))
        view.show_hits(found, query_at)
