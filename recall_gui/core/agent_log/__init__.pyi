"""The names of :mod:`recall_gui.core.agent_log` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .agent_check import (
    DescriptionVerdict as DescriptionVerdict,
    WindowAnswer as WindowAnswer,
    compare_payload as compare_payload,
    judge_description as judge_description,
)
from .agent_log import (
    SHOWN_LOG_BYTES as SHOWN_LOG_BYTES,
    LogFiles as LogFiles,
    Stamp as Stamp,
    select as select,
)
from .agent_review import (
    Coverage as Coverage,
    coverage as coverage,
    lookup_contents as lookup_contents,
    named_results as named_results,
    replay as replay,
    rows_by_row_id as rows_by_row_id,
)
from .call_log import (
    SWITCH_ENV as SWITCH_ENV,
    CallLog as CallLog,
    LogSwitch as LogSwitch,
    switch_from_env as switch_from_env,
)
from .call_record import (
    WINDOW_CLIENT as WINDOW_CLIENT,
    CallRecord as CallRecord,
    now_iso as now_iso,
    parse_since as parse_since,
    records_json as records_json,
)
from .rank_changes import RankChange as RankChange, ReplayDiff as ReplayDiff
