"""cosh's registry of databases (rag_dbs.json, rag_active.json), the advice it gives, the tool
description's suffix and its store, and the embedding models it names.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
