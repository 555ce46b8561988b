"""What the user is editing or searching now, kept apart from the widgets that show it.

The window's pages share one :class:`Drafts` (through its services): the description page edits the
suffix draft and the description drafts, the knowledge page publishes the database, query and limit it
holds, and the Agent view reads both. The rules live here, without Qt: when a draft ends, when another
program changed what is being edited, what agents would get if the user saved now.

Unsaved text is never thrown away when the registry or the saved suffix is read again — not even when the
reloaded registry does not parse and a drafted database is missing from it for a while.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from recall_gui.core.base.errors import RecallError, RegistryError
from recall_gui.core.base.types import DEFAULT_LIMIT
from recall_gui.core.registry.registry_changes import set_description
from recall_gui.core.registry.registry_types import DatabaseEntry, Registry
from recall_gui.core.registry.suffix import (
    SuffixWarning,
    build_tool_suffix,
    drift_of,
    served_drift,
    suffix_warnings,
)
from recall_gui.core.registry.suffix_drift import SuffixDrift
from recall_gui.core.registry.suffix_store import SuffixMode, SuffixSettings, SuffixStore
from recall_gui.core.search.agent_scope import ViewScope


class Listeners:
    """Callbacks run after a change, in the order they were added."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[[], None]] = []

    def add(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` after every change; returns the function that stops it."""
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    def emit(self) -> None:
        for callback in list(self._callbacks):
            callback()


# --- the suffix ----------------------------------------------------------------------------------------


class SuffixStatus(Enum):
    """The suffix editor against what is saved."""

    #: The editor holds what is saved.
    SAVED = "saved"
    #: The editor holds edits that are not saved.
    EDITED = "edited"
    #: Unsaved edits, and the saved suffix changed on disk since they began (another window, a hand edit).
    CHANGED_ELSEWHERE = "changed-elsewhere"
    #: A settings file cannot be read; the editor shows what could be recovered of it.
    UNREADABLE = "unreadable"


class SuffixDraft:
    """The suffix being edited: its mode and the user's text for each mode, against what is saved."""

    def __init__(self, store: SuffixStore) -> None:
        self.store = store
        self.changed = Listeners()
        self.registry: Registry | None = None
        #: The database list as cosh generates it from the registry now.
        self.generated = ""
        #: What is saved, as last read.
        self.saved = SuffixSettings()
        self._base = self.saved
        self.mode = SuffixMode.NOTES
        self._texts = {SuffixMode.NOTES: "", SuffixMode.OVERRIDE: ""}

    # --- reading ---

    def follow(self, registry: Registry, generated: str | None = None) -> None:
        """A new registry snapshot: the generated list follows it (``generated``: made already, e.g. on
        the worker that read the snapshot), the saved suffix is read again."""
        self.registry = registry
        self.generated = build_tool_suffix(registry) if generated is None else generated
        self.reload()

    def reload(self) -> None:
        """Read the saved suffix again; the draft follows it unless it holds edits."""
        edited = self.edited
        self.saved = self.store.load()
        if not edited:
            self._take(self.saved)
        self.changed.emit()

    def _take(self, settings: SuffixSettings) -> None:
        self.mode = settings.mode
        self._texts = {SuffixMode.NOTES: settings.notes, SuffixMode.OVERRIDE: settings.override}
        self._base = settings

    # --- state ---

    @property
    def text(self) -> str:
        """The user's text in the current mode: the notes, or the override."""
        return self._texts[self.mode]

    @property
    def notes(self) -> str:
        return self._texts[SuffixMode.NOTES]

    @property
    def override(self) -> str:
        return self._texts[SuffixMode.OVERRIDE]

    def settings(self) -> SuffixSettings:
        """The draft as it would be saved."""
        return SuffixSettings(self.mode, self.notes, self.override)

    @property
    def edited(self) -> bool:
        """The draft differs from what is saved (the override text counts only in override mode)."""
        saved = self.saved
        if self.mode is not saved.mode or self.notes != saved.notes:
            return True
        return self.mode is SuffixMode.OVERRIDE and self.override != saved.override

    @property
    def dirty(self) -> bool:
        """Agents do not get what the editor shows yet: it holds edits, or a file could not be read."""
        return self.edited or bool(self.saved.problems)

    @property
    def status(self) -> SuffixStatus:
        if self.edited:
            if not self.saved.same_text(self._base):
                return SuffixStatus.CHANGED_ELSEWHERE
            return SuffixStatus.EDITED
        return SuffixStatus.UNREADABLE if self.saved.problems else SuffixStatus.SAVED

    @property
    def shown(self) -> str:
        """The suffix agents would get if the user saved now: what the preview shows."""
        return self.settings().served(self.generated)

    @property
    def served(self) -> str:
        """The suffix agents get now."""
        return self.saved.served(self.generated)

    @property
    def drift(self) -> SuffixDrift:
        """What the draft's own text gets wrong about the registry's databases."""
        return drift_of(self.settings(), self.registry) if self.registry is not None else SuffixDrift()

    def served_warnings(self) -> tuple[SuffixWarning, ...]:
        """What ``recall-gui tool`` warns about now: unreadable files, and the drift of what is served."""
        if self.registry is None:
            return ()
        return suffix_warnings(self.saved, served_drift(self.saved, self.registry))

    # --- editing ---

    def edit(self, text: str) -> None:
        """The user typed: ``text`` is their text in the current mode."""
        if text != self._texts[self.mode]:
            self._texts[self.mode] = text
            self.changed.emit()

    def set_mode(self, mode: SuffixMode) -> None:
        """Switch between notes after the generated list and a text that replaces it. An override begins
        as what agents get now (the generated list and the notes), for the user to change."""
        if mode is self.mode:
            return
        if mode is SuffixMode.OVERRIDE and not self.override:
            self._texts[SuffixMode.OVERRIDE] = self.generated + self.notes
        self.mode = mode
        self.changed.emit()

    def save(self) -> None:
        """Save the draft; raises :class:`~recall_gui.core.base.errors.SettingsError` (the draft is kept)."""
        self.store.save(self.mode, self.notes, self.override)
        self.saved = self.store.load()
        self._take(self.saved)
        self.changed.emit()

    def revert(self) -> None:
        """Drop the edits: the editor shows what is saved."""
        self._take(self.saved)
        self.changed.emit()


# --- database descriptions ----------------------------------------------------------------------------


class DescriptionState(Enum):
    """Where a database's description stands."""

    #: No database, or one neither in the registry nor drafted.
    NONE = "none"
    #: The registry's description, or an edit of it.
    CURRENT = "current"
    #: Drafted, but the database is not in the registry as it reads now (a file half-written or broken).
    MISSING = "missing"
    #: Another program changed the description while the user was editing it.
    CHANGED_ELSEWHERE = "changed-elsewhere"


class DescriptionDrafts:
    """Unsaved descriptions, by database name, and the registry text each was begun from."""

    def __init__(self) -> None:
        self.changed = Listeners()
        self.registry: Registry | None = None
        self._drafts: dict[str, str] = {}
        self._bases: dict[str, str] = {}

    def follow(self, registry: Registry) -> None:
        """A new registry snapshot. A draft ends when the registry holds its text; a database missing from
        the snapshot keeps its draft (the file may be half-written by another program, or not parse, and
        be whole again soon)."""

        def ended(name: str, text: str) -> bool:
            entry = registry.get(name)
            return entry is not None and entry.description == text

        self._drafts = {n: t for n, t in self._drafts.items() if not ended(n, t)}
        self._bases = {n: t for n, t in self._bases.items() if n in self._drafts}
        self.registry = registry
        self.changed.emit()

    def entry(self, name: str | None) -> DatabaseEntry | None:
        return self.registry.get(name) if self.registry is not None and name else None

    def is_drafted(self, name: str | None) -> bool:
        return name is not None and name in self._drafts

    @property
    def drafted(self) -> tuple[str, ...]:
        return tuple(self._drafts)

    def editable(self, name: str | None) -> bool:
        return self.entry(name) is not None or self.is_drafted(name)

    def text(self, name: str | None) -> str:
        """What the editor shows for ``name``: the draft, else the registry's description."""
        if name is not None and name in self._drafts:
            return self._drafts[name]
        db = self.entry(name)
        return db.description if db is not None else ""

    def state(self, name: str | None) -> DescriptionState:
        db = self.entry(name)
        drafted = self.is_drafted(name)
        if name is None or (db is None and not drafted):
            return DescriptionState.NONE
        if db is None:
            return DescriptionState.MISSING
        if drafted and db.description != self._bases.get(name, db.description):
            return DescriptionState.CHANGED_ELSEWHERE
        return DescriptionState.CURRENT

    def edit(self, name: str | None, text: str) -> None:
        """The user typed ``text`` as the description of ``name``."""
        db = self.entry(name)
        if name is None or (db is None and name not in self._drafts):
            return
        if db is not None and text == db.description:
            self._drafts.pop(name, None)
            self._bases.pop(name, None)
        else:
            if name not in self._drafts and db is not None:
                self._bases[name] = db.description
            self._drafts[name] = text
        self.changed.emit()

    def revert(self, name: str | None) -> None:
        if name is not None and name in self._drafts:
            self._drafts.pop(name)
            self._bases.pop(name, None)
            self.changed.emit()

    def save(self, name: str) -> None:
        """Write the text shown for ``name`` to the registry and end its draft.

        Raises only :class:`~recall_gui.core.base.errors.RecallError` (the draft is kept): the registry's own
        refusals, and a file that cannot be written or text that cannot be written as UTF-8.
        """
        if self.registry is None:
            raise RegistryError("not saved: no registry is open")
        try:
            set_description(self.registry.directory, name, self.text(name))
        except RecallError:
            raise
        except UnicodeEncodeError as error:
            odd = error.object[error.start : error.end]
            raise RegistryError(
                f"not saved: the name or the description of {name!a} holds text that cannot be written "
                f"as UTF-8 ({odd!a}: {error.reason})",
                hint="Retype the odd character; a name can be fixed only in the registry file itself.",
            ) from error
        except OSError as error:
            raise RegistryError(
                f"not saved: {error.strerror or error}",
                hint="Check that the registry folder is writable. Nothing was changed.",
            ) from error
        self._drafts.pop(name, None)
        self._bases.pop(name, None)
        self.changed.emit()


# --- the search ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchDraft:
    """The knowledge page's database, query and limit as they stand (typed, maybe not searched yet), and
    what the page shows of the database (its version, filter, rows chosen on the map)."""

    database: DatabaseEntry | None = None
    query: str = ""
    limit: int = DEFAULT_LIMIT
    view: ViewScope | None = None


class Drafts:
    """What the user is editing or searching now, for every page of one window."""

    def __init__(self, store: SuffixStore) -> None:
        self.suffix = SuffixDraft(store)
        self.descriptions = DescriptionDrafts()
        self.search = SearchDraft()
        self.search_changed = Listeners()

    def follow(self, registry: Registry, generated: str | None = None) -> None:
        """A new registry snapshot for every draft."""
        self.descriptions.follow(registry)
        self.suffix.follow(registry, generated)

    def publish_search(self, search: SearchDraft) -> None:
        if search != self.search:
            self.search = search
            self.search_changed.emit()
