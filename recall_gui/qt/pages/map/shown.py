"""What the map page shows, shared by its parts: the map drawn, the table it was made from, the points
chosen on it, the colouring and the labels read, and the map widget once it is made."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from recall_gui.core.inspect import Colouring, TableMap
    from recall_gui.core.storage import TableTarget
    from recall_gui.qt.panels.map_view import MapView


class MapShown:
    """The state of the map page; the parts read and change it on the GUI thread only."""

    def __init__(self) -> None:
        self.view: MapView | None = None
        self.table_map: TableMap | None = None
        self.target: TableTarget | None = None
        #: The column the points are coloured by, and its values at the points of the map they were read for.
        self.colour_column: str | None = None
        self.colours: tuple[TableMap, Colouring] | None = None
        #: Each row's id and first line, by row id, as read for the labels under the pointer.
        self.labels: dict[int, tuple[str, str]] = {}
        #: The points chosen on the map (a mask over its points), if any.
        self.chosen: npt.NDArray[np.bool_] | None = None
