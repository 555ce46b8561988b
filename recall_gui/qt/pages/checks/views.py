"""Below the checks on the Checks page: the selected check in full, the metrics across versions, the
A/B comparison and the hubs, each a tab with its controls above its view."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QTabWidget, QVBoxLayout, QWidget

from recall_gui.qt.panels.check_views import CompareView, HubsView, VersionsView
from recall_gui.qt.panels.database_picker import DatabasePicker
from recall_gui.qt.widgets import group_box, push_button, text_view


class CheckViews(QTabWidget):
    """``checksViews``: the tabs, their views and the buttons that fill them (the page connects those)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("checksViews")
        self.setDocumentMode(True)
        self.detail = text_view("checkDetail", read_only=True, monospace=True)
        self.detail.setPlaceholderText("Select a check to see the ranks and the results the agent got.")
        self.versions_view = VersionsView()
        self.versions_button = push_button(
            "Run on every version", "checksVersionsButton", "Run the checks on each version still on disk"
        )
        self.compare_view = CompareView()
        self.compare_version = QSpinBox()
        self.compare_version.setObjectName("checksCompareVersion")
        self.compare_version.setRange(1, 10**9)
        self.compare_version_button = push_button(
            "Compare version with the latest", "checksCompareVersionButton", "A: that version, B: the latest"
        )
        self.compare_database = DatabasePicker()
        self.compare_database.setObjectName("checksCompareDatabase")
        self.compare_database_button = push_button(
            "Compare with this database",
            "checksCompareDatabaseButton",
            "A: each check's database, B: this one (the same ids, e.g. another model) with its own model",
        )
        self.hubs_view = HubsView()
        self.hubs_button = push_button(
            "Find hubs",
            "checksHubsButton",
            "Search each check's query as the agent does and count what returns",
        )
        self.addTab(group_box("Selected check", [(self.detail, 1)]), "Selected check")
        self.addTab(_view_tab([self.versions_button], self.versions_view), "Versions")
        compare_controls: list[QWidget | int] = [
            QLabel("Version:"),
            self.compare_version,
            self.compare_version_button,
            16,
            self.compare_database,
            self.compare_database_button,
        ]
        self.addTab(_view_tab(compare_controls, self.compare_view, stretch=self.compare_database), "Compare")
        self.addTab(_view_tab([self.hubs_button], self.hubs_view), "Hubs")


def _view_tab(controls: list[QWidget | int], view: QWidget, stretch: QWidget | None = None) -> QWidget:
    """A tab of the views below the checks: a row of ``controls`` (an int is a space that many pixels
    wide; ``stretch`` takes the row's spare width, else the row's end does) above ``view``."""
    tab = QWidget()
    layout = QVBoxLayout(tab)
    layout.setContentsMargins(0, 4, 0, 0)
    row = QHBoxLayout()
    for control in controls:
        if isinstance(control, int):
            row.addSpacing(control)
        else:
            row.addWidget(control, 1 if control is stretch else 0)
    if stretch is None:
        row.addStretch(1)
    layout.addLayout(row)
    layout.addWidget(view, 1)
    return tab
