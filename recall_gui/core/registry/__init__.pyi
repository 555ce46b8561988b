"""The names of :mod:`recall_gui.core.registry` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .registry import load_registry as load_registry
from .registry_advice import (
    empty_registry_hint as empty_registry_hint,
    location_problem as location_problem,
    offered_by as offered_by,
    registry_readers as registry_readers,
)
from .registry_changes import (
    RemovedEntry as RemovedEntry,
    change_active as change_active,
    restore_database as restore_database,
    set_active as set_active,
    unregister_database as unregister_database,
)
from .registry_keeper import RegistryKeeper as RegistryKeeper
from .registry_types import (
    DatabaseEntry as DatabaseEntry,
    EmbedderSpec as EmbedderSpec,
    FileStamp as FileStamp,
    Registry as Registry,
)
from .suffix import (
    SuffixWarning as SuffixWarning,
    build_tool_suffix as build_tool_suffix,
    served_tool as served_tool,
)
from .suffix_drift import SuffixDrift as SuffixDrift
from .suffix_store import (
    LEGACY_BACKUP as LEGACY_BACKUP,
    LEGACY_FILE as LEGACY_FILE,
    UNREADABLE_TAG as UNREADABLE_TAG,
    SuffixMode as SuffixMode,
    SuffixStore as SuffixStore,
)
