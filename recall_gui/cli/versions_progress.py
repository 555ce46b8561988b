"""How far ``check --versions`` is, told on stderr."""

from __future__ import annotations

import time
from typing import TextIO

from recall_gui.cli.versions import ListingProgress
from recall_gui.core.base import printable


class VersionsRunProgress:
    """How far ``check --versions`` is, on stderr: on a terminal one line redrawn in place; anywhere else
    (a pipe, a CI log) a line every :data:`EVERY` versions, at the last one, and after :data:`QUIET_S`
    seconds without one, so a log shows that the run moves."""

    EVERY = 100
    QUIET_S = 30.0

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.on_terminal = stream.isatty()
        self._listings: dict[str, ListingProgress] = {}
        self._drawn = False
        self._line_at = time.monotonic()

    def listing(self, name: str, count: int | None, seconds: float) -> None:
        self._listings.setdefault(name, ListingProgress(name))(count, seconds)

    def ran(self, name: str, done: int, total: int, version: int) -> None:
        listing = self._listings.pop(name, None)
        if listing is not None:
            listing.end()
        text = f"{printable(name)}: checked version {version} ({done:,} of {total:,} versions)"
        if self.on_terminal:
            print(f"\r{text}\x1b[K", end="", file=self.stream, flush=True)
            self._drawn = True
            return
        now = time.monotonic()
        if done % self.EVERY == 0 or done == total or now - self._line_at >= self.QUIET_S:
            print(text, file=self.stream, flush=True)
            self._line_at = now

    def end(self) -> None:
        for listing in self._listings.values():
            listing.end()
        if self._drawn:
            print(file=self.stream, flush=True)
