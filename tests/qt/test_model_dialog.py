"""The dialog that brings the exact model runs `recall-gui models get` as a child: every way of leaving it
(Cancel, Esc, the title bar's close) stops the child; a command that cannot start is said and can be tried
again; its output is shown line by line, whole characters only, a progress bar as its last state.

The child here is a stand-in for the command (a Python script): what is tested is the dialog's handling of
it, which the real command's tests do not reach."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QProcess, Qt
from pytestqt.qtbot import QtBot

from recall_gui.qt.dialogs import exact_model
from recall_gui.qt.dialogs.exact_model import ExactModelDialog

#: A command that says it started, then runs until it is stopped (it waits for input that never comes).
RUNS_UNTIL_STOPPED = "import sys\nprint('started', flush=True)\nsys.stdin.read()"
#: Half of a UTF-8 character, then (once told to go on) the rest, a progress bar, and an unended line.
WRITES_IN_PIECES = (
    "import sys\n"
    "out = sys.stdout.buffer\n"
    "out.write('café'.encode()[:-1])\n"
    "out.flush()\n"
    "sys.stdin.readline()\n"
    "out.write('café'.encode()[-1:] + b' ok\\r\\n')\n"
    "out.write(b'\\r 10%|#   |\\r 50%|##  |\\r100%|####|\\n')\n"
    "out.write(b'no end of line')"
)


@pytest.fixture
def child(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Makes the dialog run ``code`` with this Python instead of `models get`."""

    def use(code: str) -> None:
        monkeypatch.setattr(exact_model, "command", lambda _name, _source: (sys.executable, ["-c", code]))

    return use


def opened(qtbot: QtBot) -> ExactModelDialog:
    dialog = ExactModelDialog("AllMiniLML6V2")
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def lines(dialog: ExactModelDialog) -> list[str]:
    return dialog.output.toPlainText().splitlines()


@pytest.mark.parametrize("leave", ["escape", "close", "cancel"])
@pytest.mark.parametrize("source", [None, "/media/usb/models"])
def test_leaving_the_dialog_stops_the_running_command(
    qtbot: QtBot, child: Callable[[str], None], leave: str, source: str | None
) -> None:
    child(RUNS_UNTIL_STOPPED)
    dialog = opened(qtbot)
    dialog.start(source)
    qtbot.waitUntil(lambda: "started" in lines(dialog), timeout=30_000)
    process = dialog.process
    assert process is not None and process.state() == QProcess.ProcessState.Running
    with qtbot.waitSignal(dialog.rejected, timeout=30_000):
        if leave == "escape":
            qtbot.keyClick(dialog, Qt.Key.Key_Escape)
        elif leave == "close":
            dialog.close()  # as the title bar's close button does
        else:
            dialog.buttons.rejected.emit()
    assert process.state() == QProcess.ProcessState.NotRunning
    assert not dialog.isVisible() and not dialog.brought
    cancelled = next(line for line in lines(dialog) if line.startswith("Cancelled"))
    if source is None:
        assert cancelled == "Cancelled: the part downloaded so far is kept for next time."
    else:
        assert cancelled == "Cancelled."


def test_a_command_that_cannot_start_is_said_and_can_be_tried_again(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = str(tmp_path / "no-such-program")
    monkeypatch.setattr(exact_model, "command", lambda _name, _source: (missing, ["models", "get"]))
    dialog = opened(qtbot)
    dialog.start(None)
    qtbot.waitUntil(dialog.download_button.isEnabled, timeout=30_000)
    said = lines(dialog)
    assert said[0] == "$ recall-gui models get"
    assert said[1].startswith(f"The command failed: {missing}: ")
    assert said[2] == "The exact model was not brought (see above)."
    assert dialog.from_button.isEnabled() and not dialog.progress.isVisible() and not dialog.brought


def test_output_is_shown_in_whole_lines_and_characters(qtbot: QtBot, child: Callable[[str], None]) -> None:
    child(WRITES_IN_PIECES)
    dialog = opened(qtbot)
    dialog.start(None)
    echoed = lines(dialog)  # the command line (here the script)
    process = dialog.process
    assert process is not None
    with qtbot.waitSignal(process.readyReadStandardOutput, timeout=30_000):
        pass  # the dialog read the first piece: half a character, no line yet
    assert lines(dialog) == echoed
    process.write(b"go on\n")
    qtbot.waitUntil(lambda: dialog.download_button.isEnabled() or dialog.brought, timeout=30_000)
    assert lines(dialog)[len(echoed) :] == [
        "café ok",
        "100%|####|",
        "no end of line",
        "Done: AllMiniLML6V2 is exact now.",
    ]
