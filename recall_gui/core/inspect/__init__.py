"""Looking into a knowledge base: duplicates and near-duplicates, version diffs, projections and maps.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui.core.base.face import lazy_face

if TYPE_CHECKING:
    from recall_gui.core.inspect.duplicate_threshold import DEFAULT_THRESHOLDS, METRICS
    from recall_gui.core.inspect.duplicates import DuplicateGroup, DuplicateReport, find_duplicates
    from recall_gui.core.inspect.layout import MIN_LAYOUT_ROWS
    from recall_gui.core.inspect.projection import within
    from recall_gui.core.inspect.ray_duplicates import find_duplicates_in_ray, find_duplicates_on_ray
    from recall_gui.core.inspect.table_map import (
        Colouring,
        TableMap,
        build_map,
        colour_by,
        kept_map,
        point_labels,
    )
    from recall_gui.core.inspect.text_diff import DiffLine, changed_ranges, diff_lines, unified_text
    from recall_gui.core.inspect.version_diff import RowChange, VersionDiff, diff_versions, fetch_sides

__all__ = [
    "DEFAULT_THRESHOLDS",
    "METRICS",
    "MIN_LAYOUT_ROWS",
    "Colouring",
    "DiffLine",
    "DuplicateGroup",
    "DuplicateReport",
    "RowChange",
    "TableMap",
    "VersionDiff",
    "build_map",
    "changed_ranges",
    "colour_by",
    "diff_lines",
    "diff_versions",
    "fetch_sides",
    "find_duplicates",
    "find_duplicates_in_ray",
    "find_duplicates_on_ray",
    "kept_map",
    "point_labels",
    "unified_text",
    "within",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "ray_duplicates": (
                "find_duplicates_on_ray",
                "find_duplicates_in_ray",
            ),
            "duplicate_threshold": (
                "DEFAULT_THRESHOLDS",
                "METRICS",
            ),
            "duplicates": (
                "DuplicateGroup",
                "DuplicateReport",
                "find_duplicates",
            ),
            "layout": ("MIN_LAYOUT_ROWS",),
            "projection": ("within",),
            "table_map": (
                "Colouring",
                "TableMap",
                "build_map",
                "colour_by",
                "kept_map",
                "point_labels",
            ),
            "text_diff": (
                "DiffLine",
                "changed_ranges",
                "diff_lines",
                "unified_text",
            ),
            "version_diff": (
                "RowChange",
                "VersionDiff",
                "diff_versions",
                "fetch_sides",
            ),
        },
    )
