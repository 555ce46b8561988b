"""The map's points as one picture of the view, drawn with NumPy (off the GUI thread for big maps).

A scatter item builds a record per point and paints every point at every frame; a picture of the view
costs one pass over the points in view (on a worker thread for a big map) and one image for the GUI
thread to paint. Each point is a small disc of its
colour; where points fall on one pixel the last one's colour shows, and the pixel is the more opaque the
more points share it (as translucent discs stack), so dense regions stand out. Points chosen on the map
are drawn again on top, a little bigger, in the chosen colour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

#: One point's opacity (0..255); ``n`` points on a pixel give ``1 - (1 - a)^n``.
POINT_ALPHA = 170
#: Points handled in one step of drawing a picture.
CHUNK = 131_072
#: Pixels across a point, by how many points are in view.
SIZES = ((2_000, 8), (20_000, 6), (200_000, 4))
SMALLEST = 2


def point_size(points: int) -> int:
    """Pixels across a point: bigger on a sparse view, smaller where many points share it."""
    return next((size for most, size in SIZES if points <= most), SMALLEST)


def argb(colour: str, alpha: int = 255) -> int:
    """``#rrggbb`` as a 32-bit ARGB number."""
    return (alpha << 24) | int(colour.lstrip("#")[:6], 16)


@dataclass(frozen=True)
class Frame:
    """The part of the map a picture shows (map units) and its size in pixels."""

    left: float
    bottom: float
    right: float
    top: float
    width: int
    height: int

    @property
    def usable(self) -> bool:
        return self.width > 0 and self.height > 0 and self.right > self.left and self.top > self.bottom


@dataclass(frozen=True)
class Picture:
    """ARGB pixels of ``frame``, row 0 at its bottom edge, and how many points are in it."""

    pixels: npt.NDArray[np.uint32]
    frame: Frame
    points: int


class Points:
    """A map's points sorted by x once (so a view's points are a slice), with a colour index each.

    ``palette[code]`` is a point's colour (ARGB numbers); ``chosen`` (optional) marks the points drawn
    again on top in ``chosen_colour``."""

    def __init__(
        self,
        positions: npt.NDArray[np.float32],
        codes: npt.NDArray[np.uint8],
        palette: npt.NDArray[np.uint32],
        chosen: npt.NDArray[np.bool_] | None = None,
        chosen_colour: int = 0,
        *,
        order: npt.NDArray[np.intp] | None = None,
    ) -> None:
        #: The points from left to right (pass the same ``order`` again for the same positions).
        self.order = np.argsort(positions[:, 0], kind="stable") if order is None else order
        self.x = _taken(positions[:, 0], self.order)
        self.y = _taken(positions[:, 1], self.order)
        self.codes = _taken(codes, self.order)
        self.palette = palette
        self.chosen = None if chosen is None or not chosen.any() else _taken(chosen, self.order)
        self.chosen_colour = chosen_colour

    def __len__(self) -> int:
        return len(self.x)


def _taken(values: npt.NDArray[Any], order: npt.NDArray[np.intp]) -> npt.NDArray[Any]:
    """``values[order]``, a :data:`CHUNK` at a time (fancy indexing holds the interpreter's lock)."""
    taken = np.empty(len(order), values.dtype)
    for start in range(0, len(order), CHUNK):
        taken[start : start + CHUNK] = values[order[start : start + CHUNK]]
    return taken


def _disc(size: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Pixel offsets of a disc ``size`` pixels across (a square up to 2)."""
    span = np.arange(size) - (size - 1) / 2
    dx, dy = np.meshgrid(span, span)
    inside = dx * dx + dy * dy <= (size / 2) ** 2 if size > 2 else np.ones_like(dx, bool)
    return np.floor(dx[inside]).astype(np.intp), np.floor(dy[inside]).astype(np.intp)


def render(points: Points, frame: Frame) -> Picture:
    """The picture of ``points`` in ``frame``.

    Done :data:`CHUNK` points at a time: some of NumPy's steps (boolean and fancy indexing) hold the
    interpreter's lock, and a step over a million points would hold the window's thread that long."""
    width, height = frame.width, frame.height
    pixels = np.zeros(width * height, np.uint32)
    if not frame.usable or not len(points):
        return Picture(pixels.reshape(height, width), frame, 0)
    scale_x = width / (frame.right - frame.left)
    scale_y = height / (frame.top - frame.bottom)
    reach = SIZES[0][1] / min(scale_x, scale_y)  # points just outside still show a part of their disc
    first, last = (int(at) for at in np.searchsorted(points.x, [frame.left - reach, frame.right + reach]))
    placed: list[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp]]] = []
    inside = 0
    for start in range(first, last, CHUNK):
        stop = min(last, start + CHUNK)
        x, y = points.x[start:stop], points.y[start:stop]
        near = np.flatnonzero((y >= frame.bottom - reach) & (y <= frame.top + reach))
        column = np.floor((x[near] - frame.left) * scale_x).astype(np.intp)
        row = np.floor((y[near] - frame.bottom) * scale_y).astype(np.intp)
        inside += int(np.count_nonzero((column >= 0) & (column < width) & (row >= 0) & (row < height)))
        placed.append((near + start, column, row))
    size = point_size(inside)
    counts = np.zeros(width * height, np.intp)
    for which, column, row in placed:
        _stamp(pixels, (column, row, points.palette[points.codes[which]]), size, width, counts=counts)
    if points.chosen is not None:
        chosen = [(which, column, row, points.chosen[which]) for which, column, row in placed]
        bigger = 2 if sum(int(picked.sum()) for *_, picked in chosen) <= SIZES[1][0] else 0
        for _which, column, row, picked in chosen:  # a few chosen points stand out; many fill an area
            colour = np.full(int(picked.sum()), points.chosen_colour, np.uint32)
            _stamp(
                pixels, (column[picked], row[picked], colour), size + bigger, width, counts=counts, solid=True
            )
    alpha = np.rint(255 * (1.0 - (1.0 - POINT_ALPHA / 255.0) ** np.arange(17))).astype(np.uint32)
    for start in range(0, len(pixels), CHUNK):
        span = slice(start, start + CHUNK)
        pixels[span] = (pixels[span] & 0x00FFFFFF) | (alpha[np.minimum(counts[span], 16)] << 24)
    return Picture(pixels.reshape(height, width), frame, inside)


def _stamp(
    pixels: npt.NDArray[np.uint32],
    discs: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.uint32]],
    size: int,
    width: int,
    *,
    counts: npt.NDArray[np.intp],
    solid: bool = False,
) -> None:
    """Write each disc (``column``, ``row``, colour) into ``pixels``, rows ``width`` long (where discs
    overlap, one of their colours shows), and count in ``counts`` how many discs cover each pixel
    (``solid`` discs make their pixels opaque)."""
    column, row, colours = discs
    height = len(pixels) // width
    for dx, dy in zip(*(offsets.tolist() for offsets in _disc(size)), strict=True):
        cx, cy = column + dx, row + dy
        keep = np.flatnonzero((cx >= 0) & (cx < width) & (cy >= 0) & (cy < height))
        at = cy[keep] * width + cx[keep]
        pixels[at] = colours[keep]
        if solid:
            counts[at] = 16
        else:
            counts += np.bincount(at, minlength=len(counts))
