"""The names of :mod:`recall_gui.core.storage` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .columns import ColumnMapping as ColumnMapping
from .content_identity import content_sha256 as content_sha256, entry_label as entry_label
from .entry_names import IdRepeats as IdRepeats
from .target import TableTarget as TableTarget, without_secrets as without_secrets
