"""What every other part of the core stands on: typed errors, the seed's types and tool text, paths,
atomic writes, settings, library compatibility and small text helpers.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui.core.base.face import lazy_face

if TYPE_CHECKING:
    from recall_gui.core.base.app_settings import MB, AppSettings, AppSettingsError, SettingsStore
    from recall_gui.core.base.atomic import set_aside, write_text_atomic
    from recall_gui.core.base.captions import one_line, plural, quoted
    from recall_gui.core.base.compat import defer_lance_rest_client
    from recall_gui.core.base.control_chars import printable
    from recall_gui.core.base.credentials import has_credentials, masked, without_credentials
    from recall_gui.core.base.errors import (
        DatabaseNotFoundError,
        DemoBuildCancelled,
        GoldenFileError,
        InvalidInputError,
        RecallError,
        SettingsError,
    )
    from recall_gui.core.base.json_bounds import (
        MAX_NESTING,
        LongNumber,
        json_path,
        read_integer,
        recordable,
        too_deep,
    )
    from recall_gui.core.base.output_paths import OutputRefused, refuse_output
    from recall_gui.core.base.paths import (
        ACTIVE_FILE,
        CONFIG_ENV,
        DBS_FILE,
        REGISTRY_ENV,
        RegistryLocation,
        app_config_dir,
        cache_problem,
        folder_problem,
        resolve_registry_dir,
    )
    from recall_gui.core.base.ray_runtime import ScaleUnavailableError, ray_cluster, window_address
    from recall_gui.core.base.surrogates import first_surrogate, is_unicode, shown
    from recall_gui.core.base.tool import DEFAULT_DESCRIPTION, TOOL_NAME, Recall, compose_description
    from recall_gui.core.base.types import (
        DEFAULT_LIMIT,
        MAX_QUERY_CHARS,
        METRIC_NAMES,
        SearchHit,
        SearchResult,
        Vector,
    )
    from recall_gui.core.base.warmup import HeavyModules

__all__ = [
    "ACTIVE_FILE",
    "CONFIG_ENV",
    "DBS_FILE",
    "DEFAULT_DESCRIPTION",
    "DEFAULT_LIMIT",
    "MAX_NESTING",
    "MAX_QUERY_CHARS",
    "MB",
    "METRIC_NAMES",
    "REGISTRY_ENV",
    "TOOL_NAME",
    "AppSettings",
    "AppSettingsError",
    "DatabaseNotFoundError",
    "DemoBuildCancelled",
    "GoldenFileError",
    "HeavyModules",
    "InvalidInputError",
    "LongNumber",
    "OutputRefused",
    "Recall",
    "RecallError",
    "RegistryLocation",
    "ScaleUnavailableError",
    "SearchHit",
    "SearchResult",
    "SettingsError",
    "SettingsStore",
    "Vector",
    "app_config_dir",
    "cache_problem",
    "compose_description",
    "defer_lance_rest_client",
    "first_surrogate",
    "folder_problem",
    "has_credentials",
    "is_unicode",
    "json_path",
    "masked",
    "one_line",
    "plural",
    "printable",
    "quoted",
    "ray_cluster",
    "read_integer",
    "recordable",
    "refuse_output",
    "resolve_registry_dir",
    "set_aside",
    "shown",
    "too_deep",
    "window_address",
    "without_credentials",
    "write_text_atomic",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "output_paths": (
                "OutputRefused",
                "refuse_output",
            ),
            "ray_runtime": (
                "window_address",
                "ray_cluster",
                "ScaleUnavailableError",
            ),
            "app_settings": (
                "AppSettings",
                "AppSettingsError",
                "MB",
                "SettingsStore",
            ),
            "atomic": (
                "set_aside",
                "write_text_atomic",
            ),
            "captions": (
                "one_line",
                "plural",
                "quoted",
            ),
            "compat": ("defer_lance_rest_client",),
            "credentials": (
                "has_credentials",
                "masked",
                "without_credentials",
            ),
            "errors": (
                "DatabaseNotFoundError",
                "DemoBuildCancelled",
                "GoldenFileError",
                "InvalidInputError",
                "RecallError",
                "SettingsError",
            ),
            "json_bounds": (
                "LongNumber",
                "MAX_NESTING",
                "json_path",
                "read_integer",
                "recordable",
                "too_deep",
            ),
            "paths": (
                "ACTIVE_FILE",
                "CONFIG_ENV",
                "DBS_FILE",
                "REGISTRY_ENV",
                "RegistryLocation",
                "app_config_dir",
                "cache_problem",
                "folder_problem",
                "resolve_registry_dir",
            ),
            "control_chars": ("printable",),
            "surrogates": (
                "first_surrogate",
                "is_unicode",
                "shown",
            ),
            "tool": (
                "DEFAULT_DESCRIPTION",
                "Recall",
                "TOOL_NAME",
                "compose_description",
            ),
            "types": (
                "DEFAULT_LIMIT",
                "MAX_QUERY_CHARS",
                "METRIC_NAMES",
                "SearchHit",
                "SearchResult",
                "Vector",
            ),
            "warmup": ("HeavyModules",),
        },
    )
