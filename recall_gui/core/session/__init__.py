"""The one owner of run-time state (open tables, vectors in memory, worker pools) and the exact
search over the vectors it holds.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui.core.base.face import lazy_face

if TYPE_CHECKING:
    from recall_gui.core.session.map_cache import Method
    from recall_gui.core.session.session import Session

__all__ = [
    "Method",
    "Session",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "map_cache": ("Method",),
            "session": ("Session",),
        },
    )
