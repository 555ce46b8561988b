"""The names of :mod:`recall_gui.core.review` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .agent_join import (
    GivenEntry as GivenEntry,
    Period as Period,
    ServedReport as ServedReport,
    given_entries as given_entries,
    id_digests as id_digests,
    served_report as served_report,
    since as since,
    this_month as this_month,
    this_week as this_week,
)
from .merging import MergedFile as MergedFile, merge_files as merge_files, write_merged as write_merged
from .orders import ORDER_LABELS as ORDER_LABELS, Order as Order
from .queue import (
    ReviewQueue as ReviewQueue,
    changed_order as changed_order,
    most_given_order as most_given_order,
    not_reviewed_order as not_reviewed_order,
    table_order as table_order,
)
from .queue_sources import (
    filter_queue as filter_queue,
    near_copies_queue as near_copies_queue,
    unreachable_queue as unreachable_queue,
)
from .records import (
    FLAGGED as FLAGGED,
    JUDGED as JUDGED,
    VERDICTS as VERDICTS,
    ReviewRecord as ReviewRecord,
    parse_verdicts as parse_verdicts,
)
from .review_file import WHO_ENV as WHO_ENV, default_review_path as default_review_path
from .review_state import ChangedEntry as ChangedEntry
from .reviewing import AgentShare as AgentShare, Review as Review, open_review as open_review
from .verdict_export import export_text as export_text, verdict_table as verdict_table
