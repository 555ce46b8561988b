"""The window's shortcuts win over a text field's editing keys in every field that takes the focus, also in
fields made and dropped one after another (cell editors), whose wrappers Python may reuse."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QLineEdit, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from recall_gui.qt.shortcuts import ShortcutsFirst


def overridden(widget: QWidget, key: Qt.Key, modifiers: Qt.KeyboardModifier) -> bool:
    """Whether the widget claims the key for itself (accepts the override), as a line edit does Ctrl+E."""
    event = QKeyEvent(QEvent.Type.ShortcutOverride, key, modifiers)
    event.ignore()
    QApplication.sendEvent(widget, event)
    return event.isAccepted()


def test_every_field_that_takes_the_focus_leaves_the_window_its_shortcuts(qapp: QApplication) -> None:
    window = QWidget()
    QVBoxLayout(window)
    # Offscreen Qt gives a line edit no Ctrl+E; Ctrl+A (select all) it claims on every platform.
    action = QAction("Select rows", window)
    action.setShortcut(QKeySequence("Ctrl+A"))
    window.addAction(action)
    ShortcutsFirst(window)
    window.show()
    ctrl = Qt.KeyboardModifier.ControlModifier
    for _ in range(12):
        field = QLineEdit(window)
        window.layout().addWidget(field)
        field.show()
        field.setFocus()
        qapp.processEvents()
        assert not overridden(field, Qt.Key.Key_A, ctrl)  # the window's action, not the field's
        assert overridden(field, Qt.Key.Key_C, ctrl)  # copy stays the field's
        field.deleteLater()
        qapp.processEvents()
    other = QLineEdit()  # another window's field keeps its editing keys
    other.show()
    other.setFocus()
    qapp.processEvents()
    assert overridden(other, Qt.Key.Key_A, ctrl)
    window.close()
    other.close()


def test_cell_editors_made_by_qt_leave_the_window_its_shortcuts(qapp: QApplication) -> None:
    window = QWidget()
    layout = QVBoxLayout(window)
    action = QAction("Select rows", window)
    action.setShortcut(QKeySequence("Ctrl+A"))
    window.addAction(action)
    table = QTableWidget(12, 1, window)
    layout.addWidget(table)
    ShortcutsFirst(window)
    window.show()
    qapp.processEvents()
    ctrl = Qt.KeyboardModifier.ControlModifier
    for row in range(12):
        item = QTableWidgetItem(f"cell {row}")
        table.setItem(row, 0, item)
        table.setCurrentItem(item)
        table.editItem(item)  # Qt makes the editor; Python sees it only through a passing wrapper
        qapp.processEvents()
        editor = QApplication.focusWidget()
        assert isinstance(editor, QLineEdit), editor
        assert not overridden(editor, Qt.Key.Key_A, ctrl), f"editor {row}"
        del editor
        table.setCurrentItem(None)  # the editor closes and is deleted
        table.setFocus()
        qapp.processEvents()
    window.close()
