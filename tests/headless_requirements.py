"""The requirements of the core's tests without Qt (``make test-core``): the project's dependencies and its
test and scale extras, less the window's libraries.

    python tests/headless_requirements.py           # prints them, one a line, for pip install -r
    python tests/headless_requirements.py --check   # fails if any of the window's libraries is importable
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
#: The window's libraries (distribution name -> module), which the core and tests/core must not need.
QT = {"PySide6-Essentials": "PySide6", "qasync": "qasync", "pyqtgraph": "pyqtgraph", "pytest-qt": "pytestqt"}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower()


def headless(project: dict[str, object]) -> list[str]:
    """The requirements of the project, its test and scale extras, without :data:`QT`'s."""
    spec = project["project"]
    assert isinstance(spec, dict)
    extras = spec["optional-dependencies"]
    wanted = [*spec["dependencies"], *extras["test"], *extras["scale"]]
    window = {name.lower() for name in QT}
    return [requirement for requirement in wanted if _name(requirement) not in window]


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        present = [module for module in QT.values() if importlib.util.find_spec(module) is not None]
        if present:
            print(f"the core's tests must run without Qt, yet these import: {', '.join(present)}")
            return 1
        return 0
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    print("\n".join(headless(project)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
