"""The app icon (an SVG, sharp at any scale) and the small status dots beside databases."""

from __future__ import annotations

from importlib import resources

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap

APP_ICON = "recall-gui.svg"

#: Health colours: the same meaning in light and dark palettes, readable on both.
STATUS_COLORS = {"ok": "#2e9d4f", "failed": "#d2453a", "checking": "#8a8f98", "inactive": "#8a8f98"}


def app_icon() -> QIcon:
    path = resources.files("recall_gui.qt").joinpath("assets", APP_ICON)
    return QIcon(str(path))


def status_dot(state: str, size: int = 16) -> QIcon:
    """A filled circle (a ring for "inactive"), drawn at 1x and 2x so it stays crisp on high-DPI
    screens."""
    icon = QIcon()
    for scale in (1, 2):
        pixmap = QPixmap(size * scale, size * scale)
        pixmap.setDevicePixelRatio(scale)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        colour = QColor(STATUS_COLORS.get(state, STATUS_COLORS["checking"]))
        if state == "inactive":  # a ring: it can be searched, but no agent does
            painter.setPen(QPen(colour, size * 0.12))
            painter.setBrush(Qt.BrushStyle.NoBrush)
        else:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
        margin = size * 0.25
        painter.drawEllipse(QRectF(margin, margin, size - 2 * margin, size - 2 * margin))
        painter.end()
        icon.addPixmap(pixmap)
    return icon
