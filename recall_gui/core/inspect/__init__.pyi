"""The names of :mod:`recall_gui.core.inspect` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .duplicate_threshold import (
    DEFAULT_THRESHOLDS as DEFAULT_THRESHOLDS,
    GROUPING_RULE as GROUPING_RULE,
    METRICS as METRICS,
)
from .duplicates import (
    DuplicateGroup as DuplicateGroup,
    DuplicateReport as DuplicateReport,
    GroupEntry as GroupEntry,
    find_duplicates as find_duplicates,
)
from .layout import MIN_LAYOUT_ROWS as MIN_LAYOUT_ROWS
from .projection import within as within
from .table_map import (
    Colouring as Colouring,
    TableMap as TableMap,
    build_map as build_map,
    colour_by as colour_by,
    kept_map as kept_map,
    point_labels as point_labels,
)
from .text_diff import (
    DiffLine as DiffLine,
    changed_ranges as changed_ranges,
    diff_lines as diff_lines,
    unified_text as unified_text,
)
from .version_diff import (
    RowChange as RowChange,
    VersionDiff as VersionDiff,
    diff_versions as diff_versions,
    fetch_sides as fetch_sides,
)
