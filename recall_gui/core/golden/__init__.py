"""Golden checks: the queries an agent should answer and the entries it should get, run through the
agent's own search; their history, versions and A/B comparisons, JUnit reports, and near-copies among
the results (shadowing).

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
