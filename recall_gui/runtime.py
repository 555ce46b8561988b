"""How the process is set up before anything heavy loads; every entry point calls this, importing the
package never does."""

from __future__ import annotations

import os

from recall_gui import core


def configure_process() -> None:
    """Settings that must be in the environment before NumPy loads; a value the user set wins.

    NumPy's OpenBLAS runs on one thread: a search's scan is one memory-bound product, and BLAS threads
    spin after each call, taking the core the next embedding and the window need
    (docs/PERFORMANCE_LOG.md#recall_gui-openblas_num_threads).
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # When LanceDB is first imported: its REST client loads only if a REST namespace is used.
    core.base.defer_lance_rest_client_on_import()
