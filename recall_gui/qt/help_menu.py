"""The Help menu's two dialogs: the keyboard shortcuts and About."""

from __future__ import annotations

import html

from PySide6.QtWidgets import QMessageBox, QWidget

from recall_gui import __version__
from recall_gui.core.base import RegistryLocation

#: Every keyboard shortcut, as Help ▸ Keyboard Shortcuts lists them.
SHORTCUTS = (
    ("Ctrl+O", "open a LanceDB folder (read-only, not registered)"),
    ("Ctrl+L", "focus the query"),
    ("F6, or Down in the query", "focus the results (the arrow keys move through them)"),
    ("Enter", "search (an empty query browses every row)"),
    ("Esc", "cancel what runs (a search, checks, duplicates, health, reach), or close the message"),
    ("Ctrl+C", "copy the selected rows (tab-separated)"),
    ("F5", "reload the registry and re-check the databases"),
    ("Ctrl+B", "browse all rows"),
    ("Ctrl+E / Ctrl+Shift+E", "export the table as CSV / JSON"),
    ("Ctrl+1 … Ctrl+4", "knowledge base / tool description / agent view / agent log"),
    ("Enter or Space", "on a page just opened: its main action (it has the focus)"),
    ("Ctrl+5 … Ctrl+8", "checks / duplicates / the table's history (versions, what changed) / its map"),
    ("Ctrl+9", "a database's health (fragments, indexes, bad vectors, empty and repeated contents)"),
    ("Ctrl+0", "reach: the entries the agent never returns, even asked about exactly what they say"),
    ("Ctrl+R", "review entries one at a time: 1–5 (or C O W D S) a verdict, J / K next / previous, N a note"),
    ("Ctrl+Shift+R", "review from the entry selected on the knowledge page"),
    ("Ctrl+M", "more like the selected entry (searched with its stored vector)"),
    ("Ctrl+G", "add the last query with the selected rows as a golden check"),
    ("Ctrl+Z", "on the Checks page: put back the checks just removed; on the Review page: the last verdict"),
    ("Ctrl+S", "save the description suffix"),
    ("F1", "this list"),
)


def show_about(parent: QWidget, location: RegistryLocation) -> None:
    QMessageBox.about(
        parent,
        "About recall-gui",
        f"<b>recall-gui {__version__}</b><p>Browse, search and verify the LanceDB knowledge bases your "
        "agents recall from. It never writes to a knowledge base.</p>"
        f"<p>Registry: {html.escape(str(location.directory))} ({html.escape(location.source)})</p>",
    )


def show_shortcuts(parent: QWidget) -> None:
    rows = "".join(f"<tr><td><b>{keys}</b>&nbsp;&nbsp;</td><td>{what}</td></tr>" for keys, what in SHORTCUTS)
    QMessageBox.information(parent, "Keyboard shortcuts", f"<table>{rows}</table>")
