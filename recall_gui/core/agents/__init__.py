"""What agents asked and what they should get: golden checks and their history, the agent log and
its review, agent checks and rank changes.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui.core.base.face import lazy_face

if TYPE_CHECKING:
    from recall_gui.core.agents.agent_check import (
        DescriptionVerdict,
        WindowAnswer,
        compare_payload,
        judge_description,
    )
    from recall_gui.core.agents.agent_log import (
        SHOWN_LOG_BYTES,
        SWITCH_ENV,
        WINDOW_CLIENT,
        CallLog,
        CallRecord,
        LogContents,
        LogFiles,
        LogSwitch,
        Stamp,
        now_iso,
        parse_since,
        records_json,
        select,
        switch_from_env,
    )
    from recall_gui.core.agents.agent_review import (
        Coverage,
        coverage,
        lookup_contents,
        replay,
        rows_by_row_id,
    )
    from recall_gui.core.agents.check_comparison import (
        Comparison,
        VersionChoice,
        VersionsProgress,
        VersionsReport,
        compare_checks,
        run_on_versions,
    )
    from recall_gui.core.agents.check_history import Change, LastRun, change_since, load_last_run, save_run
    from recall_gui.core.agents.check_places import check_for, folder_text, place_text
    from recall_gui.core.agents.checks import CheckOutcome, CheckRun, run_checks
    from recall_gui.core.agents.golden import (
        CheckKey,
        GoldenCheck,
        GoldenFile,
        default_checks_dir,
        edit_golden,
        edited,
        read_golden,
        write_golden,
    )
    from recall_gui.core.agents.hubs import (
        DEFAULT_HUB_SHARE,
        CheckHubs,
        HubQuery,
        HubReport,
        find_hubs,
        hubs_from_log,
        hubs_of_checks,
    )
    from recall_gui.core.agents.junit_report import write_junit
    from recall_gui.core.agents.rank_changes import RankChange, ReplayDiff
    from recall_gui.core.agents.ray_checks import run_checks_in_ray, run_checks_on_ray
    from recall_gui.core.agents.shadowing import (
        Shadowing,
        copies_of_earlier,
        crowding_text,
        find_shadowing,
        with_crowding,
    )

__all__ = [
    "DEFAULT_HUB_SHARE",
    "SHOWN_LOG_BYTES",
    "SWITCH_ENV",
    "WINDOW_CLIENT",
    "CallLog",
    "CallRecord",
    "Change",
    "CheckHubs",
    "CheckKey",
    "CheckOutcome",
    "CheckRun",
    "Comparison",
    "Coverage",
    "DescriptionVerdict",
    "GoldenCheck",
    "GoldenFile",
    "HubQuery",
    "HubReport",
    "LastRun",
    "LogContents",
    "LogFiles",
    "LogSwitch",
    "RankChange",
    "ReplayDiff",
    "Shadowing",
    "Stamp",
    "VersionChoice",
    "VersionsProgress",
    "VersionsReport",
    "WindowAnswer",
    "change_since",
    "check_for",
    "compare_checks",
    "compare_payload",
    "copies_of_earlier",
    "coverage",
    "crowding_text",
    "default_checks_dir",
    "edit_golden",
    "edited",
    "find_hubs",
    "find_shadowing",
    "folder_text",
    "hubs_from_log",
    "hubs_of_checks",
    "judge_description",
    "load_last_run",
    "lookup_contents",
    "now_iso",
    "parse_since",
    "place_text",
    "read_golden",
    "records_json",
    "replay",
    "rows_by_row_id",
    "run_checks",
    "run_checks_in_ray",
    "run_checks_on_ray",
    "run_on_versions",
    "save_run",
    "select",
    "switch_from_env",
    "with_crowding",
    "write_golden",
    "write_junit",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_face(
        __name__,
        {
            "ray_checks": (
                "run_checks_on_ray",
                "run_checks_in_ray",
            ),
            "agent_check": (
                "DescriptionVerdict",
                "WindowAnswer",
                "compare_payload",
                "judge_description",
            ),
            "agent_log": (
                "CallLog",
                "CallRecord",
                "LogContents",
                "LogFiles",
                "LogSwitch",
                "SHOWN_LOG_BYTES",
                "SWITCH_ENV",
                "Stamp",
                "WINDOW_CLIENT",
                "now_iso",
                "parse_since",
                "records_json",
                "select",
                "switch_from_env",
            ),
            "agent_review": (
                "Coverage",
                "coverage",
                "lookup_contents",
                "replay",
                "rows_by_row_id",
            ),
            "check_comparison": (
                "Comparison",
                "VersionChoice",
                "VersionsProgress",
                "VersionsReport",
                "compare_checks",
                "run_on_versions",
            ),
            "check_history": (
                "Change",
                "LastRun",
                "change_since",
                "load_last_run",
                "save_run",
            ),
            "check_places": (
                "check_for",
                "folder_text",
                "place_text",
            ),
            "checks": (
                "CheckOutcome",
                "CheckRun",
                "run_checks",
            ),
            "golden": (
                "CheckKey",
                "GoldenCheck",
                "GoldenFile",
                "default_checks_dir",
                "edit_golden",
                "edited",
                "read_golden",
                "write_golden",
            ),
            "hubs": (
                "DEFAULT_HUB_SHARE",
                "CheckHubs",
                "HubQuery",
                "HubReport",
                "find_hubs",
                "hubs_from_log",
                "hubs_of_checks",
            ),
            "junit_report": ("write_junit",),
            "rank_changes": (
                "RankChange",
                "ReplayDiff",
            ),
            "shadowing": (
                "Shadowing",
                "copies_of_earlier",
                "crowding_text",
                "find_shadowing",
                "with_crowding",
            ),
        },
    )
