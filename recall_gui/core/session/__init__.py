"""The one owner of run-time state (open tables, vectors in memory, worker pools) and the exact
search over the vectors it holds.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
