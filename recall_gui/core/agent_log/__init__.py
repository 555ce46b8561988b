"""What agents asked and what they got: the agent log (each call recorded, the log's files written and
read), its review (a call replayed, the coverage of a table), and the Agent view's checks that what an
agent receives matches what the user sees.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
