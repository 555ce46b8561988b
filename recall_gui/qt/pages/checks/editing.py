"""The golden file as the user edits it on the Checks page: open, start or save another file, remove
checks (with Undo) and change a check's query, ids or limit in its cell. Every change is written to the
file through the window's :class:`~recall_gui.qt.golden_checks.GoldenChecks`; one it cannot take is
refused with the reason and changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer, SignalInstance
from PySide6.QtWidgets import QFileDialog, QPushButton, QWidget

from recall_gui.core.base import GoldenFileError, InvalidInputError, quoted
from recall_gui.core.golden import default_checks_dir, edited
from recall_gui.core.messages import UserMessage
from recall_gui.qt.models.checks_model import ChecksModel
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.golden import GoldenCheck

FILE_FILTER = "Golden checks (*.json);;All files (*)"


class CheckEditing:
    """Changes to the golden file; the dialogs are shown over ``page``."""

    def __init__(
        self,
        services: WindowServices,
        model: ChecksModel,
        page: QWidget,
        *,
        note: StatusNote,
        undo_button: QPushButton,
        selected_rows: Callable[[], list[int]],
        forget_run: Callable[[], None],
        finished: SignalInstance,
    ) -> None:
        self.services = services
        self.golden = services.golden
        self.model = model
        self.page = page
        self.note = note
        self.undo_button = undo_button
        self._selected_rows = selected_rows
        self._forget_run = forget_run
        self._finished = finished
        #: The checks the last Remove took out, with their places: what Undo puts back.
        self._removed: tuple[tuple[int, GoldenCheck], ...] = ()

    # --- the file -----------------------------------------------------------------------------------------

    def open_file(self, path: Path) -> bool:
        try:
            self.golden.open(path)
        except GoldenFileError as error:
            self.services.show_error(error)
            return False
        self._forget_run()
        return True

    def new_file(self, path: Path) -> bool:
        try:
            self.golden.new(path)
        except GoldenFileError as error:
            self.services.show_error(error)
            return False
        self._forget_run()
        return True

    def save_as(self, path: Path) -> bool:
        try:
            self.golden.save_as(path)
        except GoldenFileError as error:
            self.services.show_error(error)
            return False
        return True

    def _folder(self) -> str:
        folder = self.golden.path.parent if self.golden.path.parent.is_dir() else default_checks_dir()
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder)

    def ask_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.page, "Open a golden file", self._folder(), FILE_FILTER)
        if path:
            self.open_file(Path(path))

    def ask_new(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.page, "New golden file", self._folder(), FILE_FILTER)
        if path:
            self.new_file(Path(path))

    def ask_save_as(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.page, "Save the checks as", self._folder(), FILE_FILTER)
        if path:
            self.save_as(Path(path))

    # --- the checks ---------------------------------------------------------------------------------------

    def remove_selected(self) -> None:
        """Remove the selected checks from the file; the note offers to put them back (Undo, Ctrl+Z)."""
        keys = [self.model.check(row).key for row in self._selected_rows()]
        if not keys:
            return
        try:
            removed = self.golden.remove(keys)
        except GoldenFileError as error:
            self.services.show_error(error)
            return
        self._removed = removed
        what = f"the check {quoted(removed[0][1].query)}" if len(removed) == 1 else f"{len(removed):,} checks"
        self.note.show_note(f"Removed {what} from {self.golden.path.name}.", "neutral")
        self.undo_button.show()

    def undo_remove(self) -> None:
        """Put the checks the last Remove took out back in their places."""
        if not self._removed or self.undo_button.isHidden():
            return
        removed, self._removed = self._removed, ()
        try:
            self.golden.restore(removed)
        except GoldenFileError as error:
            self.services.show_error(error)
            return
        count = len(removed)
        self.note.show_note(f"Put back {count:,} check{'s' if count != 1 else ''}.", "neutral")

    def edit_cell(self, row: int, field: str, value: object) -> bool:
        """An edit typed in a cell; applied once the editor has closed (the table is shown again then)."""
        check = self.model.check(row)
        QTimer.singleShot(0, lambda: self.edit_check(check, field, value))
        return True

    def edit_check(self, check: GoldenCheck, field: str, value: object) -> GoldenCheck | None:
        """``check`` with its query, ids (comma-separated text) or limit changed, written to the golden
        file in its place; a value it cannot take is refused with the reason and changes nothing."""
        try:
            if field == "limit":
                if not isinstance(value, int) or isinstance(value, bool):
                    raise InvalidInputError(f"the limit must be a whole number, not {value!r}")
                new = edited(check, limit=value)
            elif field == "query":
                new = edited(check, query=str(value))
            else:
                new = edited(check, ids=str(value))
            if new != check:
                self.golden.edit(check.key, new)
        except InvalidInputError as error:
            unsaved = self.golden.unsaved is not None and isinstance(error, GoldenFileError)
            message = error.message if unsaved else f"The check was not changed: {error.message}"
            self.services.show_message(UserMessage(message, error.hint, "warning"))
            self._finished.emit()
            return None
        self._finished.emit()
        return new
