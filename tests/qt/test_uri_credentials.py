"""The window never shows a password written into a database's URI, and never keeps one in its settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.kbtools import write_registry
from tests.qt.conftest import WindowFactory
from tests.s3server import ACCESS_KEY, SECRET_KEY

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own


def test_a_password_in_a_uri_is_masked_in_the_window_and_kept_out_of_its_settings(
    s3: Any, open_window: WindowFactory, tmp_path: Path
) -> None:
    options = s3.storage_options()
    uri = f"s3://{ACCESS_KEY}:{SECRET_KEY}@{s3.bucket}/team/kb"
    entry = {
        "name": "team",
        "uri": uri,
        "table": "docs",
        "description": "the team's notes",
        "embedder": {"Local": {"model": "AllMiniLML6V2"}},
        "storage_options": {k: options[k] for k in ("aws_endpoint", "aws_region", "allow_http")},
    }
    registry = write_registry(tmp_path / "registry", [entry])
    window = open_window(registry, config_dir=tmp_path / "config")
    bar = window.knowledge.database_bar
    shown = f"s3://{ACCESS_KEY}:***@{s3.bucket}/team/kb"
    tip = bar.combo.itemData(0, Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith(shown)
    assert SECRET_KEY not in bar.combo.itemText(0) + tip + bar.info.toolTip()
    window.knowledge.opened.recent.remember(uri, "docs", options)
    settings = "".join(p.read_text(errors="replace") for p in (tmp_path / "config").rglob("*") if p.is_file())
    assert f"s3://{s3.bucket}/team/kb" in settings
    assert SECRET_KEY not in settings
