"""Exporting the table as shown: the search results, or every row of the browsed table that its filters
keep, to a CSV or JSON file the user names."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from PySide6.QtWidgets import QFileDialog, QWidget

from recall_gui import core
from recall_gui.core.base import RecallError, plural, refuse_output, write_text_atomic
from recall_gui.core.messages import UserMessage
from recall_gui.core.tables import to_csv, to_json
from recall_gui.qt.dialogs.export_progress import ExportProgress
from recall_gui.qt.panels.results_panel import ResultsPanel
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.qt.pages.knowledge.browsing import Browser
    from recall_gui.qt.pages.knowledge.looking_at import LookingAt

ExportFormat = Literal["csv", "json"]


class Exporter:
    """Writes what the results table shows; the dialogs are shown over ``window``."""

    def __init__(
        self,
        services: WindowServices,
        looking_at: LookingAt,
        browser: Browser,
        results: ResultsPanel,
        window: QWidget,
    ) -> None:
        self.services = services
        self.looking_at = looking_at
        self.browser = browser
        self.results = results
        self.window = window
        self.exporting = services.operations.lane("export")

    async def export_to(self, path: Path, fmt: ExportFormat) -> int:
        """Write the search results as shown, or every row of the browsed table (that its filter keeps),
        to ``path`` as CSV or JSON; returns the number of rows written."""
        if self.results.mode == "browse":
            return await self.export_browsed(path, fmt)
        table = self.results.shown_results()
        text = to_csv(table) if fmt == "csv" else to_json(table)
        try:
            refuse_output(path, what="the export")
            write_text_atomic(path, text)
        except RecallError as error:  # a path that is not a file to write
            self.services.show_error(error)
            return 0
        except OSError as error:
            self.services.show_message(
                UserMessage(f"Could not write {path}: {error.strerror or error}", "Choose another folder.")
            )
            return 0
        self.services.set_activity(f"Exported {plural(len(table.rows), 'row')} to {path}")
        return len(table.rows)

    async def export_browsed(self, path: Path, fmt: ExportFormat) -> int:
        """Every row of the browsed table that its filter keeps — not only the rows read so far — streamed
        to ``path`` behind a progress dialog whose Cancel leaves no file; returns the rows written."""
        browsing = self.browser.browsing
        if browsing is None:
            self.services.show_message(
                UserMessage("There are no rows to export.", "Choose a database that can be read.", "info")
            )
            return 0
        session = await self.services.session()

        progress = ExportProgress(self.window, path, asyncio.current_task())
        try:
            columns = self.results.export_columns()
            count = await core.tables.export_table(
                session,
                browsing.target,
                path,
                fmt,
                columns,
                filter_text=browsing.filter_text,
                where=browsing.where,
                row_ids=browsing.row_ids,
                progress=progress.update,
            )
        except asyncio.CancelledError:
            self.services.set_activity(f"Export cancelled: {path} was not written")
            raise
        except RecallError as error:
            self.services.show_error(error)
            return 0
        finally:
            progress.close()
        self.services.set_activity(f"Exported {plural(count, 'row')} to {path}")
        return count

    def ask_export(self, fmt: ExportFormat) -> None:
        current, version = self.looking_at.current, self.looking_at.version
        name = current.name if current else "results"
        if current is not None and version is not None:
            name += f"-version-{version}"
        suggested = str(Path.home() / f"{name}.{fmt}")
        kind = "CSV files (*.csv)" if fmt == "csv" else "JSON files (*.json)"
        path, _filter = QFileDialog.getSaveFileName(self.window, "Export the table", suggested, kind)
        if path:
            self.exporting.start(self.export_to(Path(path), fmt))
