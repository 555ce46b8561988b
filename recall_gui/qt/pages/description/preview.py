"""What the agent gets, as the description page previews it: the full tool description and the MCP tool
object, with the generated (live) list and the user's own text tinted apart, and a legend of the tints."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTabWidget, QTextEdit

from recall_gui.core.base import DEFAULT_DESCRIPTION, Recall, compose_description
from recall_gui.core.drafts import SuffixDraft
from recall_gui.core.registry import SuffixMode
from recall_gui.qt.panels.status_note import tint
from recall_gui.qt.widgets import group_box, text_view

#: What is generated from the registry (the live list) is tinted towards this colour, in its view and in
#: the preview; the user's own text towards the palette's highlight colour.
GENERATED_ACCENT = QColor("#2e9e5b")
GENERATED_TINT = 0.10

#: How strongly the user's own text is tinted in the preview (towards the palette's highlight colour).
OWN_TEXT_TINT = 0.22


def tints(palette: QPalette) -> tuple[QColor, QColor]:
    """The tints of the generated (live) text and of the user's own, mixed from ``palette``."""
    base = palette.color(QPalette.ColorRole.Base)
    return (
        tint(base, GENERATED_ACCENT, GENERATED_TINT),
        tint(base, palette.color(QPalette.ColorRole.Highlight), OWN_TEXT_TINT),
    )


def _band(view: QPlainTextEdit, start: int, end: int, colour: QColor) -> QTextEdit.ExtraSelection:
    """Whole lines of ``view`` from ``start`` to ``end`` (Qt positions) behind ``colour``."""
    selection = QTextEdit.ExtraSelection()
    cursor = QTextCursor(view.document())
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    selection.cursor = cursor
    char_format = QTextCharFormat()
    char_format.setBackground(colour)
    char_format.setProperty(QTextFormat.Property.FullWidthSelection, True)
    selection.format = char_format
    return selection


def utf16_length(text: str) -> int:
    """``text``'s length as Qt counts it (UTF-16 code units: an emoji counts two)."""
    return len(text.encode("utf-16-le")) // 2


class Preview:
    """``descriptionPreview``, ``toolJsonView`` and the legend, in one box (:attr:`box`)."""

    def __init__(self) -> None:
        self.description_preview = text_view("descriptionPreview", read_only=True)
        self.tool_json_view = text_view("toolJsonView", read_only=True, monospace=True)
        self.preview_tabs = QTabWidget()
        self.preview_tabs.setObjectName("previewTabs")
        self.preview_tabs.addTab(self.description_preview, "Full description")
        self.preview_tabs.addTab(self.tool_json_view, "MCP tool JSON")
        self.preview_legend = QLabel()
        self.preview_legend.setObjectName("previewLegend")
        self.preview_legend.setWordWrap(True)
        self.preview_legend.setTextFormat(Qt.TextFormat.RichText)
        self.box = group_box("What the agent gets", [(self.preview_tabs, 1), (self.preview_legend, 0)])
        #: What is shown (the suffix, the user's text, the mode, the tints): laid out again only on a change.
        self._shown: tuple[object, ...] | None = None

    def show(self, draft: SuffixDraft, palette: QPalette) -> None:
        """The full description and the tool JSON as agents would get them if saved now, the generated
        list and the user's own text tinted apart."""
        suffix = draft.shown
        generated_colour, own_colour = tints(palette)
        overriding = draft.mode is SuffixMode.OVERRIDE
        shown = (suffix, draft.text, overriding, generated_colour.rgba(), own_colour.rgba())
        if shown == self._shown:
            return
        self._shown = shown
        self.description_preview.setPlainText(compose_description(suffix))
        self.tool_json_view.setPlainText(Recall().with_description(suffix).to_json())
        head = utf16_length(f"{DEFAULT_DESCRIPTION}\n\n")
        own_start = head + utf16_length(suffix[: len(suffix) - len(draft.text)])
        ranges = [(own_start, own_start + utf16_length(draft.text) if draft.text else own_start, own_colour)]
        if not overriding:
            ranges.insert(0, (head, own_start, generated_colour))
        self.description_preview.setExtraSelections(
            [_band(self.description_preview, *r) for r in ranges if r[1] > r[0]]
        )
        chips = [(own_colour, "your own text" if overriding else "your notes")]
        if not overriding:
            chips.insert(0, (generated_colour, "generated, live"))
        self.preview_legend.setText(
            "In the preview: "
            + " · ".join(
                f'<span style="background-color:{c.name()}">&nbsp;{t}&nbsp;</span>' for c, t in chips
            )
        )
