"""The user's part of the tool description, as saved in the app's config dir (never in cosh's files).

Two files, each plain UTF-8 text the user may also edit by hand:

``tool_notes.txt``
    Notes served after the database list, which is generated afresh from the registry every time (the
    common case: the list can never go stale).
``tool_override.txt``
    Present only when the user chose, knowingly, to replace the generated list: then its text is served
    instead of the list and the notes.

recall-gui 0.1 kept one file, ``tool_suffix.txt``, that replaced the generated list entirely. It is read
only while neither file above exists. Most such files are the generated list of the day they were saved
plus a sentence: a file that starts with a database list in cosh's format is read as that list (now
generated live) followed by the rest as notes. Any other text stays a full replacement. Reading never
changes the file; the next save writes the files above and keeps it as ``tool_suffix.txt.bak``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from recall_gui.core.base.atomic import set_aside, write_text_atomic
from recall_gui.core.base.errors import SettingsError
from recall_gui.core.base.paths import app_config_dir
from recall_gui.core.base.regular_files import FileRefused, read_regular

NOTES_FILE = "tool_notes.txt"
OVERRIDE_FILE = "tool_override.txt"
#: recall-gui 0.1's full replacement of the generated list.
LEGACY_FILE = "tool_suffix.txt"
#: Where a 0.1 file goes once the suffix is saved in the new format (``tool_suffix.txt.bak``).
LEGACY_TAG = "bak"
LEGACY_BACKUP = f"{LEGACY_FILE}.{LEGACY_TAG}"
#: What is appended to the name of a file that could not be read when a save replaces it.
UNREADABLE_TAG = "unreadable"
#: The most of a notes or override file read: a tool description is read by a model, a page or two.
SUFFIX_MAX_BYTES = 1 << 20


class SuffixMode(Enum):
    """How the suffix is made."""

    #: The generated database list, then the user's notes.
    NOTES = "notes"
    #: The user's own text instead of the generated list (chosen knowingly; it does not follow the registry).
    OVERRIDE = "override"


@dataclass(frozen=True)
class LegacySuffix:
    """A suffix saved by recall-gui 0.1, and how it was read."""

    path: Path
    #: The database list the file started with (now generated live instead); ``""`` when it did not start
    #: with one, so the whole file is an override.
    listing: str


@dataclass(frozen=True)
class SuffixSettings:
    """What the user saved: the mode, the notes and the override text (each ``""`` when absent)."""

    mode: SuffixMode = SuffixMode.NOTES
    notes: str = ""
    override: str = ""
    #: Set when these settings were read from a 0.1 file.
    legacy: LegacySuffix | None = None
    #: Files that could not be read. Their text, where some could be recovered, is in ``notes`` or
    #: ``override`` with U+FFFD for the bytes that are not UTF-8; nothing of it is served.
    problems: tuple[SettingsError, ...] = field(default=())

    def text(self, mode: SuffixMode | None = None) -> str:
        """The user's text for ``mode`` (default: the saved mode)."""
        return self.override if (mode or self.mode) is SuffixMode.OVERRIDE else self.notes

    def served(self, generated: str) -> str:
        """The suffix agents get: the override, or the generated list then the notes. While a file cannot
        be read, the generated list alone, so agents still learn which databases they can search."""
        if self.problems:
            return generated
        if self.mode is SuffixMode.OVERRIDE:
            return self.override
        return generated + self.notes

    def same_text(self, other: SuffixSettings) -> bool:
        """The same mode and texts (where they came from aside)."""
        return (self.mode, self.notes, self.override) == (other.mode, other.notes, other.override)


_LISTING_HEAD = "Available databases:\n\n"
_NONE_ACTIVE = "(none active)\n"
_LISTING_ENTRY = re.compile(
    r"- Name: [^\n]*\n  Description: .*?\n  DB URI: [^\n]*\n  Embedding: [^\n]*\n\n", re.DOTALL
)


def leading_listing(text: str) -> str:
    """The database list in cosh's format (as ``build_tool_suffix`` writes it) that ``text`` starts
    with, or ``""``; whatever registry it was generated from."""
    if not text.startswith(_LISTING_HEAD):
        return ""
    start = len(_LISTING_HEAD)
    if text.startswith(_NONE_ACTIVE, start):
        return text[: start + len(_NONE_ACTIVE)]
    end = start
    while (entry := _LISTING_ENTRY.match(text, end)) is not None:
        end = entry.end()
    return text[:end] if end > start else ""


def _unreadable(path: Path, reason: str) -> SettingsError:
    return SettingsError(
        f"{path} cannot be read: {reason}",
        path=path,
        hint=(
            "Agents get the generated database list without your text until it is fixed. Save the file "
            "as UTF-8 text in an editor, or delete it, or save the suffix again in the window (the "
            f"unreadable file is then kept as {path.name}.{UNREADABLE_TAG})."
        ),
    )


def _read(path: Path) -> tuple[str | None, SettingsError | None]:
    """The file's text (``None`` when it does not exist), and what is wrong with it.

    A file that is not UTF-8 is reported, and its text recovered with U+FFFD for the bad bytes so that
    the window can show it; line ends are read as Python's text mode reads them.
    """
    try:
        data = read_regular(path, SUFFIX_MAX_BYTES)
    except FileNotFoundError:
        return None, None
    except OSError as error:
        return None, _unreadable(path, error.strerror or str(error))
    try:
        text = data.decode("utf-8")
        problem = None
    except UnicodeDecodeError as error:
        text = data.decode("utf-8", errors="replace")
        problem = _unreadable(
            path, f"it is not UTF-8 text (byte 0x{data[error.start]:02x} at position {error.start})"
        )
    return text.replace("\r\n", "\n").replace("\r", "\n"), problem


def _keep_aside_if_unreadable(path: Path) -> None:
    """Before ``path`` is replaced: move it aside when its bytes are not UTF-8 (its text was shown with
    U+FFFD, so replacing it would lose the original)."""
    try:
        read_regular(path, SUFFIX_MAX_BYTES).decode("utf-8")
    except FileRefused:  # a FIFO, a device, too large: kept as it is, under another name
        if not path.is_dir():  # a folder: the write says it cannot replace one
            set_aside(path, UNREADABLE_TAG)
    except OSError:
        return  # absent, or unreadable in a way the write itself will report
    except UnicodeDecodeError:
        set_aside(path, UNREADABLE_TAG)


class SuffixStore:
    """The user's notes and override text, kept in the app's config dir."""

    def __init__(self, config_dir: Path | None = None) -> None:
        self.directory = Path(config_dir) if config_dir is not None else app_config_dir()

    @property
    def notes_path(self) -> Path:
        return self.directory / NOTES_FILE

    @property
    def override_path(self) -> Path:
        return self.directory / OVERRIDE_FILE

    @property
    def legacy_path(self) -> Path:
        return self.directory / LEGACY_FILE

    def paths(self) -> tuple[Path, Path, Path]:
        """Every file :meth:`load` may read."""
        return (self.notes_path, self.override_path, self.legacy_path)

    def load(self) -> SuffixSettings:
        """What the user saved; never raises (a file that cannot be read is one of the ``problems``)."""
        notes, notes_problem = _read(self.notes_path)
        override, override_problem = _read(self.override_path)
        problems = tuple(p for p in (notes_problem, override_problem) if p is not None)
        if notes is not None or override is not None or problems:
            overriding = override is not None or override_problem is not None
            mode = SuffixMode.OVERRIDE if overriding else SuffixMode.NOTES
            return SuffixSettings(mode, notes or "", override or "", None, problems)
        return self._load_legacy()

    def _load_legacy(self) -> SuffixSettings:
        text, problem = _read(self.legacy_path)
        if text is None and problem is None:
            return SuffixSettings()
        problems = (problem,) if problem is not None else ()
        listing = leading_listing(text or "")
        legacy = LegacySuffix(self.legacy_path, listing)
        if listing:
            return SuffixSettings(SuffixMode.NOTES, (text or "")[len(listing) :], "", legacy, problems)
        return SuffixSettings(SuffixMode.OVERRIDE, "", text or "", legacy, problems)

    def save(self, mode: SuffixMode, notes: str, override: str) -> None:
        """Save in this version's format: the notes always (an empty file too: it marks the format), the
        override only in :attr:`SuffixMode.OVERRIDE` (removed otherwise). A 0.1 file is kept as
        ``tool_suffix.txt.bak``, and a file that could not be read is moved aside, never overwritten.

        Raises :class:`SettingsError` (what failed, and what to do) when the folder cannot be written.
        """
        try:
            for text in (notes, override):
                text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise SettingsError(
                f"the suffix was not saved: it holds text that is not valid Unicode ({error.reason})",
                path=self.directory,
                hint="Delete or retype the odd character and save again.",
            ) from None
        try:
            self._write(self.notes_path, notes)
            if mode is SuffixMode.OVERRIDE:
                self._write(self.override_path, override)
            else:
                _keep_aside_if_unreadable(self.override_path)
                self.override_path.unlink(missing_ok=True)
            _keep_aside_if_unreadable(self.legacy_path)
            if self.legacy_path.exists():
                set_aside(self.legacy_path, LEGACY_TAG)
        except OSError as error:
            raise SettingsError(
                f"the suffix was not saved: {error.strerror or error}"
                + (f" ({error.filename})" if error.filename else ""),
                path=self.directory,
                hint=f"Check that {self.directory} is a folder you may write to.",
            ) from error

    @staticmethod
    def _write(path: Path, text: str) -> None:
        _keep_aside_if_unreadable(path)
        write_text_atomic(path, text)
