"""The Checks page's views beyond one run: the file's metrics across the table's versions (a pyqtgraph
chart, imported when first drawn), A/B — the checks on a version or another database against the latest,
with the ids each check lost and gained — and the hubs among the answers to the file's queries."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from recall_gui.core.golden import Comparison, VersionsReport
    from recall_gui.core.reach import CheckHubs

METRICS = (("recall", "recall"), ("mrr", "MRR"), ("ndcg", "nDCG"))
COLOURS = {"recall": "#2b7bb9", "mrr": "#d08a10", "ndcg": "#3a9e4f"}
LOST = QColor("#f3c9c4")
GAINED = QColor("#cfe9cf")
HUB = QColor("#f6e3b4")


def version_series(report: VersionsReport, db_name: str) -> dict[str, list[tuple[int, float]]]:
    """Each mean metric of ``db_name``'s checks by version, for the chart (versions where none ran are
    left out)."""
    series: dict[str, list[tuple[int, float]]] = {name: [] for name, _label in METRICS}
    for run in report.runs:
        metrics = run.to_dict()["metrics"]
        if (run.searched or run.db_name) == db_name and metrics is not None:
            for name, _label in METRICS:
                series[name].append((run.version, float(metrics[name])))
    return series


class VersionsView(QWidget):
    """``checksVersionsNote`` and the chart (``checksVersionsChart``) of recall, MRR and nDCG by version."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note = QLabel("Run the checks on every version of their tables to see which version broke them.")
        self.note.setObjectName("checksVersionsNote")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # it names databases
        self.chart: Any = None
        self.legend: QLabel | None = None
        self.series: dict[str, list[tuple[int, float]]] = {}
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(4, 4, 4, 4)
        self._layout.addWidget(self.note)

    def listing(self, name: str, count: int | None, seconds: float) -> None:
        """How a run over versions goes (:class:`recall_gui.core.golden.VersionsProgress`): the listing."""
        many = f"{count:,} versions" if count is not None else "the versions"
        self.note.setText(f"Listing {many} of {name} ({seconds:.0f} s)…")

    def ran(self, name: str, done: int, total: int, version: int) -> None:
        """How a run over versions goes: a version checked."""
        self.note.setText(f"{name}: checked version {version} ({done:,} of {total:,} versions)…")

    def show_report(self, report: VersionsReport) -> None:
        import pyqtgraph as pg

        databases = list(dict.fromkeys(run.searched or run.db_name for run in report.runs))
        if not databases:
            self.note.setText("No version could be searched: " + "; ".join(report.unusable.values()))
            return
        shown = databases[0]
        self.series = version_series(report, shown)
        broke = [
            (report.checks[index].query, report.broke_at(index))
            for index in range(len(report.checks))
            if report.broke_at(index) is not None
        ]
        text = (
            f"Means over the checks of {shown}, at each version of its table still on disk "
            "(limit: each check's)."
        )
        if len(databases) > 1:
            text += f" {len(databases) - 1} other database(s) in the file: see `recall-gui check --versions`."
        if broke:
            text += " Broke: " + "; ".join(f"“{query}” at version {version}" for query, version in broke)
        self.note.setText(text)
        if self.chart is None:
            self.chart = pg.PlotWidget()
            self.chart.setObjectName("checksVersionsChart")
            self.chart.setBackground(None)
            self.chart.setLabel("bottom", "table version")
            self.chart.setYRange(0, 1.05)
            self.chart.setMinimumHeight(80)
            self._layout.addWidget(self.chart, 1)
            # The legend below the chart, never on the lines (they run along the top, near 1).
            self.legend = QLabel(
                " &nbsp; ".join(
                    f'<span style="color:{COLOURS[name]}">━━</span> {label}' for name, label in METRICS
                )
            )
            self.legend.setObjectName("checksVersionsLegend")
            self.legend.setTextFormat(Qt.TextFormat.RichText)
            self._layout.addWidget(self.legend)
        self.chart.clear()
        versions = [version for points in self.series.values() for version, _ in points]
        if versions:
            # Versions are whole numbers: ticks on whole steps, never 1.5.
            step = max(1, math.ceil((max(versions) - min(versions)) / 8))
            self.chart.getAxis("bottom").setTickSpacing(step, step)
        for name, label in METRICS:
            points = self.series[name]
            self.chart.plot(
                [version for version, _ in points],
                [value for _, value in points],
                pen=pg.mkPen(COLOURS[name], width=2),
                symbol="o",
                symbolSize=6,
                symbolBrush=COLOURS[name],
                name=label,
            )


class CompareView(QWidget):
    """``checksCompareNote`` and ``checksCompareTable``: each check's verdict in A and B, and the ids lost
    (red) and gained (green)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note, self.table = _note_above_table(
            self,
            "checksCompare",
            "Compare the checks on a version or another database (A) with the latest (B).",
            ["Check", "A", "B", "Lost in B", "Gained in B"],
            stretched=0,
        )

    def show_comparison(self, comparison: Comparison, a_label: str, b_label: str) -> None:
        data = comparison.to_dict()

        def means(side: str) -> str:
            metrics = data[side]["metrics"]
            if metrics is None:
                return "no check ran"
            return f"recall {metrics['recall']:.3f}, MRR {metrics['mrr']:.3f}, nDCG {metrics['ndcg']:.3f}"

        verdict = "B lost an expected id that A found." if comparison.regressed else "B lost no expected id."
        if comparison.unusable:  # a side that could not run is no verdict: say why, first
            number, side, outcome = comparison.unusable[0]
            others = len({n for n, _, _ in comparison.unusable}) - 1
            more = f" ({others} more could not run)" if others else ""
            verdict = f"Check {number}: {side} could not run it: {outcome.error}{more}"
        self.note.setText(f"A: {a_label} — {means('a')}.\nB: {b_label} — {means('b')}.\n{verdict}")
        self.table.setRowCount(len(data["checks"]))

        def shown(side: dict[str, Any]) -> str:
            return "could not run" if "error" in side else "pass" if side["passed"] else "FAIL"

        for row, check in enumerate(data["checks"]):
            cells = (
                f"{check['searched']}: “{check['query']}” (limit {check['limit']})",
                shown(check["a"]),
                shown(check["b"]),
                ", ".join(check["lost"]),
                ", ".join(check["gained"]),
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                side = check["a" if column == 1 else "b"] if column in (1, 2) else {}
                if "error" in side:
                    item.setToolTip(side["error"])
                if column == 3 and text:
                    item.setBackground(QBrush(LOST))
                if column == 4 and text:
                    item.setBackground(QBrush(GAINED))
                self.table.setItem(row, column, item)


class HubsView(QWidget):
    """``checksHubsNote`` and ``checksHubsTable``: the entries the agent's search returns for many of the
    file's queries, per database, hubs (above the share) highlighted."""

    #: Entries listed per database: the most returned; the rest are returned for fewer queries still.
    SHOWN = 20

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.note, self.table = _note_above_table(
            self,
            "checksHubs",
            "Search every check's query as the agent does and count the entries returned for many of them: "
            "hubs, such as boilerplate, crowd out the answers.",
            ["Database", "Entry id", "Returned for"],
            stretched=1,
        )

    def show_hubs(self, found: Sequence[CheckHubs], share: float) -> None:
        rows: list[tuple[str, str, str, bool]] = []
        said: list[str] = []
        for database in found:
            report = database.report
            if report is None:
                said.append(f"{database.searched} could not be searched: {database.error}")
                continue
            hubs = report.hubs(share)
            limit = f"limit {report.limit}" if report.limit is not None else "each check's limit"
            said.append(
                f"{database.searched}, latest version, {report.queries:,} queries at {limit}: "
                + (f"{len(hubs)} hub(s) returned for more than {share:.0%} of them" if hubs else "no hub")
            )
            rows += [
                (
                    database.searched,
                    hit.named,
                    f"{hit.returned_for:,} of {report.queries:,} ({hit.share:.0%})",
                    hit in hubs,
                )
                for hit in report.returned[: self.SHOWN]
            ]
        self.note.setText("\n".join(said) if said else "No check in the file.")
        self.table.setRowCount(len(rows))
        for row, (searched, entry_id, returned, hub) in enumerate(rows):
            for column, text in enumerate((searched, entry_id, returned)):
                item = QTableWidgetItem(text)
                if hub:
                    item.setBackground(QBrush(HUB))
                self.table.setItem(row, column, item)


def _note_above_table(
    view: QWidget, name: str, note: str, headers: list[str], *, stretched: int
) -> tuple[QLabel, QTableWidget]:
    """``view``'s note (``<name>Note``) above its read-only table (``<name>Table``) of ``headers``, the
    column ``stretched`` taking the spare width."""
    label = QLabel(note)
    label.setObjectName(f"{name}Note")
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)  # it names databases and quotes queries
    table = QTableWidget(0, len(headers))
    table.setObjectName(f"{name}Table")
    table.setHorizontalHeaderLabels(headers)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setSectionResizeMode(stretched, QHeaderView.ResizeMode.Stretch)
    layout = QVBoxLayout(view)
    layout.setContentsMargins(4, 4, 4, 4)
    layout.addWidget(label)
    layout.addWidget(table, 1)
    return label, table
