"""The run's local Ray: started by the first test that needs it and stopped after the last of a row of such
tests (tests/conftest.py runs them on one worker, one test after another), so its processes (0.5-0.9 GB
while a job runs) are not kept for the rest of the run. A later test that needs Ray starts it again.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path


class RunRay:
    """A local Ray of one core while the tests that use it run, and its address: its worker processes are
    half those of two cores (0.2-0.4 GB each), and the run's other pytest worker has the other core."""

    def __init__(self) -> None:
        self._stack: ExitStack | None = None
        self._address: str | None = None

    @property
    def running(self) -> bool:
        return self._stack is not None

    def address(self, ray_cache: Path, model_cache: Path) -> str:
        """The running Ray's address, starting it first if it is not running: with ``ray_cache`` as the
        app's cache folder while it starts (then ``model_cache`` again)."""
        if self._address is None:
            from recall_gui.core.ray.cluster import ray_cluster

            stack = ExitStack()
            os.environ["RECALL_GUI_CACHE_DIR"] = str(ray_cache)
            try:
                stack.enter_context(ray_cluster(cpus=1))
            finally:
                os.environ["RECALL_GUI_CACHE_DIR"] = str(model_cache)
            import ray

            self._stack, self._address = stack, str(ray.get_runtime_context().gcs_address)
        return self._address

    def stop(self) -> None:
        """Stop the Ray this started (nothing when it is not running)."""
        stack, self._stack, self._address = self._stack, None, None
        if stack is not None:
            stack.close()
