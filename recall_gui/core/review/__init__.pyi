"""The names of :mod:`recall_gui.core.review` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .agent_join import (
    ServedReport as ServedReport,
    served_report as served_report,
    since as since,
    this_month as this_month,
)
from .merging import MergedFile as MergedFile, merge_files as merge_files, write_merged as write_merged
from .records import FLAGGED as FLAGGED, VERDICTS as VERDICTS, parse_verdicts as parse_verdicts
from .review_file import WHO_ENV as WHO_ENV
from .reviewing import Review as Review, open_review as open_review
from .verdict_export import export_text as export_text, verdict_table as verdict_table
