"""The drafts model: what the user is editing, its conflicts with other programs, and what agents would get
— without a window."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from recall_gui.core.base.errors import SettingsError
from recall_gui.core.drafts import (
    DescriptionDrafts,
    DescriptionState,
    Drafts,
    SearchDraft,
    SuffixDraft,
    SuffixStatus,
)
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_types import Registry
from recall_gui.core.registry.suffix import served_tool
from recall_gui.core.registry.suffix_store import SuffixMode, SuffixStore
from tests.kbtools import cosh_entry, cosh_listing, write_registry

#: What the ``registry`` fixture lists for agents: only notes is active.
NOTES_LISTED = cosh_listing(("notes", "Team notes", "/data/notes"))
#: The same registry with archive active too.
BOTH_LISTED = cosh_listing(("notes", "Team notes", "/data/notes"), ("archive", "Old notes", "/data/archive"))


def registry_at(directory: Path, descriptions: dict[str, str], active: list[str] | None = None) -> Registry:
    entries = [cosh_entry(name, f"/data/{name}", text) for name, text in descriptions.items()]
    write_registry(directory, entries, active=active if active is not None else list(descriptions))
    return load_registry(directory)


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    return registry_at(tmp_path / "reg", {"notes": "Team notes", "archive": "Old notes"}, ["notes"])


@pytest.fixture
def suffix(tmp_path: Path, registry: Registry) -> SuffixDraft:
    draft = SuffixDraft(SuffixStore(tmp_path / "config"))
    draft.follow(registry)
    return draft


# --- the suffix ----------------------------------------------------------------------------------------


def test_a_fresh_draft_shows_the_generated_list_and_nothing_to_save(
    suffix: SuffixDraft, registry: Registry
) -> None:
    assert suffix.mode is SuffixMode.NOTES
    assert (suffix.text, suffix.status, suffix.dirty) == ("", SuffixStatus.SAVED, False)
    assert suffix.shown == suffix.served == NOTES_LISTED


def test_typed_notes_are_shown_at_once_and_served_once_saved(suffix: SuffixDraft, registry: Registry) -> None:
    heard: list[int] = []
    suffix.changed.add(lambda: heard.append(1))
    suffix.edit("Prefer notes.")
    assert heard == [1]
    assert suffix.status is SuffixStatus.EDITED and suffix.dirty
    assert suffix.shown == NOTES_LISTED + "Prefer notes."
    assert suffix.served == NOTES_LISTED
    suffix.save()
    assert suffix.status is SuffixStatus.SAVED and not suffix.dirty
    assert served_tool(registry, suffix.store).suffix == suffix.shown == suffix.served


def test_the_generated_part_follows_the_registry_under_unsaved_notes(
    suffix: SuffixDraft, registry: Registry
) -> None:
    suffix.edit("Mine.")
    later = registry_at(
        registry.directory, {"notes": "Team notes", "archive": "Old notes"}, ["notes", "archive"]
    )
    suffix.follow(later)
    assert suffix.text == "Mine."
    assert suffix.shown == BOTH_LISTED + "Mine."


def test_switching_to_an_override_starts_from_what_agents_get(
    suffix: SuffixDraft, registry: Registry
) -> None:
    suffix.edit("Mine.")
    suffix.set_mode(SuffixMode.OVERRIDE)
    assert suffix.text == NOTES_LISTED + "Mine."
    suffix.edit("Only notes.")
    suffix.save()
    assert suffix.store.override_path.read_text(encoding="utf-8") == "Only notes."
    assert suffix.store.notes_path.read_text(encoding="utf-8") == "Mine."
    assert suffix.drift.omitted == () and suffix.drift.inactive == ()

    suffix.set_mode(SuffixMode.NOTES)  # back to notes: the override is dropped on save, the notes kept
    assert suffix.text == "Mine." and suffix.dirty
    suffix.save()
    assert not suffix.store.override_path.exists()
    assert suffix.served == NOTES_LISTED + "Mine."


def test_the_drift_of_the_draft_is_known_before_saving(suffix: SuffixDraft) -> None:
    suffix.edit("Ask archive about the past.")
    assert suffix.drift.inactive == ("archive",)
    suffix.set_mode(SuffixMode.OVERRIDE)
    suffix.edit("Nothing about databases.")
    assert suffix.drift.omitted == ("notes",)


def test_a_suffix_saved_elsewhere_is_followed_when_clean_and_pointed_out_under_edits(
    suffix: SuffixDraft, tmp_path: Path
) -> None:
    other = SuffixStore(tmp_path / "config")
    other.save(SuffixMode.NOTES, "From another window.", "")
    suffix.reload()
    assert suffix.text == "From another window." and suffix.status is SuffixStatus.SAVED

    suffix.edit("Mine.")
    other.save(SuffixMode.NOTES, "Changed again elsewhere.", "")
    suffix.reload()
    assert suffix.text == "Mine."
    assert suffix.status is SuffixStatus.CHANGED_ELSEWHERE
    suffix.revert()
    assert suffix.text == "Changed again elsewhere." and suffix.status is SuffixStatus.SAVED


def test_an_unreadable_notes_file_shows_what_was_recovered_and_saving_replaces_it(
    suffix: SuffixDraft, registry: Registry
) -> None:
    store = suffix.store
    store.directory.mkdir(parents=True)
    store.notes_path.write_bytes(b"Caf\xe9 is open.")
    suffix.reload()
    assert suffix.status is SuffixStatus.UNREADABLE and suffix.dirty
    assert suffix.text == "Caf\ufffd is open."
    assert suffix.served == NOTES_LISTED  # agents get the list alone meanwhile
    suffix.edit("Caf\u00e9 is open.")
    suffix.save()
    assert suffix.status is SuffixStatus.SAVED
    assert (store.directory / "tool_notes.txt.unreadable").read_bytes() == b"Caf\xe9 is open."


def test_a_refused_save_keeps_the_draft(tmp_path: Path, registry: Registry) -> None:
    (tmp_path / "blocked").write_text("", encoding="utf-8")
    suffix = SuffixDraft(SuffixStore(tmp_path / "blocked" / "config"))
    suffix.follow(registry)
    suffix.edit("Mine.")
    with pytest.raises(SettingsError):
        suffix.save()
    assert suffix.text == "Mine."


def test_a_legacy_suffix_is_shown_as_notes_without_counting_as_an_edit(
    tmp_path: Path, registry: Registry
) -> None:
    store = SuffixStore(tmp_path / "config")
    store.directory.mkdir(parents=True)
    store.legacy_path.write_text(NOTES_LISTED + "My sentence.", encoding="utf-8")
    suffix = SuffixDraft(store)
    suffix.follow(registry)
    assert (suffix.mode, suffix.text, suffix.status) == (SuffixMode.NOTES, "My sentence.", SuffixStatus.SAVED)
    assert suffix.saved.legacy is not None


# --- descriptions --------------------------------------------------------------------------------------


def test_a_description_draft_ends_when_the_registry_holds_its_text(registry: Registry) -> None:
    drafts = DescriptionDrafts()
    drafts.follow(registry)
    drafts.edit("notes", "New words")
    assert drafts.is_drafted("notes") and drafts.text("notes") == "New words"
    drafts.edit("notes", "Team notes")  # typed back to the registry's text: no draft
    assert not drafts.is_drafted("notes")
    drafts.edit("notes", "New words")
    drafts.follow(registry_at(registry.directory, {"notes": "New words", "archive": "Old notes"}))
    assert not drafts.is_drafted("notes")


def test_a_draft_survives_a_registry_that_lost_its_database_for_a_while(registry: Registry) -> None:
    drafts = DescriptionDrafts()
    drafts.follow(registry)
    drafts.edit("archive", "Kept")
    (registry.directory / "rag_dbs.json").write_text('{"dbs": [', encoding="utf-8")  # half-written
    drafts.follow(load_registry(registry.directory))
    assert drafts.state("archive") is DescriptionState.MISSING
    assert drafts.text("archive") == "Kept" and drafts.editable("archive")
    drafts.follow(registry_at(registry.directory, {"notes": "Team notes", "archive": "Old notes"}))
    assert drafts.state("archive") is DescriptionState.CURRENT and drafts.text("archive") == "Kept"


def test_another_programs_change_under_a_draft_is_a_conflict_until_reverted(registry: Registry) -> None:
    drafts = DescriptionDrafts()
    drafts.follow(registry)
    drafts.edit("notes", "Mine")
    drafts.follow(registry_at(registry.directory, {"notes": "Theirs", "archive": "Old notes"}))
    assert drafts.state("notes") is DescriptionState.CHANGED_ELSEWHERE
    assert drafts.entry("notes").description == "Theirs"  # type: ignore[union-attr]
    drafts.revert("notes")
    assert (drafts.state("notes"), drafts.text("notes")) == (DescriptionState.CURRENT, "Theirs")


def test_saving_a_description_writes_the_registry_and_ends_the_draft(registry: Registry) -> None:
    drafts = DescriptionDrafts()
    drafts.follow(registry)
    drafts.edit("archive", "Older notes")
    drafts.save("archive")
    assert not drafts.is_drafted("archive")
    saved = json.loads((registry.directory / "rag_dbs.json").read_text(encoding="utf-8"))
    assert [db["description"] for db in saved["dbs"]] == ["Team notes", "Older notes"]


def test_a_name_holding_a_lone_surrogate_saves_and_keeps_its_escape(tmp_path: Path) -> None:
    """A lone surrogate (``\\ud800`` in the JSON) in a name: the registry skips such an entry when it
    reads it, but a draft made before must still save without a crash, the escape written back as found."""
    plain = registry_at(tmp_path / "reg", {"odd": "x"})
    name = "odd\ud800"
    registry = replace(plain, databases=(replace(plain.databases[0], name=name),))
    dbs = plain.directory / "rag_dbs.json"
    dbs.write_text(dbs.read_text(encoding="utf-8").replace('"odd"', '"odd\\ud800"'), encoding="utf-8")
    drafts = DescriptionDrafts()
    drafts.follow(registry)
    drafts.edit(name, "new words")
    drafts.save(name)
    written = dbs.read_text(encoding="utf-8")
    assert '"odd\\ud800"' in written and '"new words"' in written


# --- the search --------------------------------------------------------------------------------------------


def test_a_published_search_is_heard_once_per_change(tmp_path: Path, registry: Registry) -> None:
    drafts = Drafts(SuffixStore(tmp_path / "config"))
    heard: list[SearchDraft] = []
    stop = drafts.search_changed.add(lambda: heard.append(drafts.search))
    search = SearchDraft(registry.get("notes"), "passwords", 3)
    drafts.publish_search(search)
    drafts.publish_search(search)
    stop()
    drafts.publish_search(SearchDraft())
    assert heard == [search]
