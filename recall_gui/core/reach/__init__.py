"""What the agent's search reaches: the entries it returns for a large share of all queries (hubs), and
the entries their own query cannot reach, with the cause (docs/REACH.md).

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
