"""Looking into a knowledge base: duplicates and near-duplicates, version diffs, projections and maps.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
