"""The names of :mod:`recall_gui.core.reach` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .hubs import (
    DEFAULT_HUB_SHARE as DEFAULT_HUB_SHARE,
    CheckHubs as CheckHubs,
    HubQuery as HubQuery,
    HubReport as HubReport,
    find_hubs as find_hubs,
    hubs_from_log as hubs_from_log,
    hubs_of_checks as hubs_of_checks,
)
from .pseudo_queries import parse_rule as parse_rule
from .reach import (
    DEFAULT_DEPTH as DEFAULT_DEPTH,
    PENDING as PENDING,
    SEARCHING as SEARCHING,
    find_reach as find_reach,
)
from .reach_report import ReachReport as ReachReport, Unreachable as Unreachable, lorenz as lorenz
