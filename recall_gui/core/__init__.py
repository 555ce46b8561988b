"""The Qt-free core of recall-gui: what every front end (window, CLI, MCP server) calls.

Its parts are subpackages, each behind its face (``recall_gui/core/<part>/__init__.pyi``: the names front
ends use). Every name, and every part, is loaded on first use (``lazy_loader``), so importing the core
stays cheap and the window opens fast: ``from recall_gui import core`` ... ``core.search.check_health``.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
