"""The parts of :mod:`recall_gui.core` and the seed's public names, for type checkers and for
``lazy_loader``: each is loaded on first use."""

from . import (
    agents as agents,
    base as base,
    demo as demo,
    drafts as drafts,
    embedders as embedders,
    inspect as inspect,
    messages as messages,
    registry as registry,
    review as review,
    search as search,
    session as session,
    storage as storage,
    tables as tables,
)
from .base.errors import RecallError as RecallError
from .base.tool import DEFAULT_DESCRIPTION as DEFAULT_DESCRIPTION, TOOL_NAME as TOOL_NAME, Recall as Recall
from .base.types import (
    RecallEntry as RecallEntry,
    RecallOutput as RecallOutput,
    RecallSearchInput as RecallSearchInput,
    SearchHit as SearchHit,
    SearchResult as SearchResult,
)
from .search.harness import Harness as Harness, SearchReport as SearchReport
