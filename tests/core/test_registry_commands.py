"""``recall-gui activate``, ``deactivate`` and ``unregister``: the registry by hand, every other entry and
unknown field kept as it was, an unknown name refused, the knowledge base's folder never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recall_gui.cli import main
from recall_gui.core.registry.registry import load_registry
from tests.kbtools import KnowledgeBase, cosh_entry, snapshot_tree, write_registry

# A registry as cosh writes it (serde_json's pretty form), with keys recall-gui does not know.
DBS_TEXT = """{
  "dbs": [
    {
      "name": "alpha",
      "uri": "/data/alpha",
      "description": "Alpha — notes",
      "embedder": {
        "Local": {
          "model": "AllMiniLML6V2"
        }
      },
      "created_at": 1760000000000,
      "owner": {
        "team": "search",
        "tags": [
          "x",
          1,
          null
        ]
      }
    },
    {
      "name": "beta",
      "uri": "/data/beta",
      "description": "Beta",
      "embedder": {
        "Local": {
          "model": "AllMiniLML6V2"
        }
      },
      "created_at": 1760000000001
    },
    {
      "name": "gamma",
      "uri": "/data/gamma",
      "description": "Gamma",
      "embedder": {
        "Cloud": {
          "provider": "openai",
          "model": "text-embedding-3-small"
        }
      },
      "created_at": 1760000000002,
      "future_key": 12345678901234567890123456789
    }
  ],
  "schema": 2
}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    directory = tmp_path / "registry"
    directory.mkdir()
    (directory / "rag_dbs.json").write_text(DBS_TEXT, encoding="utf-8")
    (directory / "rag_active.json").write_text('["alpha", "gamma"]', encoding="utf-8")
    return directory


def test_activate_and_deactivate_change_only_the_active_list(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dbs = registry / "rag_dbs.json"
    before = dbs.read_bytes()
    code, out, _err = run(capsys, "activate", "beta", "--registry", str(registry))
    assert code == 0
    assert out == f'"beta" is now active: agents can search it ({registry / "rag_active.json"})\n'
    assert json.loads((registry / "rag_active.json").read_text()) == ["alpha", "gamma", "beta"]
    code, out, _err = run(capsys, "deactivate", "alpha", "--registry", str(registry))
    assert code == 0 and '"alpha" is now inactive: agents cannot search it' in out
    assert json.loads((registry / "rag_active.json").read_text()) == ["gamma", "beta"]
    assert dbs.read_bytes() == before
    assert [db.name for db in load_registry(registry).active] == ["beta", "gamma"]


def test_activating_an_active_database_writes_nothing(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot_tree(registry)
    inode = (registry / "rag_active.json").stat().st_ino
    code, out, _err = run(capsys, "activate", "alpha", "--registry", str(registry))
    assert code == 0 and out.startswith('"alpha" was already active') and "is unchanged" in out
    code, out, _err = run(capsys, "deactivate", "beta", "--registry", str(registry))
    assert code == 0 and out.startswith('"beta" was already inactive')
    assert snapshot_tree(registry) == before
    assert (registry / "rag_active.json").stat().st_ino == inode


@pytest.mark.parametrize("command", ["activate", "deactivate", "unregister"])
def test_an_unknown_name_is_refused_naming_the_registry_file(
    registry: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    before = snapshot_tree(registry)
    code, out, err = run(capsys, command, "delta", "--registry", str(registry))
    assert code == 1 and out == ""
    first, hint = err.splitlines()
    assert first == f'error: no database called "delta" in {registry / "rag_dbs.json"}'
    assert hint.startswith("hint: ") and "recall-gui list" in hint
    assert snapshot_tree(registry) == before


def test_a_name_only_in_the_active_list_is_not_a_registered_database(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (registry / "rag_active.json").write_text('["alpha", "ghost"]', encoding="utf-8")
    code, _out, err = run(capsys, "activate", "ghost", "--registry", str(registry))
    assert code == 1 and 'no database called "ghost"' in err


def test_unregister_removes_one_entry_and_keeps_the_rest_byte_for_byte(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(capsys, "unregister", "beta", "--registry", str(registry))
    assert code == 0
    assert out == (
        f'unregistered "beta" from {registry / "rag_dbs.json"}; its knowledge base at /data/beta was not '
        "touched\n"
    )
    text = DBS_TEXT
    start = text.index('    {\n      "name": "beta"')
    end = text.index('    {\n      "name": "gamma"')
    assert (registry / "rag_dbs.json").read_text(encoding="utf-8") == text[:start] + text[end:]
    assert json.loads((registry / "rag_active.json").read_text()) == ["alpha", "gamma"]


def test_unregister_an_active_database_removes_it_from_the_active_list(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(capsys, "unregister", "alpha", "--registry", str(registry))
    assert code == 0 and "(it was active)" in out
    assert json.loads((registry / "rag_active.json").read_text()) == ["gamma"]
    loaded = load_registry(registry)
    assert [db.name for db in loaded.databases] == ["beta", "gamma"] and loaded.problems == ()


def test_unregister_never_touches_the_knowledge_base(
    kb: KnowledgeBase, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot_tree(kb.db_dir)
    code, _out, _err = run(capsys, "unregister", kb.name, "--registry", str(kb.registry_dir))
    assert code == 0
    assert load_registry(kb.registry_dir).databases == ()
    assert snapshot_tree(kb.db_dir) == before


def test_register_inactive_points_to_activate_which_lets_agents_search_it(
    kb: KnowledgeBase, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registry = write_registry(tmp_path / "other", [cosh_entry("first", tmp_path / "nowhere")])
    argv = ("register", str(kb.db_dir), "--name", "later", "--table", kb.name, "--inactive")
    code, out, err = run(capsys, *argv, "--registry", str(registry))
    assert code == 0, err
    assert "inactive: agents cannot search it until `recall-gui activate later`" in out
    assert [db.name for db in load_registry(registry).active] == ["first"]
    code, _out, err = run(capsys, "activate", "later", "--registry", str(registry))
    assert code == 0, err
    assert [db.name for db in load_registry(registry).active] == ["first", "later"]


def test_a_registry_folder_that_does_not_exist_is_refused_and_not_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    for command in ("activate", "unregister"):
        code, _out, err = run(capsys, "--registry", str(missing), command, "alpha")
        assert code == 1 and f'no database called "alpha" in {missing / "rag_dbs.json"}' in err
    assert not missing.exists()


def test_the_registry_option_before_the_command_is_honoured(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(capsys, "--registry", str(registry), "deactivate", "gamma")
    assert code == 0, err
    assert json.loads((registry / "rag_active.json").read_text()) == ["alpha"]
