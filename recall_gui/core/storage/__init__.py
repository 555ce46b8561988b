"""Where a knowledge base's rows live: targets (a folder or URI and a table), the cache of open
tables, and how columns and rows are read.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
