"""The table the knowledge page shows, as the pages that follow it see it.

The History and Map pages show the knowledge page's current table (at the version it shows) and act on it
(open a version, a row, a selection there). They are handed this interface, not the page: they depend on
what they use, and a page can be built and tested against any object that has it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import SignalInstance

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from recall_gui.core.base import SearchHit
    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.search import SearchReport
    from recall_gui.core.storage import TableTarget
    from recall_gui.qt.scope.inputs import Inputs


class TableScope(Protocol):
    """The current table, its version, the last search on it and the rows chosen on it."""

    @property
    def scopeChanged(self) -> SignalInstance:
        """Another table, version, filter or selection."""

    @property
    def searchFinished(self) -> SignalInstance: ...

    @property
    def browseReady(self) -> SignalInstance: ...

    @property
    def current(self) -> DatabaseEntry | None: ...

    @property
    def version(self) -> int | None:
        """The version shown, ``None`` for the latest."""

    @property
    def selection(self) -> tuple[npt.NDArray[np.uint64], str] | None: ...

    @property
    def last_report(self) -> SearchReport | None: ...

    def target(self) -> TableTarget: ...

    def read_inputs(self) -> Inputs: ...

    async def open_version(self, version: int | None, inputs: Inputs = ...) -> None: ...

    def request_version(self, version: int | None) -> None:
        """Open ``version`` (``None``: the latest) in the page's search lane, with what the user typed."""

    async def open_row(self, row_id: int, how: str = ...) -> SearchHit | None: ...

    async def show_selection(self, row_ids: npt.NDArray[np.uint64], label: str, inputs: Inputs) -> None: ...

    async def clear_selection(self, inputs: Inputs) -> None: ...
