"""The app runs NumPy's OpenBLAS on one thread (``recall_gui.runtime.configure_process``, which every entry
point calls), unless the user chose a number: checked in fresh interpreters, since OpenBLAS reads the
setting once, when NumPy loads. Importing the package alone changes nothing."""

from __future__ import annotations

import os
import sys

import pytest

from tests.probes import run_probe

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

PROBE = """
import glob, importlib.util, json, os, sys
import recall_gui, recall_gui.core
if importlib.util.find_spec("PySide6") is not None:  # `make test-core` runs without Qt
    import recall_gui.qt
if sys.argv[1] == "app":
    from recall_gui.runtime import configure_process
    configure_process()
import numpy as np
a = np.ones((1500, 1500), np.float32)
for _ in range(3):
    a @ a  # a product big enough for BLAS to start its threads, if it has any
threads = len(glob.glob("/proc/self/task/*"))
print(json.dumps({"threads": threads, "setting": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""


def probe(mode: str, **env: str) -> tuple[int, str | None]:
    """The process's thread count after a big product, and ``OPENBLAS_NUM_THREADS`` as it saw it."""
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    found = run_probe(PROBE, mode, env={**environment, **env})
    return int(found["threads"]), found["setting"]


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or (os.cpu_count() or 1) < 2, reason="needs /proc, 2 cores"
)
def test_the_apps_set_up_keeps_openblas_to_one_thread_and_importing_it_does_not() -> None:
    assert probe("import only") == (probe("import only")[0], None)  # no side effect of importing
    assert probe("import only")[0] > 1  # what OpenBLAS does on its own here
    assert probe("app") == (1, "1")


def test_a_users_own_setting_is_kept() -> None:
    assert probe("app", OPENBLAS_NUM_THREADS="2")[1] == "2"
