"""The agent's search: the harness that resolves a database and searches it as the agent does, the
agent's scope, nearest and similar entries, would-the-agent-see, preloading and health.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui.core.base.face import lazy_face

if TYPE_CHECKING:
    from recall_gui.core.search.agent_scope import ViewScope, agent_scope_of, differences, same_search
    from recall_gui.core.search.documents import (
        Document,
        DocumentLayout,
        DocumentShare,
        LayoutChoices,
        detect_layout,
        document_of,
        layout_choices,
        results_by_document,
    )
    from recall_gui.core.search.harness import (
        AGENT_COLUMNS,
        Harness,
        SearchReport,
        parse_arguments,
        parse_limit,
    )
    from recall_gui.core.search.health import CHECKS, DatabaseHealth, HealthProblem, check_health
    from recall_gui.core.search.health_scan import HEALTH_KINDS, HealthReport, health_report
    from recall_gui.core.search.method_comparison import compare_lists
    from recall_gui.core.search.nearest import prepare
    from recall_gui.core.search.preloading import preload
    from recall_gui.core.search.similar import FoundEntry, find_entry, more_like, similar_json
    from recall_gui.core.search.visibility import AgentVerdict, Visibility, in_result, would_agent_see
    from recall_gui.core.search.word_search import text_search

__all__ = [
    "AGENT_COLUMNS",
    "CHECKS",
    "HEALTH_KINDS",
    "AgentVerdict",
    "DatabaseHealth",
    "Document",
    "DocumentLayout",
    "DocumentShare",
    "FoundEntry",
    "Harness",
    "HealthProblem",
    "HealthReport",
    "LayoutChoices",
    "SearchReport",
    "ViewScope",
    "Visibility",
    "agent_scope_of",
    "check_health",
    "compare_lists",
    "detect_layout",
    "differences",
    "document_of",
    "find_entry",
    "health_report",
    "in_result",
    "layout_choices",
    "more_like",
    "parse_arguments",
    "parse_limit",
    "preload",
    "prepare",
    "results_by_document",
    "same_search",
    "similar_json",
    "text_search",
    "would_agent_see",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "agent_scope": (
                "ViewScope",
                "agent_scope_of",
                "differences",
                "same_search",
            ),
            "documents": (
                "Document",
                "DocumentLayout",
                "DocumentShare",
                "LayoutChoices",
                "detect_layout",
                "document_of",
                "layout_choices",
                "results_by_document",
            ),
            "harness": (
                "AGENT_COLUMNS",
                "Harness",
                "SearchReport",
                "parse_arguments",
                "parse_limit",
            ),
            "health": (
                "CHECKS",
                "DatabaseHealth",
                "HealthProblem",
                "check_health",
            ),
            "health_scan": (
                "HEALTH_KINDS",
                "HealthReport",
                "health_report",
            ),
            "method_comparison": ("compare_lists",),
            "nearest": ("prepare",),
            "preloading": ("preload",),
            "similar": (
                "FoundEntry",
                "find_entry",
                "more_like",
                "similar_json",
            ),
            "visibility": (
                "AgentVerdict",
                "Visibility",
                "in_result",
                "would_agent_see",
            ),
            "word_search": ("text_search",),
        },
    )
