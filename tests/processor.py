"""Which processor the tests run on, for the results that depend on its arithmetic (LanceDB's summation
order, onnxruntime's rounding): those measured to hold on a kind of processor are required there."""

from __future__ import annotations

import contextlib
from pathlib import Path


def _cpuinfo(field: str) -> str:
    """The first value of ``field`` in /proc/cpuinfo, or ``""``."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(field):
                return line.split(":", 1)[1].strip()
    return ""


def vendor() -> str:
    """The processor's vendor as Linux names it (``GenuineIntel``, ``AuthenticAMD``), or ``""``."""
    return _cpuinfo("vendor_id")


def intel() -> bool:
    """An Intel processor: the kind the prebuilt demo was embedded on."""
    return vendor() == "GenuineIntel"


def lancedb_kernels() -> str | None:
    """Which of LanceDB's distance kernels run here, by the processor's features, where an emulation of
    them was measured (core/session/lance_distance.py): ``avx512``, ``avx2`` (with FMA, no AVX-512), or
    ``None``."""
    features = set(_cpuinfo("flags").split())
    if "avx512f" in features:
        return "avx512"
    return "avx2" if {"avx2", "fma"} <= features else None
