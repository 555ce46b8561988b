"""recall-gui: browse, search and verify the LanceDB knowledge bases LLM agents recall from."""

import os as _os

__version__ = "0.1.0"

#: NumPy's OpenBLAS works on one thread in this app, unless the user chose otherwise: its only job, a
#: search's scan, is bound by memory bandwidth, and idle BLAS threads spin on the cores the next embedding
#: and the window need (docs/PERFORMANCE.md#recall_gui-openblas_num_threads). Set before NumPy is imported.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
