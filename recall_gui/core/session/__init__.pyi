"""The names of :mod:`recall_gui.core.session` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .map_cache import Method as Method
from .session import Session as Session
