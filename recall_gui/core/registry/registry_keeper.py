"""The registry a long-running reader serves (the MCP server, a harness): read again when its files change,
and kept as last read whole while a file does not parse.

Another program may rewrite ``rag_dbs.json`` or ``rag_active.json`` in place (truncate, write, write the
rest): read in between, the file is empty or cut short, and taken as it is every database would vanish
for agents ("Active databases: (none)") and come back a moment later, each time telling clients the tool
list changed. So a read that finds a file that does not parse is retried for a moment, and while the file
still does not parse the last registry that did is served, with the new file stamps (it is read again at
the file's next change, not at every call), and the log says so (once in :data:`WARN_EVERY_S`: a writer
that pauses long between writes would otherwise fill the log).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_types import Registry

#: How long a read that finds a file that does not parse is retried: a writer's pause between two
#: writes of one file is milliseconds.
RETRY_S = 0.1
#: The pause between two reads of those.
RETRY_PAUSE_S = 0.005
#: The least time between two warnings that the last registry read whole is served.
WARN_EVERY_S = 600.0

logger = logging.getLogger(__name__)


class RegistryKeeper:
    """The registry of ``directory`` for a reader that serves it again and again (see the module)."""

    def __init__(
        self,
        directory: Path,
        registry: Registry | None = None,
        *,
        retry_s: float = RETRY_S,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.directory = Path(directory)
        self.retry_s = retry_s
        self._sleep = sleep
        self._registry = registry
        self._parsed = registry if registry is not None and not registry.unparsed else None
        #: Set while the last registry that parsed is served in place of what the files hold.
        self.kept_since: float | None = None
        self._warned_at: float | None = None

    def get(self) -> Registry:
        """The registry: as last read while its files are unchanged, read again when they changed."""
        if self._registry is None or self._registry.changed_on_disk():
            self._registry = self._read()
        return self._registry

    def reload(self) -> Registry:
        """The registry read again now."""
        self._registry = self._read()
        return self._registry

    def _read(self) -> Registry:
        fresh = load_registry(self.directory, self._parsed)
        deadline = time.monotonic() + self.retry_s
        while fresh.unparsed and time.monotonic() < deadline:
            self._sleep(RETRY_PAUSE_S)
            fresh = load_registry(self.directory, self._parsed)
        now = time.monotonic()
        if not fresh.unparsed:
            if self.kept_since is not None and self._warned_at == self.kept_since:
                logger.info("the registry in %s reads whole again: serving it as it is now", self.directory)
            self.kept_since = None
            self._parsed = fresh
            return fresh
        if self._parsed is None:  # nothing read whole yet: what the files hold, problems and all
            return fresh
        if self.kept_since is None:
            self.kept_since = now
            if self._warned_at is None or now - self._warned_at >= WARN_EVERY_S:
                self._warned_at = now
                logger.warning(
                    "%s: serving the registry in %s as last read whole until it parses",
                    "; ".join(str(problem) for problem in fresh.problems if problem.file in fresh.unparsed),
                    self.directory,
                )
        return replace(self._parsed, stamps=fresh.stamps)
