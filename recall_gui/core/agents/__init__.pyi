"""The names of :mod:`recall_gui.core.agents` (its face), for type checkers and for ``lazy_loader``:
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
from .check_comparison import (
    Comparison as Comparison,
    VersionChoice as VersionChoice,
    VersionsReport as VersionsReport,
    compare_checks as compare_checks,
    run_on_versions as run_on_versions,
)
from .check_history import (
    Change as Change,
    LastRun as LastRun,
    change_since as change_since,
    load_last_run as load_last_run,
    save_run as save_run,
)
from .check_places import check_for as check_for, folder_text as folder_text, place_text as place_text
from .checks import CheckOutcome as CheckOutcome, CheckRun as CheckRun, run_checks as run_checks
from .golden import (
    CheckKey as CheckKey,
    GoldenCheck as GoldenCheck,
    GoldenFile as GoldenFile,
    default_checks_dir as default_checks_dir,
    edit_golden as edit_golden,
    edited as edited,
    parse_golden as parse_golden,
    read_golden as read_golden,
    write_golden as write_golden,
)
from .hubs import (
    DEFAULT_HUB_SHARE as DEFAULT_HUB_SHARE,
    CheckHubs as CheckHubs,
    HubQuery as HubQuery,
    HubReport as HubReport,
    find_hubs as find_hubs,
    hubs_from_log as hubs_from_log,
    hubs_of_checks as hubs_of_checks,
)
from .junit_report import write_junit as write_junit
from .rank_changes import RankChange as RankChange, ReplayDiff as ReplayDiff
from .ray_checks import run_checks_in_ray as run_checks_in_ray, run_checks_on_ray as run_checks_on_ray
from .shadowing import (
    Shadowing as Shadowing,
    copies_of_earlier as copies_of_earlier,
    crowding_text as crowding_text,
    find_shadowing as find_shadowing,
    with_crowding as with_crowding,
)
from .pseudo_queries import parse_rule as parse_rule
from .ray_reach import find_reach_in_ray as find_reach_in_ray, rank_queries_on_ray as rank_queries_on_ray
from .reach import find_reach as find_reach
from .reach_report import ReachReport as ReachReport, Unreachable as Unreachable, lorenz as lorenz
