"""cosh's registry files: read tolerantly, saved atomically, never clobbered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recall_gui.core.base.errors import RegistryError
from recall_gui.core.base.paths import resolve_registry_dir
from recall_gui.core.base.tool import DEFAULT_DESCRIPTION
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_changes import set_active, set_description
from recall_gui.core.registry.registry_types import EmbedderSpec
from recall_gui.core.registry.suffix import build_tool_suffix, served_tool
from recall_gui.core.registry.suffix_store import SuffixMode, SuffixStore
from tests.kbtools import cosh_entry, write_registry


def cloud_entry(name: str, provider: str, model: str) -> dict[str, object]:
    return {
        "name": name,
        "uri": f"/data/{name}",
        "description": f"{name} docs",
        "embedder": {"Cloud": {"provider": provider, "model": model}},
        "created_at": 1,
    }


def test_reads_cosh_files(tmp_path: Path) -> None:
    write_registry(tmp_path, [cosh_entry("a", "/x/a"), cosh_entry("b", "/x/b")], active=["b"])
    registry = load_registry(tmp_path)
    assert [db.name for db in registry.databases] == ["a", "b"]
    assert [db.name for db in registry.active] == ["b"]
    assert registry.get("a") is not None
    assert registry.get("a").embedder == EmbedderSpec("local", "AllMiniLML6V2")  # type: ignore[union-attr]
    assert registry.problems == ()


def test_missing_files_mean_an_empty_registry_without_problems(tmp_path: Path) -> None:
    registry = load_registry(tmp_path / "nothing-here")
    assert registry.databases == ()
    assert registry.problems == ()


def test_invalid_json_is_reported_with_file_and_position(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "rag_dbs.json").write_text('{"dbs": [\n  {"name": "a",,}\n]}', encoding="utf-8")
    registry = load_registry(tmp_path)
    assert registry.databases == ()
    (problem,) = registry.problems
    assert problem.file == tmp_path / "rag_dbs.json"
    assert "line 2 column" in problem.message


def test_a_bad_entry_is_skipped_and_the_rest_is_used(tmp_path: Path) -> None:
    entries = [cosh_entry("good", "/x"), {"name": "bad", "uri": 42}, cosh_entry("good", "/y")]
    write_registry(tmp_path, entries, active=["good"])
    registry = load_registry(tmp_path)
    assert [db.name for db in registry.databases] == ["good"]
    assert registry.databases[0].uri == "/x"
    messages = " | ".join(p.message for p in registry.problems)
    assert "entry 2 skipped" in messages and '"uri"' in messages
    assert 'duplicate name "good"' in messages


def test_active_name_missing_from_dbs_is_reported(tmp_path: Path) -> None:
    write_registry(tmp_path, [cosh_entry("a", "/x")], active=["a", "ghost"])
    problems = load_registry(tmp_path).problems
    assert any('"ghost" is not in rag_dbs.json' in p.message for p in problems)


def test_optional_keys_cosh_ignores_are_read(tmp_path: Path) -> None:
    entry = {
        **cosh_entry("lc", "/x"),
        "table": "vectors",
        "id_column": "doc_id",
        "content_column": "text",
        "vector_column": "embedding",
        "metric": "Cosine",
        "storage_options": {"region": "eu-west-1"},
    }
    write_registry(tmp_path, [entry])
    db = load_registry(tmp_path).databases[0]
    assert db.table_name == "vectors"
    assert (db.columns.id, db.columns.content, db.columns.vector) == ("doc_id", "text", "embedding")
    assert db.metric == "cosine"
    assert db.storage_options == {"region": "eu-west-1"}


def test_set_description_keeps_unknown_fields_and_other_entries(tmp_path: Path) -> None:
    first = {**cosh_entry("a", "/x"), "future_field": {"nested": [1, 2]}}
    write_registry(tmp_path, [first, cosh_entry("b", "/y")])
    set_description(tmp_path, "a", "new text ✓")
    data = json.loads((tmp_path / "rag_dbs.json").read_text(encoding="utf-8"))
    assert data["dbs"][0] == {**first, "description": "new text ✓"}
    assert data["dbs"][1] == cosh_entry("b", "/y")
    assert load_registry(tmp_path).get("a").description == "new text ✓"  # type: ignore[union-attr]


def test_saving_is_pretty_json_like_cosh(tmp_path: Path) -> None:
    write_registry(tmp_path, [cosh_entry("a", "/x")])
    set_description(tmp_path, "a", "d")
    text = (tmp_path / "rag_dbs.json").read_text(encoding="utf-8")
    assert text.startswith('{\n  "dbs": [\n    {\n      "name": "a",')


def test_a_file_that_fails_to_parse_is_never_overwritten(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    broken = '{"dbs": [ {"name": "a", "uri": "/x"'
    (tmp_path / "rag_dbs.json").write_text(broken, encoding="utf-8")
    (tmp_path / "rag_active.json").write_text("[oops", encoding="utf-8")
    with pytest.raises(RegistryError, match=r"not saved: .*rag_dbs\.json"):
        set_description(tmp_path, "a", "changed")
    with pytest.raises(RegistryError, match=r"not saved: .*rag_active\.json"):
        set_active(tmp_path, "a", True)
    assert (tmp_path / "rag_dbs.json").read_text(encoding="utf-8") == broken
    assert (tmp_path / "rag_active.json").read_text(encoding="utf-8") == "[oops"


def test_set_active_adds_and_removes_keeping_order(tmp_path: Path) -> None:
    write_registry(tmp_path, [cosh_entry(n, "/x") for n in "abc"], active=["c", "a"])
    set_active(tmp_path, "b", True)
    assert json.loads((tmp_path / "rag_active.json").read_text()) == ["c", "a", "b"]
    set_active(tmp_path, "c", False)
    assert json.loads((tmp_path / "rag_active.json").read_text()) == ["a", "b"]


def test_saving_merges_with_changes_made_by_another_program(tmp_path: Path) -> None:
    write_registry(tmp_path, [cosh_entry("a", "/x")])
    snapshot = load_registry(tmp_path)
    # cosh adds a database while the app has the old snapshot.
    write_registry(tmp_path, [cosh_entry("a", "/x"), cosh_entry("new", "/n")])
    assert snapshot.changed_on_disk()
    set_description(tmp_path, "a", "edited")
    names = [db.name for db in load_registry(tmp_path).databases]
    assert names == ["a", "new"]


def test_set_description_of_a_vanished_database_is_refused(tmp_path: Path) -> None:
    write_registry(tmp_path, [cosh_entry("a", "/x")])
    with pytest.raises(RegistryError, match=r'"zzz" is no longer in rag_dbs\.json'):
        set_description(tmp_path, "zzz", "text")


def test_generated_suffix_follows_cosh_exactly(tmp_path: Path) -> None:
    entries = [
        cosh_entry("docs", "/data/docs", "Project docs"),
        cloud_entry("api", "openai", "text-embedding-3-small"),
        cosh_entry("off", "/data/off"),
    ]
    write_registry(tmp_path, entries, active=["api", "docs"])
    assert build_tool_suffix(load_registry(tmp_path)) == (
        "Available databases:\n\n"
        "- Name: docs\n  Description: Project docs\n  DB URI: /data/docs\n"
        "  Embedding: All-MiniLM-L6-v2 (384d)\n\n"
        "- Name: api\n  Description: api docs\n  DB URI: /data/api\n"
        "  Embedding: openai / text-embedding-3-small (1536d)\n\n"
    )


def test_a_quantized_model_is_named_so_but_the_suffix_prints_coshs_label(tmp_path: Path) -> None:
    write_registry(tmp_path, [cosh_entry("q", "/data/q", "Quantized", model="AllMiniLML6V2Q")])
    registry = load_registry(tmp_path)
    assert registry.databases[0].embedder.label == "All-MiniLM-L6-v2 (384d, quantized)"
    assert "  Embedding: All-MiniLM-L6-v2 (384d)\n" in build_tool_suffix(registry)  # cosh prints that
    assert EmbedderSpec("local", "AllMiniLML6V2").label == "All-MiniLM-L6-v2 (384d)"
    gemma = EmbedderSpec("local", "EmbeddingGemma300MQ4").label
    assert gemma == "EmbeddingGemma-300M (3584d, 4-bit quantized)"


def test_every_quantized_variant_is_told_apart_from_its_model() -> None:
    from recall_gui.core.registry.models import LOCAL_MODELS

    labels = [EmbedderSpec("local", name).label for name in LOCAL_MODELS]
    assert len(set(labels)) == len(labels)
    quantized = [name for name in LOCAL_MODELS if name.endswith(("Q", "Q4"))]
    assert len(quantized) == 17  # DESIGN.md §6: every "...Q" and "...Q4" name cosh knows
    assert all("quantized" in EmbedderSpec("local", name).label for name in quantized)


def test_suffix_with_none_active(tmp_path: Path) -> None:
    write_registry(tmp_path, [cosh_entry("a", "/x")], active=[])
    assert build_tool_suffix(load_registry(tmp_path)) == "Available databases:\n\n(none active)\n"


def test_unknown_cloud_model_is_labelled_as_cosh_does() -> None:
    assert EmbedderSpec("cloud", "my-model", "ollama").label == "ollama / my-model (384d)"
    assert EmbedderSpec("cloud", "my-model", "ollama").dim is None


def test_saved_notes_live_in_the_config_dir_never_beside_the_registry(tmp_path: Path) -> None:
    write_registry(tmp_path / "reg", [cosh_entry("a", "/x")])
    before = sorted(path.name for path in (tmp_path / "reg").iterdir())
    registry = load_registry(tmp_path / "reg")
    store = SuffixStore(tmp_path / "config")
    store.save(SuffixMode.NOTES, "My own words about a.", "")
    assert served_tool(registry, store).tool.description == (
        DEFAULT_DESCRIPTION + "\n\n" + build_tool_suffix(registry) + "My own words about a."
    )
    assert sorted(path.name for path in (tmp_path / "reg").iterdir()) == before
    assert [path.name for path in (tmp_path / "config").iterdir()] == ["tool_notes.txt"]


def test_registry_location_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_registry_dir().source == "app"
    cosh = tmp_path / "xdg" / "cosh"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    write_registry(cosh, [cosh_entry("a", "/x")])
    assert resolve_registry_dir().directory == cosh
    monkeypatch.setenv("RECALL_REGISTRY_DIR", str(tmp_path / "env"))
    assert resolve_registry_dir().directory == tmp_path / "env"
    assert resolve_registry_dir(tmp_path / "flag").directory == tmp_path / "flag"


def test_a_registry_larger_than_one_sorting_piece_lists_every_database_by_name(tmp_path: Path) -> None:
    rng = __import__("random").Random(7)
    names = [f"kb-{rng.randrange(10**9):09d}-{number}" for number in range(9_000)]  # three pieces of 4,096
    active = names[::3]
    registry_dir = write_registry(tmp_path / "registry", [cosh_entry(n, tmp_path / n) for n in names], active)
    listed = [entry.name for entry in load_registry(registry_dir).by_activity]
    assert listed == sorted(active) + sorted(set(names) - set(active))


def test_a_database_added_elsewhere_than_coshs_registry_is_offered_by_the_mcp_server_only(
    tmp_path: Path,
) -> None:
    from recall_gui.core.base.paths import RegistryLocation, cosh_registry_dir
    from recall_gui.core.registry.registry_advice import offered_by

    assert offered_by(RegistryLocation(cosh_registry_dir(), "cosh")).startswith("cosh and `recall-gui mcp`")
    elsewhere = offered_by(RegistryLocation(tmp_path / "team-registry", "--registry"))
    assert elsewhere == (
        "`recall-gui mcp` offers it from its next tool listing when it reads this registry; cosh does not "
        "read this registry, only its own."
    )


def test_a_registry_still_being_rewritten_is_read_again_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read that finds a problem while another program keeps rewriting the files tries again, at most
    READ_ATTEMPTS times in all, and then reports what it found."""
    from recall_gui.core.registry import registry as registry_module
    from recall_gui.core.registry.registry_types import Registry

    registry_dir = write_registry(
        tmp_path / "registry", [cosh_entry("notes", tmp_path / "kb"), {"name": 7}], active=["notes"]
    )
    reads: list[Path] = []
    load_once = registry_module._load_once

    def counted(directory: Path, previous: Registry | None = None) -> Registry:
        reads.append(directory)
        return load_once(directory, previous)

    monkeypatch.setattr(registry_module, "_load_once", counted)
    assert load_registry(registry_dir).problems  # the files stand still: one read
    assert len(reads) == 1
    monkeypatch.setattr(Registry, "changed_on_disk", lambda _self: True)  # another program at work
    found = load_registry(registry_dir)
    assert len(reads) == 1 + 3 and registry_module.READ_ATTEMPTS == 3
    assert 'entry 2 skipped: "name" must be a non-empty string' in [
        problem.message for problem in found.problems
    ]
