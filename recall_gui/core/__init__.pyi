"""The parts of :mod:`recall_gui.core`, for type checkers and for ``lazy_loader``: each is loaded on first
use. The front ends reach every name through a part's face, so the core's own face lists only its parts."""

from . import (
    agent_log as agent_log,
    base as base,
    demo as demo,
    drafts as drafts,
    embedders as embedders,
    golden as golden,
    inspect as inspect,
    messages as messages,
    ray as ray,
    reach as reach,
    registry as registry,
    review as review,
    search as search,
    session as session,
    storage as storage,
    tables as tables,
)
