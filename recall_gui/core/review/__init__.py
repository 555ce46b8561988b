"""Verifying stored entries by hand: verdicts on a database's entries, kept in a review file outside the
knowledge base and matched to the table by content; the queue of entries to review, progress, and what
agents were given of the entries marked wrong or outdated.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
