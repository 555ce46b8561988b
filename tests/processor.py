"""Which processor the tests run on, for the results that depend on its arithmetic (LanceDB's summation
order, onnxruntime's rounding): those measured to hold on Intel processors are required there."""

from __future__ import annotations

import contextlib
from pathlib import Path


def vendor() -> str:
    """The processor's vendor as Linux names it (``GenuineIntel``, ``AuthenticAMD``), or ``""``."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("vendor_id"):
                return line.split(":", 1)[1].strip()
    return ""


def intel() -> bool:
    """An Intel processor: the kind LanceDB's arithmetic was measured on (core/session/lance_distance.py)
    and the prebuilt demo was embedded on."""
    return vendor() == "GenuineIntel"
