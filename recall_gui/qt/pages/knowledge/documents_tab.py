"""The *Documents* tab kept in step with the page: the columns of the table shown in its boxes (as soon as
the table is open), the last search's results by document, and the user's correction of the columns, which
the tab and the entry's *Document* line follow for that table (until another database is chosen)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.qt.panels.documents_panel import DocumentsPanel
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.search import LayoutChoices, SearchReport
    from recall_gui.qt.pages.knowledge.entry_detail import EntryDetail
    from recall_gui.qt.pages.knowledge.looking_at import LookingAt
    from recall_gui.qt.pages.knowledge.searching import Searching


class DocumentsTab:
    """Fills ``panel`` for the table ``looking_at`` shows, by the layout the user chose for it or else the
    one detected."""

    def __init__(
        self,
        services: WindowServices,
        looking_at: LookingAt,
        *,
        searching: Searching,
        entry_detail: EntryDetail,
        panel: DocumentsPanel,
    ) -> None:
        self.services = services
        self.looking_at = looking_at
        self.searching = searching
        self.entry_detail = entry_detail
        self.panel = panel
        lane = services.operations.lane
        #: Reading the table's columns, and the last search's results by document.
        self.reading_columns, self.by_document = lane("document-columns"), lane("documents")
        #: The search whose results the tab shows by document, if any.
        self.shown_for: SearchReport | None = None
        panel.columnsChosen.connect(self.choose_columns)

    async def _choices(self) -> LayoutChoices:
        """The table's layout choices. A choice the version shown cannot honour (an older one without its
        column) is kept for the versions that can; the choices say why the detected columns are used."""
        opened = await (await self.services.session()).tables.open(self.looking_at.target())
        columns = opened.columns
        taken = (columns.id, columns.content, columns.vector)
        return core.search.layout_choices(opened.schema, taken, self.looking_at.document_layout)

    def scope_changed(self) -> None:
        """Another database or version: the previous table's columns and results go; the boxes show the new
        table's columns when it is open."""
        self.panel.clear()
        self.shown_for = None
        if self.looking_at.current is not None:
            self.reading_columns.start(self.show_columns())

    async def show_columns(self) -> None:
        entry = self.looking_at.current
        try:
            choices = await self._choices()
        except RecallError:
            return  # the table cannot be read: the banner and the results say why
        if self.looking_at.current is entry:
            self.panel.show_columns(choices)

    def request(self) -> None:
        """After a search: its results by document."""
        report = self.searching.last_report
        if report is not None:
            self.by_document.start(self.show_documents(report))

    def browsed(self) -> None:
        """Rows browsed, not searched: the last search's results by document are no longer what is shown."""
        if self.shown_for is not None and self.searching.last_report is None:
            self.by_document.cancel()
            self.shown_for = None
            self.panel.show_no_results(
                "The rows shown are browsed, not a search's results: search to see the results by document."
            )

    async def show_documents(self, report: SearchReport) -> None:
        """Fill the tab: the results shown, by the document each chunk belongs to."""
        try:
            choices = await self._choices()
        except RecallError as error:
            self.panel.note.setText(error.full_text())
            return
        if self.searching.last_report is not report:
            return
        self.panel.show_columns(choices)
        hits = report.result.hits
        shares = core.search.results_by_document([(hit.id, hit.extra) for hit in hits], choices.used)
        self.panel.show_documents(shares, choices, len(hits))
        self.shown_for = report

    def choose_columns(self, document_column: str | None, position_column: str | None) -> None:
        """The user corrected how chunks make documents: the tab and the entry's document follow it, for
        this table."""
        self.looking_at.document_layout = core.search.DocumentLayout(document_column, position_column)
        self.request()
        item = self.entry_detail.item
        if item is not None:
            self.entry_detail.request_context(item)
