"""The app runs NumPy's OpenBLAS on one thread (see ``recall_gui/__init__.py``), unless the user chose a
number: checked in fresh interpreters, since OpenBLAS reads the setting once, when NumPy loads."""

from __future__ import annotations

import os
import sys

import pytest

from tests.probes import run_probe

PROBE = """
import glob, json, os, sys
if sys.argv[1] == "app":
    import recall_gui
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
def test_importing_the_app_first_keeps_openblas_to_one_thread() -> None:
    assert probe("numpy only")[0] > 1  # what OpenBLAS does on its own here
    assert probe("app") == (1, "1")


def test_a_users_own_setting_is_kept() -> None:
    assert probe("app", OPENBLAS_NUM_THREADS="2")[1] == "2"
