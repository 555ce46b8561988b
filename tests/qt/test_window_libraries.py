"""The window's libraries are the series the window was tested with (compat.TESTED; pyproject bounds them)."""

from __future__ import annotations

import pytest

from recall_gui.core.base import compat
from tests.core.test_compat import assert_tested
from tests.headless_requirements import QT


@pytest.mark.parametrize("package", sorted(set(compat.TESTED) & set(QT)))
def test_the_installed_window_libraries_are_the_series_tested(package: str) -> None:
    assert_tested(package)
