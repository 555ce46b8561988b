"""The names of :mod:`recall_gui.core.search` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .agent_scope import (
    ViewScope as ViewScope,
    agent_scope_of as agent_scope_of,
    differences as differences,
    same_search as same_search,
)
from .documents import (
    Document as Document,
    DocumentLayout as DocumentLayout,
    DocumentShare as DocumentShare,
    LayoutChoices as LayoutChoices,
    document_of as document_of,
    layout_choices as layout_choices,
    results_by_document as results_by_document,
)
from .harness import (
    AGENT_COLUMNS as AGENT_COLUMNS,
    Harness as Harness,
    SearchReport as SearchReport,
    model_of as model_of,
    parse_arguments as parse_arguments,
    parse_limit as parse_limit,
)
from .health import (
    CHECKS as CHECKS,
    DatabaseHealth as DatabaseHealth,
    HealthProblem as HealthProblem,
    check_health as check_health,
)
from .health_scan import (
    HEALTH_KINDS as HEALTH_KINDS,
    HealthReport as HealthReport,
    health_report as health_report,
)
from .method_comparison import compare_lists as compare_lists
from .nearest import prepare as prepare
from .preloading import preload as preload
from .similar import (
    FoundEntry as FoundEntry,
    find_entry as find_entry,
    more_like as more_like,
    similar_json as similar_json,
    split_label as split_label,
)
from .visibility import (
    AgentVerdict as AgentVerdict,
    Visibility as Visibility,
    in_result as in_result,
    would_agent_see as would_agent_see,
)
from .word_search import text_search as text_search
