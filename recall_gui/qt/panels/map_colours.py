"""The map's colours: one colour for every point, or a column's categories or numbers, and the legend."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from recall_gui.qt.panels.map_raster import argb

if TYPE_CHECKING:
    from recall_gui.core.inspect import Colouring

#: Colours of categories (colour-blind-safe, Okabe & Ito, then Tableau), "other" in grey.
CATEGORY_COLOURS = (
    "#0072b2",
    "#e69f00",
    "#009e73",
    "#cc79a7",
    "#56b4e9",
    "#d55e00",
    "#f0e442",
    "#8c564b",
    "#9467bd",
    "#17becf",
)
OTHER_COLOUR = "#b0b0b0"
MISSING_COLOUR = "#d9d9d9"
#: Steps of a number's colour scale (viridis).
NUMBER_STEPS = 9
VIRIDIS = ("#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725")

#: ``(points, colour "#rrggbb", legend label)`` per group of points coloured alike.
Group = tuple[npt.NDArray[np.intp], str, str]


def colour_groups(count: int, colouring: Colouring | None, plain: str) -> list[Group]:
    """The points grouped by colour: ``(indices, colour, legend label)`` per group."""
    if colouring is None:
        return [(np.arange(count), plain, "")]
    codes = colouring.codes
    groups: list[Group] = []
    if colouring.kind == "category":
        for number, label in enumerate(colouring.labels):
            name = CATEGORY_COLOURS[number] if number < len(CATEGORY_COLOURS) else OTHER_COLOUR
            if label.startswith("other (") and number == len(colouring.labels) - 1:
                name = OTHER_COLOUR
            groups.append((np.flatnonzero(codes == number), name, label))
        groups.append((np.flatnonzero(codes < 0), MISSING_COLOUR, "missing"))
        return groups
    steps = np.minimum((np.nan_to_num(codes, nan=-1.0) * NUMBER_STEPS).astype(int), NUMBER_STEPS - 1)
    steps[np.isnan(codes)] = -1
    span = colouring.high - colouring.low
    for step in range(NUMBER_STEPS):
        low = colouring.low + span * step / NUMBER_STEPS
        groups.append((np.flatnonzero(steps == step), VIRIDIS[step], f"{low:,.4g}"))
    groups.append((np.flatnonzero(steps < 0), MISSING_COLOUR, "missing"))
    return groups


def colour_codes(count: int, groups: list[Group]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint32]]:
    """Each point's colour as an index into a palette of ARGB numbers (what the map draws from)."""
    codes = np.zeros(count, np.uint8)
    for number, (indices, _colour, _label) in enumerate(groups):
        codes[indices] = number
    palette = np.array([argb(colour) for _indices, colour, _label in groups] or [0], np.uint32)
    return codes, palette


def coloured(
    count: int, colouring: Colouring | None, plain: str
) -> tuple[list[Group], npt.NDArray[np.uint8], npt.NDArray[np.uint32]]:
    """The groups of points by colour and each point's colour (for a worker: passes over every point)."""
    groups = colour_groups(count, colouring, plain)
    return (groups, *colour_codes(count, groups))


def legend_html(colouring: Colouring | None, groups: list[Group]) -> str:
    """The legend under the map (empty for one colour)."""
    if colouring is None:
        return ""
    parts = [
        f'<span style="color:{colour}">■</span> {html.escape(label)}'
        for indices, colour, label in groups
        if label and (len(indices) or label != "missing")
    ]
    title = html.escape(colouring.column)
    if colouring.kind == "number":
        title += f" ({colouring.low:,.4g} to {colouring.high:,.4g})"
    return f"<b>{title}:</b> " + " &nbsp; ".join(parts)
