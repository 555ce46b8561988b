"""The names of :mod:`recall_gui.core.tables` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .browse import (
    why_empty as why_empty,
    BrowseRow as BrowseRow,
    Page as Page,
    TableInfo as TableInfo,
    describe_table as describe_table,
    fetch_page as fetch_page,
    fetch_row as fetch_row,
)
from .export import (
    ExportColumn as ExportColumn,
    ExportSource as ExportSource,
    ExportTable as ExportTable,
    plain_value as plain_value,
    to_clipboard_text as to_clipboard_text,
    to_csv as to_csv,
    to_json as to_json,
)
from .folders import (
    Folder as Folder,
    FolderTable as FolderTable,
    open_table as open_table,
    opened_entry as opened_entry,
    place_of as place_of,
    read_folder as read_folder,
)
from .model_detection import (
    NO_MODEL as NO_MODEL,
    ModelChoice as ModelChoice,
    ModelDetection as ModelDetection,
    model_choices as model_choices,
)
from .paging import (
    DEFAULT_MAX_PAGES as DEFAULT_MAX_PAGES,
    DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE,
    PageCache as PageCache,
)
from .registration import (
    Registration as Registration,
    check_name as check_name,
    refuse_credentials as refuse_credentials,
    register_table as register_table,
    registration_notes as registration_notes,
    registry_entry as registry_entry,
)
from .schema_view import SchemaFacts as SchemaFacts, describe_schema as describe_schema
from .selection import fetch_selected_page as fetch_selected_page
from .table_export import export_table as export_table
from .versions import (
    TableVersion as TableVersion,
    latest_version as latest_version,
    list_versions as list_versions,
)
