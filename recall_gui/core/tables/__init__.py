"""Browsing a table as the user sees it: pages, selections, versions, opened folders, the schema,
exports, model detection and registration.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui.core.base.face import lazy_face

if TYPE_CHECKING:
    from recall_gui.core.tables.browse import (
        BrowseRow,
        Page,
        TableInfo,
        describe_table,
        fetch_page,
        fetch_row,
        why_empty,
    )
    from recall_gui.core.tables.export import (
        ExportColumn,
        ExportTable,
        plain_value,
        to_clipboard_text,
        to_csv,
        to_json,
    )
    from recall_gui.core.tables.folders import (
        Folder,
        FolderTable,
        open_table,
        opened_entry,
        place_of,
        read_folder,
    )
    from recall_gui.core.tables.model_detection import NO_MODEL, ModelChoice, ModelDetection, model_choices
    from recall_gui.core.tables.paging import DEFAULT_MAX_PAGES, DEFAULT_PAGE_SIZE, PageCache
    from recall_gui.core.tables.registration import (
        Registration,
        check_name,
        refuse_credentials,
        register_table,
        registration_notes,
        registry_entry,
    )
    from recall_gui.core.tables.schema_view import SchemaFacts, describe_schema
    from recall_gui.core.tables.selection import fetch_selected_page
    from recall_gui.core.tables.table_export import export_table
    from recall_gui.core.tables.versions import TableVersion, latest_version, list_versions

__all__ = [
    "DEFAULT_MAX_PAGES",
    "DEFAULT_PAGE_SIZE",
    "NO_MODEL",
    "BrowseRow",
    "ExportColumn",
    "ExportTable",
    "Folder",
    "FolderTable",
    "ModelChoice",
    "ModelDetection",
    "Page",
    "PageCache",
    "Registration",
    "SchemaFacts",
    "TableInfo",
    "TableVersion",
    "check_name",
    "describe_schema",
    "describe_table",
    "export_table",
    "fetch_page",
    "fetch_row",
    "fetch_selected_page",
    "latest_version",
    "list_versions",
    "model_choices",
    "open_table",
    "opened_entry",
    "place_of",
    "plain_value",
    "read_folder",
    "refuse_credentials",
    "register_table",
    "registration_notes",
    "registry_entry",
    "to_clipboard_text",
    "to_csv",
    "to_json",
    "why_empty",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "browse": (
                "BrowseRow",
                "Page",
                "TableInfo",
                "describe_table",
                "fetch_page",
                "fetch_row",
                "why_empty",
            ),
            "export": (
                "ExportColumn",
                "ExportTable",
                "plain_value",
                "to_clipboard_text",
                "to_csv",
                "to_json",
            ),
            "folders": (
                "Folder",
                "FolderTable",
                "open_table",
                "opened_entry",
                "place_of",
                "read_folder",
            ),
            "model_detection": (
                "ModelChoice",
                "ModelDetection",
                "NO_MODEL",
                "model_choices",
            ),
            "paging": (
                "DEFAULT_MAX_PAGES",
                "DEFAULT_PAGE_SIZE",
                "PageCache",
            ),
            "registration": (
                "Registration",
                "check_name",
                "refuse_credentials",
                "register_table",
                "registration_notes",
                "registry_entry",
            ),
            "schema_view": (
                "SchemaFacts",
                "describe_schema",
            ),
            "selection": ("fetch_selected_page",),
            "table_export": ("export_table",),
            "versions": (
                "TableVersion",
                "latest_version",
                "list_versions",
            ),
        },
    )
