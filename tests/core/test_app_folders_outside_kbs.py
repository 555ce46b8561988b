"""The app's own folders never inside a knowledge base: ``RECALL_GUI_CACHE_DIR``,
``RECALL_GUI_AGENT_LOG_DIR``, ``RECALL_GUI_DATA_DIR`` or ``RECALL_GUI_CONFIG_DIR`` set inside a LanceDB
table or database folder is refused in one line before anything is written (the cache's ``vectors/`` and
``lance-arithmetic.json``, the agent log, went into the knowledge base)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recall_gui.core.base.errors import SettingsError
from recall_gui.core.base.output_paths import refuse_folders_in_knowledge_bases
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, snapshot_tree

SETTINGS = (
    "RECALL_GUI_CACHE_DIR",
    "RECALL_GUI_AGENT_LOG_DIR",
    "RECALL_GUI_DATA_DIR",
    "RECALL_GUI_CONFIG_DIR",
)


def places(kb: KnowledgeBase) -> dict[str, tuple[Path, str]]:
    """Folders inside the knowledge base, and how the refusal places each."""
    table = kb.db_dir / f"{kb.name}.lance"
    return {
        "a new folder in the table": (table / "cache", f"lies inside the LanceDB table {table}"),
        "the table's folder": (table, f"is the LanceDB table {table}"),
        "the database folder": (kb.db_dir, "is a LanceDB database folder"),
        "a new folder in the database folder": (
            kb.db_dir / "log",
            f"lies in the LanceDB database folder {kb.db_dir}",
        ),
        "deeper in the database folder": (
            kb.db_dir / "a" / "b",
            f"lies in the LanceDB database folder {kb.db_dir}",
        ),
    }


@pytest.mark.parametrize("setting", SETTINGS)
def test_each_setting_inside_a_knowledge_base_is_refused_naming_it(kb: KnowledgeBase, setting: str) -> None:
    for name, (folder, said) in places(kb).items():
        with pytest.raises(SettingsError) as refused:
            refuse_folders_in_knowledge_bases({setting: str(folder)})
        assert (
            refused.value.message
            == f"{setting}={folder} {said}, and the app never writes into a knowledge base"
        ), name


def test_folders_beside_a_knowledge_base_are_fine(kb: KnowledgeBase, tmp_path: Path) -> None:
    beside = {setting: str(kb.db_dir.parent / setting.lower()) for setting in SETTINGS}
    refuse_folders_in_knowledge_bases(beside)  # the knowledge base's neighbours, not inside it
    refuse_folders_in_knowledge_bases({})


@pytest.mark.process
def test_commands_refuse_it_before_writing_anything(kb: KnowledgeBase, tmp_path: Path) -> None:
    golden = tmp_path / "golden.json"
    check = {"db_name": kb.name, "query": "How do I change my password?", "expect": ["pw-reset"], "limit": 3}
    golden.write_text(json.dumps({"checks": [check]}), encoding="utf-8")
    table = kb.db_dir / f"{kb.name}.lance"
    before = snapshot_tree(kb.db_dir)
    runs = {  # a check keeps the table's vectors in the cache; the server logs calls
        "RECALL_GUI_CACHE_DIR": (table, ("check", "--registry", str(kb.registry_dir), str(golden))),
        "RECALL_GUI_AGENT_LOG_DIR": (table, ("mcp", "--registry", str(kb.registry_dir))),
        "RECALL_GUI_DATA_DIR": (kb.db_dir / "data", ("demo",)),
        "RECALL_GUI_CONFIG_DIR": (
            kb.db_dir,
            ("search", "--registry", str(kb.registry_dir), "--db", kb.name, "x"),
        ),
    }
    for setting, (folder, command) in runs.items():
        done = cli(*command, env={setting: str(folder)})
        said = dict(places(kb).values()).get(folder) or f"lies in the LanceDB database folder {kb.db_dir}"
        assert done.returncode == 1 and done.stdout == "", (setting, done.stderr)
        assert done.stderr.splitlines() == [
            f"error: {setting}={folder} {said}, and the app never writes into a knowledge base",
            f"hint: Set {setting} to a folder outside every knowledge base, or leave it unset.",
        ], setting
    assert snapshot_tree(kb.db_dir) == before
