"""The names of :mod:`recall_gui.core.base` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .app_settings import (
    MB as MB,
    AppSettings as AppSettings,
    AppSettingsError as AppSettingsError,
    SettingsStore as SettingsStore,
)
from .atomic import set_aside as set_aside, write_text_atomic as write_text_atomic
from .captions import one_line as one_line, plural as plural, quoted as quoted
from .collector import collection_paused as collection_paused
from .compat import defer_lance_rest_client_on_import as defer_lance_rest_client_on_import
from .compat import faster_pyside_module_check as faster_pyside_module_check
from .control_chars import printable as printable, printable_lines as printable_lines
from .credentials import (
    has_credentials as has_credentials,
    masked as masked,
    without_credentials as without_credentials,
)
from .errors import (
    DatabaseNotFoundError as DatabaseNotFoundError,
    DemoBuildCancelled as DemoBuildCancelled,
    GoldenFileError as GoldenFileError,
    InvalidInputError as InvalidInputError,
    RecallError as RecallError,
    SettingsError as SettingsError,
)
from .json_output import json_text as json_text
from .json_bounds import (
    MAX_NESTING as MAX_NESTING,
    LongNumber as LongNumber,
    json_path as json_path,
    read_integer as read_integer,
    recordable as recordable,
    too_deep as too_deep,
)
from .output_paths import (
    refuse_folders_in_knowledge_bases as refuse_folders_in_knowledge_bases,
    refuse_output as refuse_output,
)
from .paths import (
    ACTIVE_FILE as ACTIVE_FILE,
    CONFIG_ENV as CONFIG_ENV,
    DBS_FILE as DBS_FILE,
    REGISTRY_ENV as REGISTRY_ENV,
    RegistryLocation as RegistryLocation,
    app_config_dir as app_config_dir,
    cache_problem as cache_problem,
    folder_problem as folder_problem,
    resolve_registry_dir as resolve_registry_dir,
)
from .regular_files import (
    FileRefused as FileRefused,
    read_regular as read_regular,
)
from .surrogates import first_surrogate as first_surrogate, is_unicode as is_unicode, shown as shown
from .temp_folders import sweep_stale_temp_folders as sweep_stale_temp_folders
from .tool import (
    DEFAULT_DESCRIPTION as DEFAULT_DESCRIPTION,
    TOOL_NAME as TOOL_NAME,
    Recall as Recall,
    compose_description as compose_description,
)
from .types import (
    DEFAULT_LIMIT as DEFAULT_LIMIT,
    GOLDEN_MAX_BYTES as GOLDEN_MAX_BYTES,
    MAX_QUERY_CHARS as MAX_QUERY_CHARS,
    METRIC_NAMES as METRIC_NAMES,
    SearchHit as SearchHit,
    SearchResult as SearchResult,
    Vector as Vector,
    method_words as method_words,
)
from .warmup import HeavyModules as HeavyModules
