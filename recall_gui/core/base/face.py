"""A subpackage's face: its public names, each loaded from its module on first use.

Importing a face stays cheap (the window opens fast, the CLI answers fast): a name's module, with the
heavy libraries it needs, is imported only when the name is first read.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_face(
    package: str, exported: dict[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, serving ``exported`` ({module: names})."""
    home = {name: module for module, names in exported.items() for name in names}

    def get(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def listing() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(home))

    return get, listing
