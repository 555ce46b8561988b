"""The description suffix: the generated list stays live, the user's notes follow it, an override is
explicit, a 0.1 ``tool_suffix.txt`` is read without losing a word, and a damaged file never stops serving."""

from __future__ import annotations

from pathlib import Path

import pytest

from recall_gui.core.base.errors import SettingsError
from recall_gui.core.base.tool import DEFAULT_DESCRIPTION
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_changes import set_active, set_description
from recall_gui.core.registry.registry_types import Registry
from recall_gui.core.registry.suffix import build_tool_suffix, served_tool
from recall_gui.core.registry.suffix_drift import suffix_drift
from recall_gui.core.registry.suffix_store import (
    LEGACY_BACKUP,
    SuffixMode,
    SuffixStore,
    leading_listing,
)
from tests.kbtools import cosh_entry, cosh_listing, described, write_registry

#: What ``registry_with(tmp_path, ["notes"])`` lists for agents.
NOTES_LISTED = cosh_listing(("notes", "notes words", "/data/notes"))
#: ... and with archive active too.
BOTH_LISTED = cosh_listing(
    ("notes", "notes words", "/data/notes"), ("archive", "archive words", "/data/archive")
)


def registry_with(
    tmp_path: Path, active: list[str], names: tuple[str, ...] = ("notes", "archive")
) -> Registry:
    directory = tmp_path / "reg"
    write_registry(
        directory, [cosh_entry(name, f"/data/{name}", f"{name} words") for name in names], active=active
    )
    return load_registry(directory)


@pytest.fixture
def store(tmp_path: Path) -> SuffixStore:
    return SuffixStore(tmp_path / "config")


# --- the generated list stays live -------------------------------------------------------------------


def test_nothing_saved_serves_the_generated_list(tmp_path: Path, store: SuffixStore) -> None:
    registry = registry_with(tmp_path, ["notes"])
    served = served_tool(registry, store)
    assert served.suffix == NOTES_LISTED
    assert served.tool.description == described(NOTES_LISTED)
    assert served.warnings() == ()


def test_notes_follow_the_generated_list_and_the_list_follows_the_registry(
    tmp_path: Path, store: SuffixStore
) -> None:
    registry = registry_with(tmp_path, ["notes"])
    store.save(SuffixMode.NOTES, "Prefer notes for account questions.\n", "")
    assert served_tool(registry, store).suffix == NOTES_LISTED + "Prefer notes for account questions.\n"

    # cosh activates another database and a description is edited after the notes were saved.
    set_active(registry.directory, "archive", True)
    set_description(registry.directory, "notes", "Team notes, rewritten")
    later = load_registry(registry.directory)
    served = served_tool(later, store)
    listed = cosh_listing(
        ("notes", "Team notes, rewritten", "/data/notes"), ("archive", "archive words", "/data/archive")
    )
    assert served.suffix == listed + "Prefer notes for account questions.\n"
    assert served.warnings() == ()


def test_the_same_notes_for_another_registry_list_that_registrys_databases(
    tmp_path: Path, store: SuffixStore
) -> None:
    store.save(SuffixMode.NOTES, "Be brief.", "")
    other_dir = tmp_path / "other"
    write_registry(other_dir, [cosh_entry("wiki", "/data/wiki")], active=["wiki"])
    served = served_tool(load_registry(other_dir), store)
    assert served.suffix == cosh_listing(("wiki", "wiki knowledge base", "/data/wiki")) + "Be brief."
    assert "notes" not in served.suffix


def test_an_override_replaces_the_list_and_is_reported_when_stale(tmp_path: Path, store: SuffixStore) -> None:
    registry = registry_with(tmp_path, ["notes"])
    own = "Available databases:\n\n- Name: notes\n  Description: mine\n"
    store.save(SuffixMode.OVERRIDE, "ignored notes", own)
    served = served_tool(registry, store)
    assert served.suffix == own
    assert served.warnings() == ()

    set_active(registry.directory, "archive", True)
    set_active(registry.directory, "notes", False)
    served = served_tool(load_registry(registry.directory), store)
    assert served.suffix == own  # an override is what the user chose: served as it is, and warned about
    (warning,) = served.warnings()
    assert warning.message == (
        "The tool description agents get names a database that is not active (notes) "
        "and leaves out a database that is active (archive)."
    )
    assert warning.hint is not None and "replaces the generated database list" in warning.hint


def test_an_override_for_another_registry_names_what_this_one_does_not_hold(
    tmp_path: Path, store: SuffixStore
) -> None:
    store.save(SuffixMode.OVERRIDE, "", build_tool_suffix(registry_with(tmp_path, ["notes", "archive"])))
    other_dir = tmp_path / "other"
    write_registry(other_dir, [cosh_entry("wiki", "/data/wiki")], active=["wiki"])
    (warning,) = served_tool(load_registry(other_dir), store).warnings()
    assert warning.message == (
        "The tool description agents get names 2 databases this registry does not hold (notes, archive) "
        "and leaves out a database that is active (wiki)."
    )


def test_notes_naming_an_inactive_database_are_reported(tmp_path: Path, store: SuffixStore) -> None:
    registry = registry_with(tmp_path, ["notes"])
    store.save(SuffixMode.NOTES, "For old questions, search archive.", "")
    (warning,) = served_tool(registry, store).warnings()
    assert warning.message == "The tool description agents get names a database that is not active (archive)."
    assert warning.hint is not None and "Your notes name them" in warning.hint


def test_back_to_notes_removes_the_override(tmp_path: Path, store: SuffixStore) -> None:
    registry = registry_with(tmp_path, ["notes"])
    store.save(SuffixMode.OVERRIDE, "n", "mine")
    store.save(SuffixMode.NOTES, "n", "mine")
    assert not store.override_path.exists()
    assert served_tool(registry, store).suffix == NOTES_LISTED + "n"


# --- which databases a text names ---------------------------------------------------------------------


def test_drift_counts_whole_words_and_listing_lines_only(tmp_path: Path) -> None:
    registry = registry_with(tmp_path, ["notes"], names=("notes", "archive", "old notes", "v1.5"))
    assert not suffix_drift("team-notes and archived things, v1.50", registry, replaces_list=False)
    drift = suffix_drift("See archive. Also v1.5, and 'old notes'.", registry, replaces_list=False)
    assert drift.inactive == ("archive", "old notes", "v1.5")
    assert suffix_drift("Name: gone\n- Name: notes", registry, replaces_list=True).unknown == ("gone",)


def test_an_override_listing_leaves_out_what_it_does_not_list_even_if_its_prose_mentions_it(
    tmp_path: Path,
) -> None:
    registry = registry_with(tmp_path, ["notes", "archive"])
    listing = "- Name: notes\n  Description: unlike archive, current\n"
    assert suffix_drift(listing, registry, replaces_list=True).omitted == ("archive",)
    assert not suffix_drift("Search notes or archive.", registry, replaces_list=True)


def test_a_warning_about_thousands_of_databases_names_a_few_and_counts_the_rest(tmp_path: Path) -> None:
    names = tuple(f"db{n}" for n in range(5000))
    registry = registry_with(tmp_path, list(names), names=names)
    drift = suffix_drift("Only my words.", registry, replaces_list=True)
    assert len(drift.omitted) == 5000
    assert drift.describe().endswith("(db0, db1, db2, db3, db4, db5, db6, db7 and 4992 more).")


# --- recall-gui 0.1's tool_suffix.txt -----------------------------------------------------------------


def test_leading_listing_recognises_cosh_lists_of_any_registry() -> None:
    generated = BOTH_LISTED
    assert leading_listing(generated + "More words.") == generated
    assert (
        leading_listing("Available databases:\n\n(none active)\nMore")
        == "Available databases:\n\n(none active)\n"
    )
    multi_line = (
        "Available databases:\n\n- Name: x\n  Description: two\nlines\n  DB URI: /x\n  Embedding: E\n\n"
    )
    assert leading_listing(multi_line + "rest") == multi_line
    assert leading_listing("My own words.\n" + generated) == ""
    assert leading_listing("Available databases:\n\n- Name: x\n  Description: cut off") == ""


def test_a_legacy_suffix_that_starts_with_an_old_list_keeps_its_rest_as_notes(
    tmp_path: Path, store: SuffixStore
) -> None:
    registry = registry_with(tmp_path, ["notes"])
    old_list = NOTES_LISTED
    store.directory.mkdir(parents=True)
    store.legacy_path.write_text(old_list + "Prefer notes for passwords.\n", encoding="utf-8")
    settings = store.load()
    assert (settings.mode, settings.notes) == (SuffixMode.NOTES, "Prefer notes for passwords.\n")
    assert settings.legacy is not None and settings.legacy.listing == old_list

    set_active(registry.directory, "archive", True)  # the list the file holds is stale now
    later = load_registry(registry.directory)
    served = served_tool(later, store)
    assert served.suffix == BOTH_LISTED + "Prefer notes for passwords.\n"
    assert served.warnings() == ()
    assert store.legacy_path.read_text(encoding="utf-8") == old_list + "Prefer notes for passwords.\n"


def test_a_legacy_suffix_in_the_users_own_words_stays_an_override(tmp_path: Path, store: SuffixStore) -> None:
    registry = registry_with(tmp_path, ["notes", "archive"])
    store.directory.mkdir(parents=True)
    store.legacy_path.write_text("Only the notes database exists.", encoding="utf-8")
    served = served_tool(registry, store)
    assert served.settings.mode is SuffixMode.OVERRIDE
    assert served.tool.description == DEFAULT_DESCRIPTION + "\n\nOnly the notes database exists."
    (warning,) = served.warnings()
    assert "leaves out a database that is active (archive)" in warning.message


def test_saving_keeps_a_legacy_file_as_a_backup_and_the_new_files_win(
    tmp_path: Path, store: SuffixStore
) -> None:
    registry = registry_with(tmp_path, ["notes"])
    store.directory.mkdir(parents=True)
    store.legacy_path.write_text("Old words.", encoding="utf-8")
    store.save(SuffixMode.NOTES, "New words.", "")
    assert not store.legacy_path.exists()
    assert (store.directory / LEGACY_BACKUP).read_text(encoding="utf-8") == "Old words."
    assert served_tool(registry, store).suffix == NOTES_LISTED + "New words."

    store.legacy_path.write_text("A 0.1 window saved this meanwhile.", encoding="utf-8")
    assert served_tool(registry, store).suffix == NOTES_LISTED + "New words."
    store.save(SuffixMode.NOTES, "Newer.", "")
    assert (store.directory / f"{LEGACY_BACKUP}.2").read_text(
        encoding="utf-8"
    ) == "A 0.1 window saved this meanwhile."


# --- damaged files ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["tool_notes.txt", "tool_override.txt", "tool_suffix.txt"])
def test_a_file_that_is_not_utf8_is_reported_and_the_generated_list_is_served(
    tmp_path: Path, store: SuffixStore, name: str
) -> None:
    registry = registry_with(tmp_path, ["notes"])
    store.directory.mkdir(parents=True)
    (store.directory / name).write_bytes(b"Caf\xe9 notes\r\n")
    served = served_tool(registry, store)
    assert served.suffix == NOTES_LISTED
    (problem,) = served.settings.problems
    assert isinstance(problem, SettingsError)
    assert (
        problem.message
        == f"{store.directory / name} cannot be read: it is not UTF-8 text (byte 0xe9 at position 3)"
    )
    assert problem.hint is not None and "Agents get the generated database list" in problem.hint
    assert served.settings.text() == "Caf\ufffd notes\n"  # recovered for the window to show
    (warning,) = served.warnings()
    assert warning.message == problem.message


def test_saving_over_a_damaged_file_keeps_it_aside(tmp_path: Path, store: SuffixStore) -> None:
    registry = registry_with(tmp_path, ["notes"])
    store.directory.mkdir(parents=True)
    store.notes_path.write_bytes(b"Caf\xe9")
    store.save(SuffixMode.NOTES, "Caf\u00e9", "")
    assert (store.directory / "tool_notes.txt.unreadable").read_bytes() == b"Caf\xe9"
    assert served_tool(registry, store).suffix == NOTES_LISTED + "Caf\u00e9"


def test_a_settings_path_that_is_a_folder_is_reported_not_raised(tmp_path: Path, store: SuffixStore) -> None:
    registry = registry_with(tmp_path, ["notes"])
    store.notes_path.mkdir(parents=True)
    served = served_tool(registry, store)
    assert served.suffix == NOTES_LISTED
    assert "cannot be read: it is a folder, not a regular file" in served.settings.problems[0].message


def test_a_save_that_cannot_write_says_where_and_keeps_the_old_files(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("a file where the settings folder should be", encoding="utf-8")
    store = SuffixStore(tmp_path / "blocked" / "config")
    with pytest.raises(SettingsError, match="the suffix was not saved: Not a directory") as caught:
        store.save(SuffixMode.NOTES, "lost?", "")
    assert caught.value.hint is not None and str(store.directory) in caught.value.hint
    assert (tmp_path / "blocked").read_text(encoding="utf-8") == "a file where the settings folder should be"
    assert "cannot be read: Not a directory" in store.load().problems[0].message


def test_text_that_is_not_unicode_is_refused_before_anything_is_written(store: SuffixStore) -> None:
    store.save(SuffixMode.NOTES, "kept", "")
    with pytest.raises(SettingsError, match="not valid Unicode"):
        store.save(SuffixMode.NOTES, "lone \ud800 surrogate", "")
    assert store.load().notes == "kept"


def test_a_text_that_names_exactly_the_active_databases_says_so() -> None:
    from recall_gui.core.registry.suffix_drift import SuffixDrift

    drift = SuffixDrift()
    assert not drift
    assert drift.describe() == "The tool description names exactly the active databases."


def test_settings_are_the_same_text_whatever_file_they_came_from(tmp_path: Path) -> None:
    from recall_gui.core.registry.suffix_store import SuffixMode, SuffixStore

    store = SuffixStore(tmp_path)
    assert store.paths() == (
        tmp_path / "tool_notes.txt",
        tmp_path / "tool_override.txt",
        tmp_path / "tool_suffix.txt",
    )
    store.save(SuffixMode.NOTES, "Prefer notes.", "")
    saved = store.load()
    assert saved.same_text(SuffixStore(tmp_path).load())
    store.save(SuffixMode.NOTES, "Prefer notes!", "")
    assert not saved.same_text(store.load())


def test_a_folder_where_the_override_file_goes_is_said_and_left_where_it_is(store: SuffixStore) -> None:
    store.override_path.mkdir(parents=True)
    with pytest.raises(SettingsError, match="the suffix was not saved: Is a directory"):
        store.save(SuffixMode.NOTES, "notes", "")
    assert store.override_path.is_dir()  # not set aside as an unreadable file: it is no file at all
    assert sorted(path.name for path in store.directory.iterdir()) == sorted(
        [store.override_path.name, store.notes_path.name]
    )
