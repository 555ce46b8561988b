"""What agents asked and what they should get: golden checks and their history, the agent log and
its review, agent checks and rank changes.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
