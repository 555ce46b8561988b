"""The map's picture of a view: each point's disc where the point is, in its colour, more opaque where
points share a pixel, chosen points on top; the points outside the view are not counted."""

from __future__ import annotations

import numpy as np

from recall_gui.qt.panels.map_raster import CHUNK, Frame, Points, argb, point_size, render

BLUE, ORANGE, CHOSEN = argb("#0072b2"), argb("#e69f00"), argb("#2f81f7")


def pixel(picture: object, x: float, y: float) -> int:
    """The ARGB value of the pixel at map coordinates ``(x, y)`` (row 0 is the frame's bottom)."""
    frame = picture.frame  # type: ignore[attr-defined]
    column = int((x - frame.left) / (frame.right - frame.left) * frame.width)
    row = int((y - frame.bottom) / (frame.top - frame.bottom) * frame.height)
    return int(picture.pixels[row, column])  # type: ignore[attr-defined]


def test_a_point_is_a_disc_of_its_colour_where_it_is_and_nothing_elsewhere() -> None:
    positions = np.array([[0.25, 0.25], [0.75, 0.5], [5.0, 5.0]], np.float32)
    palette = np.array([BLUE, ORANGE], np.uint32)
    points = Points(positions, np.array([0, 1, 1], np.uint8), palette)
    picture = render(points, Frame(0.0, 0.0, 1.0, 1.0, 200, 100))
    assert picture.points == 2  # the third lies outside the view
    assert pixel(picture, 0.25, 0.25) & 0xFFFFFF == BLUE & 0xFFFFFF
    assert pixel(picture, 0.75, 0.5) & 0xFFFFFF == ORANGE & 0xFFFFFF
    assert pixel(picture, 0.5, 0.9) >> 24 == 0  # transparent: the background shows
    drawn = int(np.count_nonzero(picture.pixels >> 24))
    size = point_size(2)
    assert 2 * (size - 2) ** 2 <= drawn <= 2 * size * size  # two discs of about size x size pixels


def test_points_sharing_a_pixel_make_it_more_opaque_and_chosen_points_come_on_top() -> None:
    lone = np.array([[0.2, 0.2]], np.float32)
    many = np.repeat(np.array([[0.7, 0.7]], np.float32), 5, axis=0)
    positions = np.vstack([lone, many])
    codes = np.zeros(len(positions), np.uint8)
    palette = np.array([BLUE], np.uint32)
    frame = Frame(0.0, 0.0, 1.0, 1.0, 100, 100)
    picture = render(Points(positions, codes, palette), frame)
    assert pixel(picture, 0.7, 0.7) >> 24 > pixel(picture, 0.2, 0.2) >> 24 > 0
    chosen = np.zeros(len(positions), bool)
    chosen[0] = True
    marked = render(Points(positions, codes, palette, chosen, CHOSEN), frame)
    assert pixel(marked, 0.2, 0.2) == CHOSEN | 0xFF000000  # opaque, in the chosen colour
    assert pixel(marked, 0.7, 0.7) & 0xFFFFFF == BLUE & 0xFFFFFF


def test_a_view_of_more_points_than_one_step_counts_and_draws_every_one() -> None:
    rows = 2 * CHUNK + 5
    positions = np.random.default_rng(0).uniform(0, 1, size=(rows, 2)).astype(np.float32)
    points = Points(positions, np.zeros(rows, np.uint8), np.array([BLUE], np.uint32))
    picture = render(points, Frame(0.0, 0.0, 0.5, 1.0, 300, 600))
    x, y = positions[:, 0].astype(np.float64), positions[:, 1].astype(np.float64)
    assert picture.points == int(((x >= 0) & (x < 0.5) & (y >= 0) & (y < 1)).sum())
    corner = positions[np.argmin(np.hypot(x - 0.25, y - 0.5))]
    assert pixel(picture, float(corner[0]), float(corner[1])) >> 24 > 0
