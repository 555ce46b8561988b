"""recall-gui: browse, search and verify the LanceDB knowledge bases LLM agents recall from."""

import os as _os

__version__ = "0.1.0"

#: NumPy's OpenBLAS works on one thread in this app, unless the user chose otherwise. Its only job here
#: is a search's scan, one matrix-vector product bound by memory bandwidth: one thread (NumPy's einsum
#: loop, which the exact search then picks) scans 1M x 384 vectors in 75-81 ms, two BLAS threads in 74 ms.
#: But BLAS's threads keep spinning for a while after every call, and on a 2-core machine they took the
#: core that the next query's embedding and the window need (window search, 100k rows: 1.35x its floor
#: with two BLAS threads, 1.26x with one). Set here, before anything imports NumPy.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
