"""Turning text into vectors: the local fastembed models, cloud providers and the pool that owns them.

No front end uses its modules directly: the core reaches them.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
