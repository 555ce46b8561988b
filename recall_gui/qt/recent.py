"""The folders and URIs opened lately (File ▸ Open Recent), kept with the window's settings.

Only what reopens a place is kept: its URI, the table chosen, and the storage options that are not
secrets (an endpoint, a region); keys, tokens and passwords are never written to the settings file, so a
place that needs them is reopened with the AWS_* variables or through Open URI… again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from recall_gui.core.base import without_credentials
from recall_gui.core.storage import without_secrets
from recall_gui.qt.settings import WindowMemory

RECENT_KEY = "opened/recent"
#: How many places File ▸ Open Recent lists.
MAX_RECENT = 10


@dataclass(frozen=True)
class RecentPlace:
    uri: str
    table: str | None = None
    storage_options: Mapping[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.table} — {self.uri}" if self.table else self.uri

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"uri": self.uri}
        if self.table:
            data["table"] = self.table
        if self.storage_options:
            data["storage_options"] = dict(self.storage_options)
        return data


class RecentPlaces:
    """The recent list, newest first, read from and written to the window's settings."""

    def __init__(self, memory: WindowMemory) -> None:
        self.memory = memory

    def places(self) -> list[RecentPlace]:
        try:
            raw = json.loads(self.memory.text(RECENT_KEY) or "[]")
        except ValueError:
            return []  # a settings file edited by hand: start a new list rather than fail
        found: list[RecentPlace] = []
        for item in raw if isinstance(raw, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
                continue
            table = item.get("table") if isinstance(item.get("table"), str) else None
            options = item.get("storage_options")
            if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
                options = {}
            found.append(RecentPlace(item["uri"], table, options))
        return found[:MAX_RECENT]

    def remember(self, uri: str, table: str | None, storage_options: Mapping[str, str]) -> None:
        uri = without_credentials(uri)  # a password in the URI is a secret like a key
        place = RecentPlace(uri, table, without_secrets(storage_options))
        kept = [p for p in self.places() if (p.uri, p.table) != (uri, table)]
        self._save([place, *kept][:MAX_RECENT])

    def clear(self) -> None:
        self._save([])

    def _save(self, places: list[RecentPlace]) -> None:
        self.memory.set(RECENT_KEY, json.dumps([p.to_json() for p in places], ensure_ascii=False))
        self.memory.sync()
