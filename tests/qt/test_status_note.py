"""The verdict note: its text, symbol and tint follow each verdict, whatever came before."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QWidget

from recall_gui.qt.panels.status_note import SYMBOLS, StatusNote


def test_text_and_tint_follow_each_verdict(qapp: QApplication) -> None:
    parent = QWidget()
    note = StatusNote("verdict", parent)
    note.show_note("rank 1 of 5", "good")
    good = note.styleSheet()
    assert note.text() == f"{SYMBOLS['good']}  rank 1 of 5" and "background-color" in good

    sheets: list[str] = []
    restyle = note.setStyleSheet
    note.setStyleSheet = lambda sheet: (sheets.append(sheet), restyle(sheet))  # type: ignore[method-assign,assignment]
    note.show_note("rank 2 of 5", "good")  # another text, the same tone
    assert note.text() == f"{SYMBOLS['good']}  rank 2 of 5" and note.message == "rank 2 of 5"
    assert note.styleSheet() == good and sheets == []  # not restyled (a style sheet relays out the note)

    note.show_note("rank 9: the agent does not see it", "bad")
    assert note.tone == "bad" and note.styleSheet() != good
    note.show_note("rank 9: the agent does not see it", "bad")  # the same again
    assert note.text().startswith(SYMBOLS["bad"])

    note.show_note("rank 1 of 5", "good")
    assert note.styleSheet() == good
