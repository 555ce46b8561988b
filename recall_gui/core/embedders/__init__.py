"""Turning text into vectors: cosh's local models as this machine serves them (cosh's own file through
fastembed, the published float32 weights through ONNX Runtime, or a stand-in), cloud providers, and the pool
that owns them.

Front ends use only the names of its face (``__init__.pyi``: what a model is, the catalog of local models,
bringing one here), never its modules; the rest is the core's.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
