"""The one place where failures become what the user reads: a message, what to do, and how serious.

Core errors already carry both texts (:class:`~recall_gui.core.base.errors.RecallError`); anything else is a
bug, reported as such with its details in the log rather than as a traceback dialog.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from recall_gui.core.base.errors import DemoBuildCancelled, RecallError

if TYPE_CHECKING:
    from recall_gui.core.registry.registry_types import RegistryProblem

log = logging.getLogger(__name__)

Level = Literal["error", "warning", "info"]
#: What a message is about, so that the right event clears it: a working search clears a search error,
#: choosing another database clears the last one's problem, but neither hides a broken registry file;
#: leaving the tool description page clears what its saving said; going to another database than the demo
#: clears the demo's welcome.
Topic = Literal["search", "database", "registry", "description", "demo", "general"]

#: Short names for failed health checks, shown beside a database in the dropdown.
HEALTH_LABELS = {
    "path": "missing folder",
    "table": "missing table",
    "model": "model unavailable",
    "dimension": "dimension mismatch",
    "columns": "columns not found",
    "search": "cannot be searched",
    "storage": "storage error",
}


@dataclass(frozen=True)
class UserMessage:
    """What the banner shows: ``text`` (what happened) and ``hint`` (what to do)."""

    text: str
    hint: str | None = None
    level: Level = "error"
    topic: Topic = "general"


def user_message(error: BaseException, topic: Topic = "general") -> UserMessage:
    """Turn any failure of an operation into a message for the banner."""
    if isinstance(error, DemoBuildCancelled):
        return UserMessage(
            "The demo knowledge base was not built.",
            "Build it any time with File ▸ Build Demo Knowledge Base, or run `recall-gui demo`.",
            "info",
        )
    if isinstance(error, RecallError):
        return UserMessage(sentence(error.message), error.hint, "error", topic)
    log.error("unexpected error", exc_info=(type(error), error, error.__traceback__))
    return UserMessage(
        f"Unexpected error: {type(error).__name__}: {error}",
        "This is a bug in recall-gui; the details are in the log. Nothing you typed was lost.",
        "error",
    )


#: How many registry problems the banner lists one by one (each names its file and position).
PROBLEMS_SHOWN = 6


def registry_problems_text(problems: Sequence[RegistryProblem]) -> str:
    """Every problem of a registry snapshot (up to :data:`PROBLEMS_SHOWN`), one per line."""
    if len(problems) == 1:
        return f"The registry has a problem: {problems[0]}"
    lines = [f"• {problem}" for problem in problems[:PROBLEMS_SHOWN]]
    if len(problems) > PROBLEMS_SHOWN:
        lines.append(f"… and {len(problems) - PROBLEMS_SHOWN} more")
    return "\n".join([f"The registry has {len(problems)} problems:", *lines])


def health_label(kind: str) -> str:
    return HEALTH_LABELS.get(kind, kind)


def sentence(text: str) -> str:
    """Core messages are lowercase, as cosh's are (agents read them); the window starts them capitalised."""
    return text[:1].upper() + text[1:] if text else text
