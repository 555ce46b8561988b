"""Run by test_trust_shortcuts.py under a real X11 display: press the window's shortcuts with the focus in
each text field, and print (as JSON) which of them reached their action.

Usage: python x11_shortcuts.py REGISTRY_DIR CONFIG_DIR
"""

from __future__ import annotations

import asyncio
import json
import sys

import qasync
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from recall_gui.qt import create_window


def main(registry_dir: str, config_dir: str) -> dict[str, bool]:
    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = create_window(registry_dir, config_dir)
    window.show()
    window.activateWindow()
    QTest.qWaitForWindowActive(window)
    loop.run_until_complete(window.start())
    exports: list[str] = []
    window.knowledge.exporter.ask_export = exports.append  # type: ignore[method-assign]  # no file dialog here
    actions = {
        "Ctrl+E": window.menus.export_csv_action,
        "Ctrl+Shift+E": window.menus.export_json_action,
        "Ctrl+B": window.menus.browse_action,
    }
    knowledge = window.knowledge
    fields = {
        "query": knowledge.query_bar.query_edit,
        "limit": knowledge.query_bar.limit_spin,
        "filter": knowledge.results.filter_edit,
    }
    reached: dict[str, bool] = {}
    for name, field in fields.items():
        field.setVisible(True)
        field.setFocus()
        QApplication.processEvents()
        for keys, action in actions.items():
            seen: list[bool] = []
            action.triggered.connect(lambda *_args, seen=seen: seen.append(True))
            combination = QKeySequence(keys)[0]
            focused = QApplication.focusWidget()
            assert focused is not None
            QTest.keyClick(focused, combination.key(), combination.keyboardModifiers())
            QApplication.processEvents()
            reached[f"{name} {keys}"] = bool(seen)
    window.close()
    loop.run_until_complete(window.operations.wait_idle())
    loop.run_until_complete(window.aclose())
    return reached


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
