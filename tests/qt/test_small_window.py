"""At 800x500 (and 1280x800) the knowledge page shows its entry's Copy buttons, the buttons under the
table, the database's facts and the status bar whole, and the Duplicates and Health pages their controls,
without scrolling sideways: in an 800x500 window the Copy buttons were cut to "Co", the facts lost their
end and the status bar read "Searc…" and "Mod…"."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QApplication, QPushButton, QScrollArea, QWidget

from recall_gui.qt.scope.inputs import Inputs
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import WindowFactory, run


def whole(widget: QWidget) -> bool:
    """Shown, and none of it cut off by what holds it (a scroll area, a splitter, the window's edge)."""
    return widget.isVisible() and widget.visibleRegion().boundingRect() == widget.rect()


@pytest.mark.parametrize("size", [(800, 500), (1280, 800)])
def test_every_button_label_and_fact_is_whole_at_800_by_500_and_1280_by_800(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, size: tuple[int, int]
) -> None:
    window = open_window(kb.registry_dir)
    window.resize(*size)
    page = window.knowledge
    run(loop, page.searching.search(Inputs("capital of France", 5)))
    run(loop, window.operations.wait_idle())
    assert page.detail.showing
    for name in ("copyIdButton", "copyVectorButton", "moreLikeButton", "addGoldenButton"):
        assert whole(window.findChild(QPushButton, name)), name
    for label in page.status_labels:
        assert whole(label) and label.text(), label.objectName()
    assert not page.status_search.is_elided() and not page.status_model.is_elided()
    info = page.database_bar.info
    assert info.text().endswith("· version 1") and whole(info)
    assert info.heightForWidth(info.width()) <= info.height()  # every line of the facts shown

    for shown, controls in (
        (window.duplicates, ("duplicatesFindButton", "duplicatesCancelButton")),
        (window.health, ("healthCheckButton", "healthCancelButton")),
    ):
        window.pages.setCurrentWidget(shown)
        QApplication.processEvents()  # the page laid out in the window as it is shown
        area = window.pages.widget(window.pages.indexOf(shown))
        assert isinstance(area, QScrollArea)
        assert not area.horizontalScrollBar().isVisible(), shown.objectName()
        for name in controls:
            assert whole(window.findChild(QPushButton, name)), name
