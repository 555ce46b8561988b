"""cosh's registry of databases (rag_dbs.json, rag_active.json), the advice it gives, the tool
description's suffix and its store, and the embedding models it names.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui.core.base.face import lazy_face

if TYPE_CHECKING:
    from recall_gui.core.registry.registry import (
        DatabaseEntry,
        EmbedderSpec,
        FileStamp,
        Registry,
        RemovedEntry,
        change_active,
        load_registry,
        restore_database,
        set_active,
        unregister_database,
    )
    from recall_gui.core.registry.registry_advice import (
        empty_registry_hint,
        location_problem,
        offered_by,
        registry_readers,
    )
    from recall_gui.core.registry.suffix import SuffixWarning, build_tool_suffix, served_tool
    from recall_gui.core.registry.suffix_drift import SuffixDrift
    from recall_gui.core.registry.suffix_store import (
        LEGACY_BACKUP,
        LEGACY_FILE,
        UNREADABLE_TAG,
        SuffixMode,
        SuffixStore,
    )

__all__ = [
    "LEGACY_BACKUP",
    "LEGACY_FILE",
    "UNREADABLE_TAG",
    "DatabaseEntry",
    "EmbedderSpec",
    "FileStamp",
    "Registry",
    "RemovedEntry",
    "SuffixDrift",
    "SuffixMode",
    "SuffixStore",
    "SuffixWarning",
    "build_tool_suffix",
    "change_active",
    "empty_registry_hint",
    "load_registry",
    "location_problem",
    "offered_by",
    "registry_readers",
    "restore_database",
    "served_tool",
    "set_active",
    "unregister_database",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "registry": (
                "DatabaseEntry",
                "EmbedderSpec",
                "FileStamp",
                "Registry",
                "RemovedEntry",
                "change_active",
                "load_registry",
                "restore_database",
                "set_active",
                "unregister_database",
            ),
            "registry_advice": (
                "empty_registry_hint",
                "location_problem",
                "offered_by",
                "registry_readers",
            ),
            "suffix": (
                "SuffixWarning",
                "build_tool_suffix",
                "served_tool",
            ),
            "suffix_drift": ("SuffixDrift",),
            "suffix_store": (
                "LEGACY_BACKUP",
                "LEGACY_FILE",
                "SuffixMode",
                "SuffixStore",
                "UNREADABLE_TAG",
            ),
        },
    )
