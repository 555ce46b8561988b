"""Browsing a table as the user sees it: pages, selections, versions, opened folders, the schema,
exports, model detection and registration.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
