"""Press the window's shortcuts with the focus in each text field, under a real X11 window."""

import asyncio, json, sys
import qasync
from PySide6.QtWidgets import QApplication
from PySide6.QtTest import QTest
from PySide6.QtGui import QKeySequence
from recall_gui.qt import create_window

app = QApplication([])
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)
window = create_window(sys.argv[1], sys.argv[2])
window.show()
window.activateWindow()
QTest.qWaitForWindowActive(window)
loop.run_until_complete(window.start())
fired = []
window.knowledge.ask_export = lambda fmt: fired.append(fmt)  # the file dialog would wait for a person
actions = {
    "Ctrl+E": window.export_csv_action,
    "Ctrl+Shift+E": window.export_json_action,
    "Ctrl+B": window.browse_action,
}
k = window.knowledge
fields = {"query": k.query_bar.query_edit, "limit": k.query_bar.limit_spin, "filter": k.results.filter_edit}
result = {}
for name, field in fields.items():
    field.setVisible(True)
    field.setFocus()
    QApplication.processEvents()
    for keys, action in actions.items():
        seen = []
        action.triggered.connect(lambda *_a, seen=seen: seen.append(1))
        combo = QKeySequence(keys)[0]
        QTest.keyClick(QApplication.focusWidget(), combo.key(), combo.keyboardModifiers())
        QApplication.processEvents()
        result[f"{name} {keys}"] = bool(seen)
print(json.dumps(result))
window.close()
loop.run_until_complete(window.tasks.wait_idle())
loop.run_until_complete(window.aclose())
