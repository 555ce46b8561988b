"""Where a knowledge base's rows live: targets (a folder or URI and a table), the cache of open
tables, and how columns and rows are read.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui.core.base.face import lazy_face

if TYPE_CHECKING:
    from recall_gui.core.storage.columns import ColumnMapping
    from recall_gui.core.storage.target import TableTarget, without_secrets

__all__ = [
    "ColumnMapping",
    "TableTarget",
    "without_secrets",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "columns": ("ColumnMapping",),
            "target": (
                "TableTarget",
                "without_secrets",
            ),
        },
    )
