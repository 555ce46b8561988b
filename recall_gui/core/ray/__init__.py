"""Whole-table jobs on Ray (the ``scale`` extra): a cluster started or joined and watched, near-duplicates
partition by partition, the reach report's ranking block by block, each database's golden checks as one
task; each gives the local engine's answer. Only this part needs Ray; the others never import it.

The names the window, the CLI and the MCP server use; the modules behind them are internal.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
