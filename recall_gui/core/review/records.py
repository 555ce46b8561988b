"""One line of a review file (:class:`ReviewRecord`): a verdict on an entry, named by its content's
sha256, or the undoing of an earlier verdict. docs/REVIEW.md describes the format.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from recall_gui.core.base.errors import InvalidInputError

#: The format of the lines this version writes; a line of a newer format is reported, not guessed at.
FORMAT = 1
VERDICTS = ("correct", "outdated", "wrong", "duplicate", "skip")
#: Verdicts that say an entry must not be given to an agent as it stands: flagged wherever it appears.
FLAGGED = frozenset({"wrong", "outdated"})
#: Verdicts that count as reviewed (a skipped entry was seen, not judged).
JUDGED = ("correct", "outdated", "wrong", "duplicate")
#: A verdict as a small number: its place in VERDICTS plus one (0: none).
CODES = {verdict: code for code, verdict in enumerate(VERDICTS, start=1)}
JUDGED_CODES = tuple(CODES[verdict] for verdict in JUDGED)
Kind = Literal["verdict", "undo"]
VERDICT: Kind = "verdict"
UNDO: Kind = "undo"

_SHA = re.compile(r"[0-9a-f]{64}")
_RECORD_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


def now_utc() -> str:
    """Now in UTC, ISO 8601 to the microsecond (``2025-06-01T12:03:22.123456Z``)."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_record_id() -> str:
    return uuid.uuid4().hex


def _text(data: Mapping[str, Any], name: str, *, empty: bool = True) -> str:
    value = data.get(name)
    if not isinstance(value, str) or (not empty and not value):
        raise ValueError(f'"{name}" is not {"text" if empty else "a non-empty text"}')
    return value


def _optional_text(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f'"{name}" is not text')
    return value


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f'"when" is not an ISO 8601 time: {text[:40]!r}') from None
    if moment.tzinfo is None:
        raise ValueError('"when" has no UTC offset')
    return moment.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class ReviewRecord:
    """A verdict on the entry whose content has ``content_sha256`` (``kind`` "verdict"), or the undoing of
    the verdict record ``undoes`` (``kind`` "undo", ``verdict`` ``None``)."""

    record: str
    kind: Kind
    content_sha256: str
    entry_id: str
    verdict: str | None
    note: str
    who: str
    when: str
    db: str
    uri: str
    table: str
    table_version: int | None
    undoes: str | None = None
    format: int = FORMAT

    @property
    def moment(self) -> datetime:
        return _moment(self.when)

    @property
    def flagged(self) -> bool:
        return self.verdict in FLAGGED

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": self.format,
            "record": self.record,
            "kind": self.kind,
            "db": self.db,
            "uri": self.uri,
            "table": self.table,
            "table_version": self.table_version,
            "id": self.entry_id,
            "content_sha256": self.content_sha256,
            "verdict": self.verdict,
            "note": self.note,
            "who": self.who,
            "when": self.when,
        }
        if self.kind == UNDO:
            data["undoes"] = self.undoes
        return data

    def to_line(self) -> bytes:
        """The record as one line of UTF-8 JSON, newline included (a lone surrogate stays escaped)."""
        try:
            return json.dumps(self.to_dict(), ensure_ascii=False).encode("utf-8") + b"\n"
        except UnicodeEncodeError:
            return json.dumps(self.to_dict()).encode("ascii") + b"\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReviewRecord:
        """A record read back; raises ``ValueError`` saying what is wrong with a line that is not one."""
        version = data.get("format")
        if version != FORMAT:
            if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT:
                raise ValueError(
                    f"written in format {version} by a newer recall-gui (this one reads {FORMAT})"
                )
            raise ValueError(f'"format" is not {FORMAT}')
        kind = data.get("kind")
        if kind not in (VERDICT, UNDO):
            raise ValueError(f'"kind" is neither "{VERDICT}" nor "{UNDO}"')
        record = _text(data, "record", empty=False)
        if not _RECORD_ID.fullmatch(record):
            raise ValueError('"record" is not a record id (letters, digits, "_" and "-")')
        sha = _text(data, "content_sha256")
        if not _SHA.fullmatch(sha):
            raise ValueError('"content_sha256" is not 64 lowercase hex digits')
        verdict = data.get("verdict")
        undoes = data.get("undoes")
        if kind == VERDICT and verdict not in VERDICTS:
            raise ValueError(f'"verdict" is not one of {", ".join(VERDICTS)}')
        if kind == UNDO:
            if verdict is not None:
                raise ValueError('an undo record has "verdict": null')
            if not isinstance(undoes, str) or not _RECORD_ID.fullmatch(undoes):
                raise ValueError('an undo record names the record it undoes in "undoes"')
        when = _text(data, "when", empty=False)
        _moment(when)
        table_version = data.get("table_version")
        if table_version is not None and (
            isinstance(table_version, bool) or not isinstance(table_version, int)
        ):
            raise ValueError('"table_version" is not a whole number')
        return cls(
            record=record,
            kind=kind,
            content_sha256=sha,
            entry_id=_optional_text(data, "id"),
            verdict=verdict if kind == VERDICT else None,
            note=_optional_text(data, "note"),
            who=_text(data, "who"),
            when=when,
            db=_optional_text(data, "db"),
            uri=_optional_text(data, "uri"),
            table=_optional_text(data, "table"),
            table_version=table_version,
            undoes=undoes if kind == UNDO else None,
        )


def parse_verdicts(text: str, option: str) -> frozenset[str]:
    """A comma-separated list of verdicts (``wrong,outdated``); refuses a word that is not one."""
    words = [word.strip().lower() for word in text.split(",") if word.strip()]
    unknown = [word for word in words if word not in VERDICTS]
    if unknown or not words:
        raise InvalidInputError(
            f"{option} {text!r}: {', '.join(map(repr, unknown)) or 'no verdict'} is not a verdict",
            hint=f"Verdicts: {', '.join(VERDICTS)}, separated by commas.",
        )
    return frozenset(words)
