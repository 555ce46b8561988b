"""The installed PySide6 keeps None's reference count straight (pyproject excludes 6.12.0, whose void
methods return None without a reference: on Python 3.11 the count then drifts down by one per call until
the interpreter aborts with "deallocating None")."""

from __future__ import annotations

import sys
from typing import Any

import pytest


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12 on")
def test_void_qt_calls_leave_nones_reference_count_alone(qapp: Any) -> None:
    from PySide6.QtWidgets import QLabel, QPushButton

    label, button = QLabel(), QPushButton()
    calls = 2000
    before = sys.getrefcount(None)
    for _ in range(calls // 2):
        label.setText("searching…")
        button.setEnabled(True)
    drift = sys.getrefcount(None) - before
    assert abs(drift) < calls // 20, f"None's reference count moved by {drift} over {calls} calls"
