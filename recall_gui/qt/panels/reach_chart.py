"""The Reach page's chart of retrievability (how many pseudo-queries return each entry): its Lorenz curve
(the share of entries, least returned first, against the share of all returns they get; the diagonal is
an even spread, and the Gini coefficient is twice the area between them) or a histogram.

pyqtgraph is imported with this module: the page imports it off the GUI thread before it first shows a
report."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from recall_gui.core.reach import lorenz

if TYPE_CHECKING:
    import numpy.typing as npt

#: The most points a Lorenz curve is drawn with (an even sample of a large table's curve).
CURVE_POINTS = 2_000
#: The most bars of the histogram.
BARS = 40
LINE = "#2b7bb9"
EVEN = "#8a8a8a"


class _Plot(pg.PlotWidget):  # type: ignore[misc]
    """A plot that asks for little room: pyqtgraph's own size hint (about 600x500) made the page taller
    than a window of 800x500 shows, and the page then scrolled."""

    def sizeHint(self) -> QSize:
        return QSize(300, 160)


class ReachChart(QWidget):
    """``reachChartKind`` (Lorenz curve or histogram) above ``reachChart`` (the plot)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = QComboBox()
        self.kind.setObjectName("reachChartKind")
        self.kind.addItem("Lorenz curve", "lorenz")
        self.kind.addItem("Histogram", "histogram")
        self.kind.setToolTip("How evenly the queries spread over the entries")
        self.caption = QLabel()
        self.caption.setObjectName("reachChartCaption")
        self.plot = _Plot()
        self.plot.setObjectName("reachChart")
        self.plot.setBackground(None)
        self.plot.setMinimumSize(160, 80)
        self.plot.setMenuEnabled(False)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.kind)
        row.addWidget(self.caption, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.plot, 1)
        self._counts: npt.NDArray[np.int64] = np.zeros(0, np.int64)
        self._gini = 0.0
        self.kind.currentIndexChanged.connect(self._draw)

    def show_counts(self, counts: npt.NDArray[np.int64], gini: float) -> None:
        """Each entry's retrievability (pseudo-queries returning it) and their Gini coefficient."""
        self._counts, self._gini = counts, gini
        self._draw()

    def clear_counts(self) -> None:
        """No report: an empty plot."""
        self._counts, self._gini = np.zeros(0, np.int64), 0.0
        self.plot.clear()
        self.caption.setText("")

    def _draw(self) -> None:
        self.plot.clear()
        counts = self._counts
        if self.kind.currentData() == "histogram":
            self._histogram(counts)
        else:
            self._lorenz(counts)

    def _lorenz(self, counts: npt.NDArray[np.int64]) -> None:
        share_entries, share_returns = lorenz(counts)
        step = max(1, len(share_entries) // CURVE_POINTS)
        kept = np.unique(np.append(np.arange(0, len(share_entries), step), len(share_entries) - 1))
        xs, ys = share_entries[kept], share_returns[kept]
        self.plot.plot([0, 1], [0, 1], pen=pg.mkPen(EVEN, width=1, style=pg.QtCore.Qt.PenStyle.DashLine))
        self.plot.plot(xs, ys, pen=pg.mkPen(LINE, width=2))
        self.plot.setLabel("bottom", "share of entries, least returned first")
        self.plot.setLabel("left", "share of returns")
        self.plot.setXRange(0, 1, padding=0.02)
        self.plot.setYRange(0, 1, padding=0.02)
        self.caption.setText(f"Gini {self._gini:.3f}")
        self.caption.setToolTip(
            "0: every entry returned equally often; near 1: a few entries take every place"
        )

    def _histogram(self, counts: npt.NDArray[np.int64]) -> None:
        top = int(counts.max()) if len(counts) else 0
        edges = np.arange(top + 2) if top < BARS else np.linspace(0, top + 1, BARS + 1)
        heights, edges = np.histogram(counts, bins=edges)
        bars = pg.BarGraphItem(x0=edges[:-1], x1=edges[1:], height=heights, brush=LINE, pen=pg.mkPen(None))
        self.plot.addItem(bars)
        self.plot.setLabel("bottom", "queries that return the entry")
        self.plot.setLabel("left", "entries")
        self.plot.enableAutoRange()
        zero = int(np.count_nonzero(counts == 0))
        self.caption.setText(f"{zero:,} entries returned for no query")

    def curve_points(self) -> tuple[list[float], list[float]]:
        """The drawn Lorenz curve's points (tests read what the user sees)."""
        items = self.plot.getPlotItem().listDataItems()
        if not items:
            return [], []
        xs, ys = items[-1].getData()
        return [float(x) for x in xs], [float(y) for y in ys]
