"""Turning text into vectors: the local models (cosh's own files, the published weights of its default
model, stand-ins), cloud providers, and the pool that owns the loaded ones; which model serves a database
here and whether it is the agent's own.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui.core.base.face import lazy_face

if TYPE_CHECKING:
    from recall_gui.core.embedders.base import ModelInfo
    from recall_gui.core.embedders.model_catalog import CatalogEntry, catalog, catalog_entry
    from recall_gui.core.embedders.model_download import download, import_copy

__all__ = [
    "CatalogEntry",
    "ModelInfo",
    "catalog",
    "catalog_entry",
    "download",
    "import_copy",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "base": ("ModelInfo",),
            "model_catalog": ("CatalogEntry", "catalog", "catalog_entry"),
            "model_download": ("download", "import_copy"),
        },
    )
