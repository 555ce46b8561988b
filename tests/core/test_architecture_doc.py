"""docs/ARCHITECTURE.md names every part of the house that pyproject's contracts name (they cannot drift)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def contract(name: str) -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == name)


def layer_names(name: str) -> list[str]:
    layers = contract(name)["layers"]
    assert isinstance(layers, list)
    return [part.strip() for row in layers for part in row.split("|")]


def named_in_architecture() -> set[str]:
    text = (ROOT / "docs/ARCHITECTURE.md").read_text(encoding="utf-8")
    return set(re.findall(r"`([a-z_]+)/?`", text))


def test_every_core_layer_is_named_in_the_architecture_document() -> None:
    names = layer_names("The core's layers")
    assert "golden" in names and "base" in names  # the contract is the one over subpackages
    assert sorted(set(names) - named_in_architecture()) == []


def test_every_window_layer_is_named_in_the_architecture_document() -> None:
    assert sorted(set(layer_names("The window's layers")) - named_in_architecture()) == []


def test_every_part_of_a_split_page_or_window_is_named_in_the_architecture_document() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    parts = [c["name"] for c in config["tool"]["importlinter"]["contracts"] if c["name"].endswith("'s parts")]
    assert "The knowledge page's parts" in parts and len(parts) >= 5  # the window's and its pages' parts
    unnamed = {name: sorted(set(layer_names(name)) - named_in_architecture()) for name in parts}
    assert {name: missing for name, missing in unnamed.items() if missing} == {}


def test_every_core_subpackage_has_a_layer() -> None:
    packages = {p.parent.name for p in (ROOT / "recall_gui/core").glob("*/__init__.py")}
    assert sorted(packages - set(layer_names("The core's layers"))) == []


def test_at_most_twelve_modules_stay_loose_in_the_core() -> None:
    loose = [p.stem for p in (ROOT / "recall_gui/core").glob("*.py") if p.stem != "__init__"]
    assert len(loose) <= 12, loose


def module_table() -> dict[str, set[str]]:
    """The module table's rows: each part (``agents``, or ``loose``) and the modules its row names."""
    text = (ROOT / "docs/ARCHITECTURE.md").read_text(encoding="utf-8")
    named: dict[str, set[str]] = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != 4 or not cells[0].isdigit():
            continue
        parts = re.findall(r"`([a-z_]+)/`", cells[1])
        for part in parts or ["loose"]:
            modules = cells[3] if parts else cells[1]
            named[part] = set(re.findall(r"`([a-z_]+)`", modules))
    return named


def test_the_module_table_names_every_module_of_the_core_and_no_other() -> None:
    named = module_table()
    for package in sorted((ROOT / "recall_gui/core").glob("*/__init__.py")):
        modules = {p.stem for p in package.parent.glob("*.py")} - {"__init__"}
        assert named.get(package.parent.name) == modules, package.parent.name
    loose = {p.stem for p in (ROOT / "recall_gui/core").glob("*.py")} - {"__init__"}
    assert named["loose"] == loose
