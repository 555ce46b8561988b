"""The core's faces (docs/ARCHITECTURE.md#faces): each serves, from its one list (``__init__.pyi``), the
names the front ends use and no other, every name is its module's own object, and the front ends reach
the core only through faces, at module level, so the cost of a name is paid where it is first used."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.probes import run_probe

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "recall_gui" / "core"
PARTS = sorted(path.parent.name for path in CORE.glob("*/__init__.py"))
FRONT_ENDS = ("recall_gui/qt", "recall_gui/cli", "recall_gui/mcp", "recall_gui/runtime.py")
#: Names a face serves to type checkers only (their module defines them under TYPE_CHECKING: an alias of
#: NumPy's types, which the core does not import to be imported).
TYPE_ONLY = {("base", "Vector")}
HEAVY = ("lancedb", "pyarrow", "numpy", "fastembed", "onnxruntime", "httpx", "mcp", "ray")


def stub_names(stub: Path) -> dict[str, str]:
    """Each name the stub lists, with the module (relative to its package) it is imported from."""
    names: dict[str, str] = {}
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 1, f"{stub}: a face imports from its own package only"
            for alias in node.names:
                assert alias.asname == alias.name, f"{stub}: write `{alias.name} as {alias.name}`"
                names[alias.name] = node.module or alias.name
    return names


def front_end_files() -> Iterator[Path]:
    for place in FRONT_ENDS:
        path = ROOT / place
        yield from [path] if path.is_file() else sorted(path.rglob("*.py"))


def used_by_front_ends() -> dict[str, set[str]]:
    """For each part, the names front ends take from its face: ``from recall_gui.core.<part> import X``
    and ``core.<part>.X``."""
    used: dict[str, set[str]] = {part: set() for part in PARTS}
    for path in front_end_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.count(".") == 2:
                _, _, part = node.module.split(".")
                if node.module.startswith("recall_gui.core.") and part in used:
                    used[part].update(alias.name for alias in node.names)
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Attribute)
                and isinstance(node.value.value, ast.Name)
                and node.value.value.id == "core"
                and node.value.attr in used
            ):
                used[node.value.attr].add(node.attr)
    return used


@pytest.mark.parametrize("part", PARTS)
def test_a_face_serves_each_name_of_its_list_as_its_modules_own_object(part: str) -> None:
    face = importlib.import_module(f"recall_gui.core.{part}")
    listed = stub_names(CORE / part / "__init__.pyi")
    assert sorted(face.__all__) == sorted(listed)
    for name, module in listed.items():
        if (part, name) in TYPE_ONLY:
            continue
        home = importlib.import_module(f"recall_gui.core.{part}.{module}")
        assert getattr(face, name) is getattr(home, name), f"{part}.{name}"


def test_a_face_serves_exactly_the_names_the_front_ends_use() -> None:
    used = used_by_front_ends()
    listed = {part: set(stub_names(CORE / part / "__init__.pyi")) for part in PARTS}
    assert {part: sorted(used[part] - listed[part]) for part in PARTS} == {part: [] for part in PARTS}
    assert {part: sorted(listed[part] - used[part]) for part in PARTS} == {part: [] for part in PARTS}


def used_from_the_core() -> set[str]:
    """The names front ends take from the core's own face: ``core.X``, ``from recall_gui.core import X``,
    and the parts and loose modules they import from (``from recall_gui.core.X import ...``)."""
    used: set[str] = set()
    for path in front_end_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "recall_gui.core":
                used.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("recall_gui.core."):
                used.add((node.module or "").split(".")[2])
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "core"
            ):
                used.add(node.attr)
    return used


def test_the_core_lists_every_part_and_loose_module() -> None:
    listed = stub_names(CORE / "__init__.pyi")
    loose = {path.stem for path in CORE.glob("*.py") if path.stem != "__init__"}
    assert set(PARTS) | loose <= set(listed)
    core = importlib.import_module("recall_gui.core")
    assert sorted(core.__all__) == sorted(listed)
    assert core.search is importlib.import_module("recall_gui.core.search")


def test_the_core_face_serves_exactly_what_the_front_ends_use() -> None:
    """Both ways, as for the parts: every name the core's face lists is used by a front end, and every
    name a front end takes from the core is listed (the parts; the front ends reach all else through them)."""
    listed = set(stub_names(CORE / "__init__.pyi"))
    used = used_from_the_core()
    assert "golden" in used and "search" in used  # the walk really read the front ends
    assert sorted(listed - used) == []
    assert sorted(used - listed) == []


def test_no_front_end_imports_the_core_inside_a_function() -> None:
    found = []
    for path in front_end_files():
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for statement in function.body:
                for node in ast.walk(statement):
                    modules = (
                        [node.module or ""]
                        if isinstance(node, ast.ImportFrom)
                        else [alias.name for alias in node.names]
                        if isinstance(node, ast.Import)
                        else []
                    )
                    if any(module.startswith("recall_gui.core") for module in modules):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


@pytest.mark.process
def test_the_command_line_loads_no_heavy_library_to_start() -> None:
    """Every command's module imported, as `recall-gui --version` and argument parsing do: the face names
    they take at module level cost nothing heavy (the window's own check: tests/qt/test_app.py)."""
    loaded = run_probe(
        "import json, sys, pkgutil, importlib, recall_gui.cli as cli\n"
        "for info in pkgutil.iter_modules(cli.__path__):\n"
        "    importlib.import_module('recall_gui.cli.' + info.name)\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    assert loaded == []


#: The embedding model's libraries; a command that embeds no query loads none of them.
MODEL_LIBRARIES = ("onnxruntime", "tokenizers", "fastembed")
#: What a command loaded: the top-level packages among these, with LanceDB's compiled module apart.
LOADED = (
    "import json, sys\n"
    "from recall_gui.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "names = {m.split('.')[0] for m in sys.modules} - {'lancedb'}\n"
    "names |= {m for m in ('lancedb', 'lancedb._lancedb') if m in sys.modules}\n"
    "print(json.dumps([code, sorted(names)]))"
)


@pytest.mark.process
@pytest.mark.parametrize(
    ("words", "allowed"),
    [
        # Neither a table nor a model: the registry and the tool description alone.
        (["tool"], ()),
        (["activate", "{name}"], ()),
        # A table's facts, through LanceDB's compiled module, whose schemas are PyArrow's (which loads
        # NumPy); never LanceDB's Python package (and pandas with it), never the model, never httpx.
        (["list"], ("lancedb._lancedb", "pyarrow", "numpy")),
        (["versions", "--db", "{name}"], ("lancedb._lancedb", "pyarrow", "numpy")),
    ],
)
def test_a_command_that_embeds_nothing_loads_no_model_and_no_more_of_lancedb_than_it_reads(
    kb: Any, words: list[str], allowed: tuple[str, ...]
) -> None:
    heavy = {*HEAVY, *MODEL_LIBRARIES, "pandas", "lancedb._lancedb"}
    arguments = [word.format(name=kb.name) for word in words] + ["--registry", str(kb.registry_dir)]
    code, loaded = run_probe(LOADED, *arguments)
    assert code == 0
    assert sorted(heavy & set(loaded)) == sorted(allowed)
