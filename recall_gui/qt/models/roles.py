"""Item data roles shared by the table models and the code that sorts, copies and exports their rows."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontMetrics

from recall_gui.core.base import one_line as one_caption_line
from recall_gui.core.tables import plain_value as export_plain_value

#: The cell's full value (int, float or full text), for sorting, copying and export; the display text may
#: be shortened (one line, rounded) but this never is.
VALUE_ROLE = Qt.ItemDataRole.UserRole + 1
#: The whole row's core object (a SearchHit or a BrowseRow), for the detail panel.
ITEM_ROLE = Qt.ItemDataRole.UserRole + 2

#: How a row whose entry was reviewed is marked: a symbol beside its rank, a colour (wrong and outdated
#: are flagged; ``None``: the view's own) and a tooltip in words.
VerdictMark = tuple[str, QColor | None, str]

#: Longest text a one-line preview shows; views elide what does not fit anyway.
PREVIEW_CHARS = 400
#: Longest text a cell's tooltip shows.
TOOLTIP_CHARS = 600
#: Narrow characters of common text: a preview is cut after as many of the narrowest of them as fit.
_NARROW = " .,:;'!|ilIj1()[]"


_LEFT_HEADER = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter


def header_data(
    section: int, orientation: Qt.Orientation, role: int, titles: Sequence[str], tooltips: Mapping[int, str]
) -> Any:
    """What a table model's ``headerData`` answers: column ``titles`` (left-aligned: right-aligned titles
    would run into the sort arrow) and ``tooltips`` by column; no row headers."""
    if orientation != Qt.Orientation.Horizontal:
        return None
    if role == Qt.ItemDataRole.DisplayRole:
        return titles[section] if section < len(titles) else None
    if role == Qt.ItemDataRole.ToolTipRole:
        return tooltips.get(section)
    if role == Qt.ItemDataRole.TextAlignmentRole:
        return _LEFT_HEADER
    return None


def one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first ``limit`` characters of ``text`` on one line (runs of whitespace become one space)."""
    return one_caption_line(text, limit)


def plain_value(value: Any) -> Any:
    """A metadata value as JSON can hold it (the core's rule, which a whole-table export follows too)."""
    return export_plain_value(value)


def cell_text(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """A metadata value on one line, for a table cell."""
    plain = plain_value(value)
    if plain is None:
        return ""
    return one_line(plain if isinstance(plain, str) else json.dumps(plain), limit)


def chars_that_fit(width_px: int, metrics: QFontMetrics) -> int:
    """How many characters a cell ``width_px`` wide can show at most (at least one more than fit, so the
    view still elides): the width over the narrowest common glyph. A preview cut there looks the same as
    the whole text, and the view lays out (and elides) only that much of it."""
    narrowest = max(1, min(metrics.horizontalAdvance(char) for char in _NARROW))
    return min(PREVIEW_CHARS, max(0, width_px) // narrowest + 2)
