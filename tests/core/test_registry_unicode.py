"""Registry text that is not Unicode: a lone surrogate written as a JSON escape (``"\\ud800"``).

Python's JSON reader accepts it, but no UTF-8 writer can take it (stdout, a JSON answer, the file
itself), so it is stopped where it enters: an entry whose name or settings hold one is skipped as a
registry problem, a description holding one is reported and used with U+FFFD in its place, and the
files are saved with every other entry exactly as found. The same for a number with more digits than
Python reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.base.errors import RegistryError
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_changes import set_active, set_description
from recall_gui.core.registry.registry_types import Registry
from recall_gui.core.registry.suffix import build_tool_suffix
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, cosh_entry

LONE = "\ud800"


def write_raw(directory: Path, entries: list[Any], active: list[Any]) -> Path:
    """The files as another program could write them: ``json.dumps`` escapes a lone surrogate."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "rag_dbs.json").write_text(json.dumps({"dbs": entries}, indent=2), encoding="ascii")
    (directory / "rag_active.json").write_text(json.dumps(active), encoding="ascii")
    return directory


def assert_all_unicode(registry: Registry) -> None:
    """Everything the registry hands on can be written as UTF-8."""
    for entry in registry.databases:
        for text in (entry.name, entry.uri, entry.description, entry.embedder.label, entry.table_name):
            text.encode("utf-8")
    for problem in registry.problems:
        str(problem).encode("utf-8")
    build_tool_suffix(registry).encode("utf-8")


def test_a_name_that_is_not_unicode_skips_its_entry_naming_the_entry_number(tmp_path: Path) -> None:
    write_raw(tmp_path, [cosh_entry(f"bad{LONE}name", "/x"), cosh_entry("good", "/y")], ["good"])
    registry = load_registry(tmp_path)
    assert [db.name for db in registry.databases] == ["good"]
    (problem,) = registry.problems
    assert "entry 1 skipped" in problem.message
    assert '"name"' in problem.message and "not valid Unicode" in problem.message
    assert "bad\\ud800name" in problem.message  # shown escaped, so the user can find it
    assert_all_unicode(registry)


def test_a_description_that_is_not_unicode_is_reported_and_used_with_a_replacement(tmp_path: Path) -> None:
    write_raw(tmp_path, [cosh_entry("notes", "/x", f"team{LONE} notes")], ["notes"])
    registry = load_registry(tmp_path)
    (entry,) = registry.databases
    assert entry.description == "team\ufffd notes"
    assert entry.active
    (problem,) = registry.problems
    assert 'database "notes": "description"' in problem.message
    assert "U+FFFD" in problem.message
    assert "Description: team\ufffd notes" in build_tool_suffix(registry)
    assert_all_unicode(registry)


def _with(field: str) -> dict[str, Any]:
    entry = cosh_entry("notes", "/x")
    if field == "embedder model":
        entry["embedder"] = {"Local": {"model": f"AllMiniLML6V2{LONE}"}}
    elif field == "cloud provider":
        entry["embedder"] = {"Cloud": {"provider": f"open{LONE}ai", "model": "m"}}
    elif field == "embedder kind":
        entry["embedder"] = {f"Lo{LONE}cal": {"model": "m"}}
    elif field == "storage option name":
        entry["storage_options"] = {f"region{LONE}": "x"}
    elif field == "storage option value":
        entry["storage_options"] = {"region": f"x{LONE}"}
    else:
        entry[field] = f"value{LONE}"
    return entry


@pytest.mark.parametrize(
    "field",
    [
        "uri",
        "table",
        "id_column",
        "content_column",
        "vector_column",
        "metric",
        "embedder model",
        "cloud provider",
        "embedder kind",
        "storage option name",
        "storage option value",
    ],
)
def test_a_setting_that_is_not_unicode_skips_its_entry(tmp_path: Path, field: str) -> None:
    write_raw(tmp_path, [_with(field), cosh_entry("good", "/y")], ["notes", "good"])
    registry = load_registry(tmp_path)
    assert [db.name for db in registry.databases] == ["good"]
    skipped = [p.message for p in registry.problems if "entry 1 skipped" in p.message]
    assert len(skipped) == 1 and "not valid Unicode" in skipped[0], registry.problems
    assert "\\ud800" in skipped[0]
    assert_all_unicode(registry)


def test_an_active_name_that_is_not_unicode_is_reported(tmp_path: Path) -> None:
    write_raw(tmp_path, [cosh_entry("good", "/y")], ["good", f"x{LONE}"])
    registry = load_registry(tmp_path)
    assert [db.name for db in registry.active] == ["good"]
    (problem,) = registry.problems
    assert problem.file == tmp_path / "rag_active.json"
    assert "x\\ud800" in problem.message
    assert_all_unicode(registry)


def test_saving_keeps_the_other_entries_exactly_as_found(tmp_path: Path) -> None:
    entries = [cosh_entry(f"bad{LONE}", "/x", f"old{LONE}"), cosh_entry("notes", "/y", f"mine{LONE}")]
    write_raw(tmp_path, entries, ["notes"])
    set_description(tmp_path, "notes", "rewritten")
    set_active(tmp_path, "notes", False)
    saved = json.loads((tmp_path / "rag_dbs.json").read_text(encoding="utf-8"))
    assert saved["dbs"][0] == entries[0]  # the escape is written back as an escape
    assert saved["dbs"][1]["description"] == "rewritten"
    assert load_registry(tmp_path).get("notes").description == "rewritten"  # type: ignore[union-attr]


def test_a_description_that_is_not_unicode_is_not_saved(tmp_path: Path) -> None:
    write_raw(tmp_path, [cosh_entry("notes", "/y")], ["notes"])
    before = (tmp_path / "rag_dbs.json").read_bytes()
    with pytest.raises(RegistryError, match=r"not saved: .*not valid Unicode") as caught:
        set_description(tmp_path, "notes", f"a{LONE}b")
    assert caught.value.hint
    assert (tmp_path / "rag_dbs.json").read_bytes() == before


@pytest.mark.process
def test_tool_and_list_print_such_a_registry_without_a_traceback(kb: KnowledgeBase) -> None:
    entries = [
        cosh_entry(f"bad{LONE}", kb.db_dir),
        cosh_entry(kb.name, kb.db_dir, f"notes{LONE}"),
    ]
    write_raw(kb.registry_dir, entries, [kb.name, f"bad{LONE}"])
    for args in (("tool",), ("list",), ("list", "--json")):
        done = cli(*args, "--registry", str(kb.registry_dir))
        # both say the registry has problems (exit 1); tool still prints what agents get
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
        assert "not valid Unicode" in done.stderr
        if args[0] == "list":
            assert kb.name in done.stdout
    tool = json.loads(cli("tool", "--registry", str(kb.registry_dir)).stdout)
    assert "Description: notes\ufffd\n" in tool["description"]
    assert "bad" not in tool["description"]


def test_numbers_too_long_to_read_are_ignored_and_written_back_unchanged(tmp_path: Path) -> None:
    """Python reads at most 4300 digits of an integer from text; a longer one raised ValueError."""
    digits = "9" * 5000
    entry = json.dumps(cosh_entry("notes", "/x")).replace(
        '"created_at": 1760000000000', f'"created_at": {digits}'
    )
    (tmp_path / "rag_dbs.json").write_text(f'{{"dbs": [{entry}], "x-count": -{digits}}}', encoding="utf-8")
    (tmp_path / "rag_active.json").write_text(f'["notes", {digits}]', encoding="utf-8")
    registry = load_registry(tmp_path)
    (db,) = registry.databases
    assert db.active and db.created_at is None
    assert [p.message for p in registry.problems] == ["entries that are not strings were ignored"]
    set_description(tmp_path, "notes", "new words")
    set_active(tmp_path, "notes", False)
    saved = (tmp_path / "rag_dbs.json").read_text(encoding="utf-8")
    assert f'"created_at": {digits}' in saved and f'"x-count": -{digits}' in saved
    assert '"description": "new words"' in saved
    assert (tmp_path / "rag_active.json").read_text(encoding="utf-8").count(digits) == 1
