"""The golden file the window works on, shared by the pages: the Checks page shows and runs it, the
knowledge page adds the current query to it ("Add as golden check").

Every change is written at once, on top of the file as it is on disk (an edit made in an editor meanwhile
is kept); a change that cannot be written (the folder is read-only, the file was broken by hand) stays in
memory, marked unsaved, until it is saved elsewhere, so nothing the user did is lost. The file is read
when its checks are first asked for, not when the window opens (validating it loads jsonschema).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from recall_gui.core.base import GoldenFileError
from recall_gui.core.golden import (
    CheckKey,
    GoldenCheck,
    GoldenFile,
    default_checks_dir,
    edit_golden,
    read_golden,
    write_golden,
)

DEFAULT_NAME = "golden.json"


class GoldenChecks(QObject):
    """The open golden file: its path, its checks, and whether they are all written."""

    #: The checks, the file or the unsaved state changed.
    changed = Signal()

    def __init__(self, path: Path | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = path or default_checks_dir() / DEFAULT_NAME
        self._golden: GoldenFile | None = None
        #: Why the checks in memory are not all in the file (``None`` when they are).
        self.unsaved: str | None = None
        self._problem: str | None = None

    @property
    def loaded(self) -> bool:
        return self._golden is not None

    def load(self) -> None:
        """Read the file (once): its checks, or why it could not be read (then none are shown)."""
        if self._golden is not None:
            return
        self._golden = GoldenFile()
        if self.path.exists():
            try:
                self._golden = read_golden(self.path)
            except GoldenFileError as error:
                self._problem = error.message

    @property
    def golden(self) -> GoldenFile:
        self.load()
        assert self._golden is not None
        return self._golden

    @golden.setter
    def golden(self, golden: GoldenFile) -> None:
        self._golden = golden

    @property
    def problem(self) -> str | None:
        """Why the file could not be read when it was opened (its checks are not shown)."""
        self.load()
        return self._problem

    @property
    def checks(self) -> tuple[GoldenCheck, ...]:
        return self.golden.checks

    def open(self, path: Path) -> None:
        """Work on the golden file at ``path`` from now on; a file that does not validate is refused and
        the current one stays open."""
        golden = read_golden(path)
        self.path, self.golden, self.unsaved, self._problem = path, golden, None, None
        self.changed.emit()

    def new(self, path: Path) -> None:
        """Start an empty golden file at ``path`` (written now)."""
        write_golden(path, GoldenFile())
        self.path, self.golden, self.unsaved, self._problem = path, GoldenFile(), None, None
        self.changed.emit()

    def save_as(self, path: Path) -> None:
        """Write the checks in memory to ``path`` and work on that file from now on."""
        write_golden(path, self.golden)
        self.path, self.unsaved, self._problem = path, None, None
        self.changed.emit()

    def add(self, check: GoldenCheck) -> bool:
        """Add ``check`` (or replace the check with the same database, query and limit); ``True`` if it
        replaced one. Raises :class:`GoldenFileError` when the file cannot be written; the check is kept
        in memory then."""
        replaced = any(existing.key == check.key for existing in self.golden.checks)
        self._change(lambda golden: golden.with_check(check))
        return replaced

    def remove(self, keys: Iterable[CheckKey]) -> tuple[tuple[int, GoldenCheck], ...]:
        """Remove the checks with these keys; returns them with their places, for :meth:`restore`."""
        chosen = list(keys)
        removed = self.golden.placed(chosen)
        self._change(lambda golden: golden.without(chosen))
        return removed

    def restore(self, placed: Iterable[tuple[int, GoldenCheck]]) -> None:
        """Put removed checks back in their places (undo a :meth:`remove`)."""
        chosen = list(placed)
        self._change(lambda golden: golden.with_restored(chosen))

    def edit(self, old: CheckKey, new: GoldenCheck) -> None:
        """Replace the check keyed ``old`` by ``new``, in its place. Raises :class:`GoldenFileError` when
        ``new`` would repeat another check (nothing changes then) or the file cannot be written (the
        edit is kept in memory then)."""
        self.load()
        self.golden.with_edit(old, new)  # refused before anything is written
        self._change(lambda golden: golden.with_edit(old, new))

    def _change(self, change: Callable[[GoldenFile], GoldenFile]) -> None:
        self.load()
        if self.unsaved is None and self.problem is None:
            try:
                self.golden = edit_golden(self.path, change)
            except GoldenFileError as error:
                self.golden = change(self.golden)
                self.unsaved = error.message
                self.changed.emit()
                raise
            self.changed.emit()
            return
        # The file could not be written (or read) before: keep changing the checks in memory only.
        self.golden = change(self.golden)
        self.unsaved = self.unsaved or self.problem
        self.changed.emit()
