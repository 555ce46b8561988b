"""Running a snippet of Python in a fresh interpreter, for checks that depend on what a process loaded
or started first (imports, thread pools, runtimes), which one test process cannot undo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_probe(code: str, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120) -> Any:
    """The JSON the snippet prints as its last line; ``env`` replaces the environment (the project stays
    importable). A failing snippet fails the test with its stderr."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        check=False,
        capture_output=True,
        text=True,
        env={**(os.environ if env is None else env), "PYTHONPATH": str(ROOT)},
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
