"""One agent's call as the agent log records it (:class:`CallRecord`): who asked, what they sent, which
ids came back or which error; a record longer than the log's bound is shortened to fit, and a record
reads back equal to the one written (one JSON line each, see :mod:`.agent_log`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.json_bounds import MAX_NESTING
from recall_gui.core.base.json_output import json_text

#: How much of a query (and of an error) a record longer than half the bound keeps.
SHORTENED_TEXT_CHARS = 2000
SHORTENED_IDS = 200
#: The longest line written or read: a record with a query of the longest searched fits (``MAX_QUERY_CHARS``
#: in UTF-8); a longer one is shortened like one longer than half the bound.
MAX_RECORD_BYTES = 1 << 20
#: A record holds the call's arguments one level down, and those are recorded within ``MAX_NESTING``.
RECORD_NESTING = MAX_NESTING + 1


def now_iso() -> str:
    """The local time with its UTC offset, to the millisecond (``2025-06-01T14:03:22.123+02:00``)."""
    return datetime.now().astimezone().isoformat(timespec="milliseconds")


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


#: The client name the window's Agent view gives its MCP client: its calls are the window's, not an
#: agent's (records written before this constant existed carry the same name, so they are known too).
WINDOW_CLIENT = "recall-gui agent view"


@dataclass(frozen=True)
class CallRecord:
    """One ``tools/call``: who asked, what they sent, which entries came back (in order: their ids and the
    sha256 of their contents) or which error."""

    time: str
    client: str | None
    client_version: str | None
    tool: str
    #: The call's arguments exactly as received (``None`` when the call had none).
    arguments: Any
    result_ids: tuple[str, ...] = ()
    error: str | None = None
    embed_ms: float | None = None
    search_ms: float | None = None
    #: The version of the table the search read.
    table_version: int | None = None
    #: The query, ids or error were cut to keep the record within the log's bound.
    shortened: bool = False
    #: The sha256 of each result's content, in the order of ``result_ids`` (what tells entries apart where
    #: ids repeat); empty in records written before they were kept.
    result_sha256: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Microseconds are all a log needs; rounded here, a record reads back equal to the one written.
        if self.embed_ms is not None:
            object.__setattr__(self, "embed_ms", round(self.embed_ms, 3))
        if self.search_ms is not None:
            object.__setattr__(self, "search_ms", round(self.search_ms, 3))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "time": self.time,
            "client": self.client,
            "client_version": self.client_version,
            "tool": self.tool,
            "arguments": self.arguments,
            "result_ids": list(self.result_ids),
            "error": self.error,
            "embed_ms": self.embed_ms,
            "search_ms": self.search_ms,
            "table_version": self.table_version,
        }
        if self.result_sha256:
            data["result_sha256"] = list(self.result_sha256)
        if self.shortened:
            data["shortened"] = True
        return data

    def to_line(self) -> bytes:
        """The record as one line of UTF-8 JSON, newline included."""
        data = self.to_dict()
        try:
            text = json_text(data, ensure_ascii=False, separators=(",", ":"))
            return text.encode("utf-8") + b"\n"
        except UnicodeEncodeError:  # a lone surrogate in a query the harness refused: keep it escaped
            return json_text(data, separators=(",", ":")).encode("ascii") + b"\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CallRecord:
        """A record read back; raises ``ValueError`` for an object that is not one."""
        time, tool = data.get("time"), data.get("tool")
        if not isinstance(time, str) or not isinstance(tool, str):
            raise ValueError("not a call record")
        parse_time(time)
        ids = data.get("result_ids") or []
        if not isinstance(ids, list):
            raise ValueError("result_ids is not a list")
        version = data.get("table_version")
        digests = data.get("result_sha256") or []
        if not isinstance(digests, list) or not all(isinstance(sha, str) for sha in digests):
            raise ValueError("result_sha256 is not a list of texts")
        return cls(
            time=time,
            client=_text_or_none(data.get("client")),
            client_version=_text_or_none(data.get("client_version")),
            tool=tool,
            arguments=data.get("arguments"),
            result_ids=tuple(map(str, ids)),
            error=_text_or_none(data.get("error")),
            embed_ms=_number_or_none(data.get("embed_ms")),
            search_ms=_number_or_none(data.get("search_ms")),
            table_version=version if isinstance(version, int) and not isinstance(version, bool) else None,
            shortened=data.get("shortened") is True,
            result_sha256=tuple(digests),
        )

    def results(self) -> tuple[tuple[str, str], ...]:
        """Each result's id and its content's sha256 (empty where the record kept none)."""
        shas = self.result_sha256
        if len(shas) != len(self.result_ids):
            shas = ("",) * len(self.result_ids)
        return tuple(zip(self.result_ids, shas, strict=True))

    # --- what the window and the command line show -----------------------------------------------------

    @property
    def when(self) -> datetime:
        return parse_time(self.time)

    def _argument(self, name: str) -> Any:
        return self.arguments.get(name) if isinstance(self.arguments, dict) else None

    @property
    def db_name(self) -> str | None:
        return _text_or_none(self._argument("db_name"))

    @property
    def query(self) -> str | None:
        return _text_or_none(self._argument("query"))

    @property
    def total_ms(self) -> float | None:
        if self.embed_ms is None or self.search_ms is None:
            return None
        return self.embed_ms + self.search_ms

    @property
    def from_window(self) -> bool:
        """Whether the window's Agent view made this call (not an agent): coverage and hubs leave it out."""
        return self.client == WINDOW_CLIENT

    @property
    def client_label(self) -> str:
        if not self.client:
            return "unnamed client"
        return f"{self.client} {self.client_version}" if self.client_version else self.client

    def shortened_to(self, max_bytes: int) -> CallRecord | None:
        """This record, or one with its query, error and ids cut so that its line fits ``max_bytes``;
        ``None`` when even that does not fit."""
        if len(self.to_line()) <= max_bytes:
            return self
        arguments = self.arguments
        if isinstance(arguments, dict):
            arguments = {
                key: value[:SHORTENED_TEXT_CHARS] if isinstance(value, str) else value
                for key, value in arguments.items()
            }
        elif isinstance(arguments, str | list):
            arguments = None  # not the tool's arguments anyway
        error = self.error[:SHORTENED_TEXT_CHARS] if self.error else self.error
        cut = CallRecord(
            self.time,
            (self.client or "")[:200] or None,
            (self.client_version or "")[:200] or None,
            self.tool[:200],
            arguments,
            self.result_ids[:SHORTENED_IDS],
            error,
            self.embed_ms,
            self.search_ms,
            self.table_version,
            shortened=True,
            result_sha256=self.result_sha256[:SHORTENED_IDS],
        )
        return cut if len(cut.to_line()) <= max_bytes else None


def parse_time(text: str) -> datetime:
    """An ISO 8601 date or time; one without a UTC offset is taken as local time."""
    moment = datetime.fromisoformat(text.strip())
    return moment if moment.tzinfo is not None else moment.astimezone()


def parse_since(text: str) -> datetime:
    """``--since`` as the user typed it; refused with the reason when it is not an ISO 8601 date or time."""
    try:
        return parse_time(text)
    except ValueError:
        raise InvalidInputError(
            f"--since {text!r} is not an ISO 8601 date or time",
            hint="Write it like 2025-06-01, 2025-06-01T14:30 or 2025-06-01T14:30:00+02:00 "
            "(without an offset it is your local time).",
        ) from None


def records_json(records: Iterable[CallRecord]) -> str:
    """One JSON object per line, as the log stores them (for ``recall-gui log --json``)."""
    return "".join(record.to_line().decode("utf-8") for record in records)
