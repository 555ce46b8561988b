"""What every other part of the core stands on: typed errors, the seed's types and tool text, paths,
atomic writes, settings, library compatibility and small text helpers.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
