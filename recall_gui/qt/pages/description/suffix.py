"""The description page's suffix: how it is made (the generated list, then the user's notes; or their own
text instead), the live list, the editor, whether agents get what is shown, and what drifted from the
registry. The rules live in the core's :class:`~recall_gui.core.drafts.SuffixDraft`; this shows it and
hands it what the user does."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QComboBox, QLabel, QPlainTextEdit, QSplitter, QVBoxLayout, QWidget

from recall_gui.core.base import RecallError
from recall_gui.core.drafts import SuffixStatus
from recall_gui.core.messages import UserMessage, user_message
from recall_gui.core.registry import (
    LEGACY_BACKUP,
    LEGACY_FILE,
    UNREADABLE_TAG,
    SuffixDrift,
    SuffixMode,
    SuffixWarning,
)
from recall_gui.qt.pages.description.preview import tints
from recall_gui.qt.panels.status_note import StatusNote, Tone
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import group_box, push_button, text_view

#: Who gets the saved text: the MCP server reads the notes, cosh builds its own description without them.
SAVED_FOR_MCP = "Suffix saved: agents that use recall-gui mcp get it at their next tool listing."
SAVED_NOT_FOR_COSH = "cosh's own agent does not read these notes: it gets the generated list alone."


def drift_advice(drift: SuffixDrift, mode: SuffixMode) -> str:
    """What to do about ``drift`` on this page (the core's hints send the user here)."""
    if mode is SuffixMode.OVERRIDE:
        return "Edit your text, or choose “Generated list, then my notes”."
    if drift.inactive and not drift.unknown:
        return "Edit your notes, or tick the database on the left."
    return "Edit your notes."


class SuffixEditor:
    """``suffixMode``, ``suffixState``, ``suffixDrift``, ``generatedSuffixView`` and ``suffixEdit``, with
    Save and Revert, in one box (:attr:`box`)."""

    def __init__(self, services: WindowServices) -> None:
        self.services = services
        self.drafts = services.drafts
        #: What the banner last said about the served suffix, so it speaks only when that changes, and
        #: the saved settings and registry it was worked out for (not again for every key typed).
        self._announced: tuple[SuffixWarning, ...] = ()
        self._announced_for: tuple[object, object] = (None, None)
        #: The generated list the view shows (laid out again only when it changed).
        self._generated_shown: str | None = None
        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName("suffixMode")
        self.mode_combo.addItem("Generated list, then my notes", SuffixMode.NOTES)
        self.mode_combo.addItem("My own text instead of the list", SuffixMode.OVERRIDE)
        self.mode_combo.setItemData(
            0,
            "The list of active databases follows the registry; your notes follow it",
            Qt.ItemDataRole.ToolTipRole,
        )
        self.mode_combo.setItemData(
            1,
            "Your text replaces the generated list: it no longer follows the registry",
            Qt.ItemDataRole.ToolTipRole,
        )
        self.suffix_state = StatusNote("suffixState")
        self.suffix_drift = StatusNote("suffixDrift")
        self.suffix_drift.hide()
        self.generated_label = QLabel("Generated list — live, follows the registry:")
        self.generated_label.setObjectName("generatedSuffixLabel")
        self.generated_label.setWordWrap(True)
        self.generated_view = text_view("generatedSuffixView", read_only=True, monospace=True)
        self.generated_view.setToolTip("cosh's list of the active databases, made afresh from the registry")
        self.editor_label = QLabel()
        self.editor_label.setObjectName("suffixEditLabel")
        self.editor_label.setWordWrap(True)
        self.suffix_edit = text_view("suffixEdit", monospace=True)
        self.suffix_splitter = QSplitter(Qt.Orientation.Vertical)
        self.suffix_splitter.setObjectName("suffixSplitter")
        self.suffix_splitter.setChildrenCollapsible(False)
        self.generated_pane = self._labelled(self.generated_label, self.generated_view)
        self.suffix_splitter.addWidget(self.generated_pane)
        self.suffix_splitter.addWidget(self._labelled(self.editor_label, self.suffix_edit))
        self.suffix_splitter.setSizes([300, 200])
        self.save_suffix_button = push_button(
            "&Save Suffix", "saveSuffixButton", "Agents get what the preview shows from now on (Ctrl+S)"
        )
        self.save_suffix_button.setShortcut("Ctrl+S")
        self.revert_suffix_button = push_button(
            "Revert", "revertSuffixButton", "Undo your edits: show what agents get now"
        )
        self.box = group_box(
            "Description suffix",
            [
                (self.mode_combo, 0),
                (self.suffix_state, 0),
                (self.suffix_drift, 0),
                (self.suffix_splitter, 1),
            ],
            [self.revert_suffix_button, self.save_suffix_button],
        )

        self.suffix_edit.textChanged.connect(self._on_suffix_edited)
        self.mode_combo.activated.connect(self._on_mode_chosen)
        self.save_suffix_button.clicked.connect(self.save_suffix)
        self.revert_suffix_button.clicked.connect(self.revert_suffix)

    @staticmethod
    def _labelled(label: QLabel, view: QPlainTextEdit) -> QWidget:
        """``view`` under ``label``, as one pane of a splitter; the view keeps at least three lines."""
        view.setMinimumHeight(3 * view.fontMetrics().lineSpacing())
        pane = QWidget()
        column = QVBoxLayout(pane)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(label)
        column.addWidget(view, 1)
        return pane

    def _on_suffix_edited(self) -> None:
        self.drafts.suffix.edit(self.suffix_edit.toPlainText())

    def _on_mode_chosen(self, index: int) -> None:
        self.drafts.suffix.set_mode(self.mode_combo.itemData(index))

    def show(self) -> None:
        """Everything about the suffix but its long texts, as the draft says: mode, state, drift, editor."""
        draft = self.drafts.suffix
        overriding = draft.mode is SuffixMode.OVERRIDE
        self.mode_combo.setCurrentIndex(self.mode_combo.findData(draft.mode))
        self.generated_pane.setVisible(not overriding)
        if self.suffix_edit.toPlainText() != draft.text:
            with QSignalBlocker(self.suffix_edit):
                self.suffix_edit.setPlainText(draft.text)
        if overriding:
            self.editor_label.setText(
                "Your text, served instead of the generated list (it does not follow the registry):"
            )
            self.suffix_edit.setPlaceholderText("Your own list of databases and what to search them for")
        else:
            self.editor_label.setText("Your notes, added after the list:")
            self.suffix_edit.setPlaceholderText(
                "e.g. “Prefer notes for questions about the team.” (the list above stays up to date)"
            )
        text, tone, tip = self._suffix_state()
        self.suffix_state.show_note(text, tone)
        self.suffix_state.setToolTip(tip)
        drift = draft.drift
        self.suffix_drift.setVisible(bool(drift))
        if drift:
            said = drift.describe()
            if draft.edited:  # not served yet: say what saving would do
                said = f"Once saved, {said[:1].lower()}{said[1:]}"
            self.suffix_drift.show_note(f"{said} {drift_advice(drift, draft.mode)}", "bad")
        self.save_suffix_button.setEnabled(draft.dirty)
        self.revert_suffix_button.setEnabled(draft.edited)

    def show_generated(self) -> None:
        """The generated list (long for a large registry: laid out only when it changed)."""
        generated = self.drafts.suffix.generated
        if self._generated_shown != generated:
            self._generated_shown = generated
            self.generated_view.setPlainText(generated)

    def apply_palette(self, palette: QPalette) -> None:
        """The generated list's view in the generated tint: it cannot be edited, and it is not the user's."""
        generated, _own = tints(palette)
        view_palette = self.generated_view.palette()
        view_palette.setColor(QPalette.ColorRole.Base, generated)
        self.generated_view.setPalette(view_palette)

    def _suffix_state(self) -> tuple[str, Tone, str]:
        """The sentence above the editor (and its tooltip): whether agents get what the page shows, and
        where the text came from."""
        draft = self.drafts.suffix
        saved = draft.saved
        status = draft.status
        if status is SuffixStatus.CHANGED_ELSEWHERE:
            return (
                "Edited, not saved — and the saved suffix was changed elsewhere meanwhile: Save replaces it "
                "with yours, Revert shows it.",
                "bad",
                "Another recall-gui window, or an editor, saved the suffix while you were editing here.",
            )
        if status is SuffixStatus.EDITED:
            return "Edited, not saved: agents still get the saved suffix.", "warning", ""
        if status is SuffixStatus.UNREADABLE:
            problem = saved.problems[0]
            return (
                f"{problem.path.name} cannot be read, so agents get the generated list alone. Below is what "
                f"could be read (� for bad bytes); Save replaces the file, keeping it as "
                f"{problem.path.name}.{UNREADABLE_TAG}.",
                "bad",
                problem.message,
            )
        if saved.legacy is not None:
            tip = f"{saved.legacy.path} was saved by recall-gui 0.1. Saving keeps it as {LEGACY_BACKUP}."
            if saved.mode is SuffixMode.NOTES:
                return (
                    f"From {LEGACY_FILE} (an earlier recall-gui): its database list is generated live now, "
                    "and the text after it is your notes.",
                    "good",
                    tip,
                )
            return (
                f"From {LEGACY_FILE} (an earlier recall-gui): it does not start with the generated list, so "
                "it still replaces it.",
                "good",
                tip,
            )
        if saved.mode is SuffixMode.OVERRIDE:
            return (
                "Saved: your text replaces the generated list; it does not follow the registry.",
                "good",
                "",
            )
        if saved.notes:
            return "Saved: agents get the live list, then your notes.", "good", ""
        return "Agents get the live list. Add notes below to tell them more.", "good", ""

    def announce_served(self) -> None:
        """Say in the banner when what agents get now names the wrong databases or cannot be read."""
        draft = self.drafts.suffix
        seen_saved, seen_registry = self._announced_for
        if seen_saved is draft.saved and seen_registry is draft.registry:
            return
        self._announced_for = (draft.saved, draft.registry)
        warnings = draft.served_warnings()
        if warnings and warnings != self._announced:
            first = warnings[0]
            self.services.show_message(UserMessage(first.message, first.hint, "warning"))
        self._announced = warnings

    def revert_suffix(self) -> None:
        self.drafts.suffix.revert()

    def save_suffix(self) -> bool:
        draft = self.drafts.suffix
        had_legacy = draft.saved.legacy is not None
        try:
            draft.save()
        except RecallError as error:
            message = user_message(error)
            hint = " ".join(filter(None, [message.hint, "Your text is still in the editor."]))
            self.services.show_message(replace(message, hint=hint))
            return False
        kept = f" The earlier {LEGACY_FILE} is kept as {LEGACY_BACKUP}." if had_legacy else ""
        warnings = draft.served_warnings()
        if warnings:  # saved as the user chose, but they should know
            first = warnings[0]
            self.services.show_message(
                UserMessage(f"Suffix saved.{kept} {first.message}", first.hint, "warning", "description")
            )
        else:
            self.services.show_message(
                UserMessage(f"{SAVED_FOR_MCP}{kept}", SAVED_NOT_FOR_COSH, "info", "description")
            )
        return True
