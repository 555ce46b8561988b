"""The metadata filter (a LanceDB SQL predicate) and the version of the table being looked at.

The filter narrows browsing and, before ranking, the window's searches; the version list opens an older
version of the table read-only. Both take effect on Enter or on choosing, never while typing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

if TYPE_CHECKING:
    from recall_gui.core.tables import TableVersion

#: Longest filter the box holds (a predicate, not a document).
MAX_FILTER_CHARS = 4096


def version_text(version: TableVersion) -> str:
    """``5 · latest · 1,204 rows`` / ``3 · 2026-12-03 14:39 · 12 rows · tag``."""
    parts = [
        str(version.version),
        "latest" if version.latest else version.timestamp.strftime("%Y-%m-%d %H:%M"),
    ]
    if version.rows is not None:
        parts.append(f"{version.rows:,} row{'' if version.rows == 1 else 's'}")
    parts.extend(version.tags)
    return " · ".join(parts)


class FilterBar(QWidget):
    """``whereEdit``, ``schemaButton`` and ``versionCombo``."""

    #: The filter to apply (empty: none), on Enter or when the box is cleared.
    whereChanged = Signal(str)
    #: The columns (schema view) were asked for.
    schemaRequested = Signal()
    #: A version was chosen: its number, or ``None`` for the latest.
    versionChosen = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.where_edit = QLineEdit()
        self.where_edit.setObjectName("whereEdit")
        self.where_edit.setClearButtonEnabled(True)
        self.where_edit.setMaxLength(MAX_FILTER_CHARS)
        self.where_edit.setPlaceholderText(
            "Filter by metadata (LanceDB SQL), e.g. source = 'a.md' AND page < 3 — Enter applies it"
        )
        self.where_edit.setToolTip(
            "A condition on the table's columns, applied to browsing and before ranking a search.\n"
            "Nested fields as meta.lang; text in single quotes. Columns lists the names."
        )
        where_label = QLabel("&Where:")
        where_label.setBuddy(self.where_edit)
        self.schema_button = QPushButton("Columns")
        self.schema_button.setObjectName("schemaButton")
        self.schema_button.setToolTip("The table's columns, types, roles and indexes")
        self.version_combo = QComboBox()
        self.version_combo.setObjectName("versionCombo")
        # Its width does not follow the longest version (a tag can be long): the window must fit 800 px.
        self.version_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.version_combo.setMinimumContentsLength(18)
        self.version_combo.setToolTip("Open an older version of the table, read-only")
        version_label = QLabel("V&ersion:")
        version_label.setBuddy(self.version_combo)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(where_label)
        layout.addWidget(self.where_edit, 1)
        layout.addWidget(self.schema_button)
        layout.addSpacing(6)
        layout.addWidget(version_label)
        layout.addWidget(self.version_combo)
        self._applied = ""
        self.where_edit.returnPressed.connect(self._apply)
        self.where_edit.textChanged.connect(self._on_text_changed)
        self.schema_button.clicked.connect(self.schemaRequested)
        self.version_combo.activated.connect(self._on_version_activated)
        self.set_versions(())

    def where(self) -> str:
        """The filter as typed (stripped); empty for none."""
        return self.where_edit.text().strip()

    def applied(self) -> str:
        """The filter last applied (what the rows shown were filtered by)."""
        return self._applied

    def clear_where(self) -> None:
        """Empty the filter without applying anything (another table is about to be shown)."""
        self._applied = ""  # first: clearing the box must not apply the empty filter
        self.where_edit.clear()

    def insert_column(self, name: str) -> None:
        """Put a column's name into the filter at the cursor (quoted when it needs to be)."""
        needs_quotes = not name.replace("_", "a").replace(".", "a").isalnum()
        self.where_edit.insert(f"`{name}`" if needs_quotes else name)
        self.where_edit.setFocus(Qt.FocusReason.OtherFocusReason)

    def set_versions(self, versions: Sequence[TableVersion], current: int | None = None) -> None:
        """List ``versions`` (newest first) with ``current`` chosen (``None``: the latest)."""
        self.version_combo.blockSignals(True)
        self.version_combo.clear()
        if not versions:
            self.version_combo.addItem("latest", None)
        for version in reversed(versions):
            self.version_combo.addItem(version_text(version), None if version.latest else version.version)
        self.version_combo.setEnabled(bool(versions))
        popup = self.version_combo.view()
        popup.setMinimumWidth(popup.sizeHintForColumn(0) + 24)  # the list shows whole entries
        self.select_version(current)
        self.version_combo.blockSignals(False)

    def select_version(self, number: int | None) -> None:
        index = self.version_combo.findData(number)
        self.version_combo.blockSignals(True)
        self.version_combo.setCurrentIndex(max(index, 0))
        self.version_combo.blockSignals(False)

    def _apply(self) -> None:
        self._applied = self.where()
        self.whereChanged.emit(self._applied)

    def _on_text_changed(self, text: str) -> None:
        if not text and self._applied:  # the clear button: show every row again
            self._apply()

    def _on_version_activated(self, index: int) -> None:
        self.versionChosen.emit(self.version_combo.itemData(index))
