"""The agent's search: the harness that resolves a database and searches it as the agent does, the
agent's scope, nearest and similar entries, would-the-agent-see, preloading and health.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
