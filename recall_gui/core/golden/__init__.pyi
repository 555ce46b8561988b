"""The names of :mod:`recall_gui.core.golden` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

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
from .expected import expected_by_sha as expected_by_sha, expected_of as expected_of
from .golden import (
    CheckKey as CheckKey,
    GoldenCheck as GoldenCheck,
    GoldenFile as GoldenFile,
    default_checks_dir as default_checks_dir,
    edit_golden as edit_golden,
    edited as edited,
    parse_golden as parse_golden,
    read_golden as read_golden,
    refuse_bad_version as refuse_bad_version,
    write_golden as write_golden,
)
from .junit_report import write_junit as write_junit
from .shadowing import (
    Shadowing as Shadowing,
    copies_of_earlier as copies_of_earlier,
    crowding_text as crowding_text,
    find_shadowing as find_shadowing,
    with_crowding as with_crowding,
)
