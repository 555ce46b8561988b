"""The map widget on its own: a big map's picture, drawn on a worker, always ends in the newest colours
and choice, even when they change while an older picture is being drawn."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from recall_gui.core.inspect.table_map import TableMap
from recall_gui.core.session.map_cache import Projection
from recall_gui.qt.panels.map_raster import argb
from recall_gui.qt.panels.map_view import CHOSEN_COLOUR, DRAW_HERE_POINTS, MapView
from tests.qt.conftest import run, until


def colour_at(view: MapView, x: float, y: float) -> QColor:
    """The colour the picture shown gives the map's place ``(x, y)`` (its row 0 is the view's bottom)."""
    image, rect = view.picture.image, view.picture.rect
    assert image is not None
    column = int((x - rect.left()) / rect.width() * image.width())
    row = int((y - rect.top()) / rect.height() * image.height())
    return image.pixelColor(column, row)


def test_colours_and_a_choice_made_while_a_picture_is_drawn_are_drawn_next(
    loop: asyncio.AbstractEventLoop, qtbot: QtBot
) -> None:
    rows = 2 * DRAW_HERE_POINTS
    positions = np.random.default_rng(5).normal(size=(rows, 2)).astype(np.float32)
    table_map = TableMap(
        "t", 1, Projection(positions, "pca", 0), np.arange(rows, dtype=np.uint64), rows, False
    )
    workers = ThreadPoolExecutor(1)
    view = MapView(workers=workers)
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    view.begin(table_map)
    held = threading.Event()
    workers.submit(held.wait)  # the picture below waits behind this until the test lets it go
    codes = np.zeros(rows, np.uint8)
    view.show_points(codes, np.array([argb("#0072b2")], np.uint32))  # blue, being drawn
    chosen = positions[:, 0] < -1.0
    view.show_points(codes, np.array([argb("#e69f00")], np.uint32))  # orange, while blue is drawn
    view.show_chosen(chosen)
    held.set()
    run(loop, until(lambda: not view.moving, "the newest colours and choice are drawn"))
    x, y = positions[:, 0], positions[:, 1]
    picked = int(np.argmin(np.hypot(x + 2.0, y)))  # chosen: left of -1
    other = int(np.argmin(np.hypot(x - 2.0, y)))  # not chosen
    assert chosen[picked] and not chosen[other]
    assert colour_at(view, float(x[picked]), float(y[picked])).rgb() == CHOSEN_COLOUR.rgb()
    plain = colour_at(view, float(x[other]), float(y[other]))
    assert plain.alpha() > 0 and plain.red() > plain.blue()  # orange, not blue
    # Panning again keeps them: the points sorted for the newest colours are the ones drawn from.
    view.box.translateBy(x=0.1)
    run(loop, until(lambda: not view.moving, "the moved view is drawn"))
    assert colour_at(view, float(x[picked]), float(y[picked])).rgb() == CHOSEN_COLOUR.rgb()
    workers.shutdown()
