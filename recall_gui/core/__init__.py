"""The Qt-free core of recall-gui: what every front end (window, CLI, MCP server) calls.

The seed's public names are exported here. Names whose modules load heavy libraries (numpy, LanceDB,
fastembed) are resolved on first use, so importing the core stays cheap and the window opens fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from recall_gui.core.base.errors import RecallError
from recall_gui.core.base.tool import DEFAULT_DESCRIPTION, TOOL_NAME, Recall
from recall_gui.core.base.types import RecallEntry, RecallOutput, RecallSearchInput, SearchHit, SearchResult

if TYPE_CHECKING:
    from recall_gui.core.search.harness import Harness, SearchReport

_LAZY = {
    "Harness": "recall_gui.core.search.harness",
    "SearchReport": "recall_gui.core.search.harness",
}

__all__ = [
    "DEFAULT_DESCRIPTION",
    "TOOL_NAME",
    "Harness",
    "Recall",
    "RecallEntry",
    "RecallError",
    "RecallOutput",
    "RecallSearchInput",
    "SearchHit",
    "SearchReport",
    "SearchResult",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'recall_gui.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
