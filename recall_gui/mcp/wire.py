"""Every message an MCP client sends over stdio gets the answer JSON-RPC 2.0 prescribes.

The SDK's stdio transport hands a line it cannot validate to the session as an exception, and the server
drops it: malformed JSON, a batch, a wrong ``jsonrpc`` version, a lone-surrogate escape in a query
(``"\\ud800"``), a number with thousands of digits. An id of another type (``1.5``, ``true``, an object)
even passes as a notification. A client waiting for its id waited forever. This gate reads stdin in
front of the SDK, passes on every line the SDK reads as intended, and answers every other one:

- a line that is no JSON: -32700 with ``"id": null``;
- a message that is no valid request: -32600, with its id when the id can be read;
- a request whose params cannot be read (not an object, text that is not Unicode, a number too long to
  read): -32602 with its id;
- a notification or a response (no id, or a ``result``/``error``) is never answered, only logged.

A ``tools/call`` answered here never reaches the tool, so it is handed to ``on_refused_call`` (the agent
log's one record per call), with the client as it named itself at ``initialize``.

Batches: MCP removed them (2025-06-18), so each request in one gets its own -32600.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from recall_gui.core.base import (
    MAX_NESTING,
    LongNumber,
    first_surrogate,
    is_unicode,
    json_path,
    read_integer,
    recordable,
    shown,
    too_deep,
)

logger = logging.getLogger("recall_gui.mcp")


@dataclass(frozen=True)
class RefusedCall:
    """A ``tools/call`` answered with an error here: what the agent log records of it (its arguments as
    received, but for a number too long to read)."""

    tool: str
    arguments: Any
    error: str


@dataclass(frozen=True)
class Verdict:
    """What to do with one line: hand it on to the SDK, answer it, and what to log."""

    passed: bool
    replies: tuple[types.JSONRPCError, ...] = ()
    note: str | None = None
    #: The ``tools/call`` refused by this verdict's reply.
    refused_call: RefusedCall | None = None


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=shown(message))
    )


def _is_id(value: Any) -> bool:
    """A string of Unicode text or an integer: what a reply can carry back."""
    if isinstance(value, str):
        return is_unicode(value)
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    """What a value is, for a message: short text quoted, anything else by its JSON type."""
    if isinstance(value, str):
        return json.dumps(value[:40]) if is_unicode(value) else "text that is not valid Unicode"
    names = {
        bool: "a boolean",
        int: "a number",
        float: "a number with a fraction or an exponent",
        list: "an array",
        dict: "an object",
    }
    return "null" if value is None else names.get(type(value), "a number too long to read")


def _unreadable(value: Any, path: str) -> str | None:
    """Where in ``value`` is text that is not Unicode or a number too long to read, and what it is."""
    if isinstance(value, LongNumber):
        return f"{path} is a number too long to read ({value.digits} digits)"
    if isinstance(value, str):
        if not is_unicode(value):
            return (
                f"{path} is not valid Unicode text (it holds the unpaired surrogate {first_surrogate(value)})"
            )
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _unreadable(item, f"{path}[{index}]")
            if found:
                return found
    if isinstance(value, dict):
        for key, item in value.items():
            found = _unreadable(key, f"a key in {path}") or _unreadable(item, f"{path}.{key}")
            if found:
                return found
    return None


def judge(line: str) -> Verdict:
    """Decide about one line from the client (see the module's description)."""
    if not line.strip():
        return Verdict(passed=False)
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as error:
        return _answer_unread(line, error)
    if isinstance(message, types.JSONRPCNotification) and '"id"' in line:
        raw = json.loads(line, parse_int=read_integer)
        if isinstance(raw, dict) and "id" in raw:  # an id of another type made it look like a notification
            return _refused_id(raw["id"])
    return Verdict(passed=True)


def _refused_id(value: Any) -> Verdict:
    message = f"Invalid Request: the id must be a string or an integer, not {_kind(value)}"
    return Verdict(False, (_error(None, types.INVALID_REQUEST, message),), message)


def _answer_unread(line: str, sdk_error: ValueError) -> Verdict:
    try:
        raw = json.loads(line, parse_int=read_integer)
    except (ValueError, RecursionError) as error:
        reason = error.msg if isinstance(error, json.JSONDecodeError) else "nested too deeply"
        where = f" at column {error.colno}" if isinstance(error, json.JSONDecodeError) else ""
        message = f"Parse error: {reason}{where}"
        return Verdict(False, (_error(None, types.PARSE_ERROR, message),), message)
    if isinstance(raw, list):
        return _answer_batch(raw)
    return _answer_message(raw, sdk_error)


def _answer_batch(items: list[Any]) -> Verdict:
    if not items:
        message = "Invalid Request: an empty batch"
        return Verdict(False, (_error(None, types.INVALID_REQUEST, message),), message)
    message = "Invalid Request: batches are not supported (MCP sends one message per line)"
    replies = []
    for item in items:
        if isinstance(item, dict) and "id" not in item and isinstance(item.get("method"), str):
            continue  # a notification: never answered
        if isinstance(item, dict) and ("result" in item or "error" in item) and "method" not in item:
            continue  # a response
        request_id = item.get("id") if isinstance(item, dict) else None
        replies.append(_error(request_id if _is_id(request_id) else None, types.INVALID_REQUEST, message))
    return Verdict(False, tuple(replies), message)


def _answer_message(raw: Any, sdk_error: ValueError) -> Verdict:
    if not isinstance(raw, dict):
        message = f"Invalid Request: a message must be a JSON object, not {_kind(raw)}"
        return Verdict(False, (_error(None, types.INVALID_REQUEST, message),), message)
    if "id" in raw and not _is_id(raw["id"]):
        return _refused_id(raw["id"])
    request_id = raw.get("id")
    method = raw.get("method")
    if request_id is None:
        if isinstance(method, str):  # a notification: never answered
            problem = _request_problem(raw)
            reason = problem[1] if problem else _reason(sdk_error)
            return Verdict(False, note=f"ignored a notification that cannot be read: {reason}")
        message = "Invalid Request: neither a request (method and id) nor a notification (method)"
        return Verdict(False, (_error(None, types.INVALID_REQUEST, message),), message)
    if "method" not in raw and ("result" in raw or "error" in raw):
        return Verdict(False, note=f"ignored a response that cannot be read: {_reason(sdk_error)}")
    problem = _request_problem(raw)
    if problem is None:
        problem = (types.INVALID_REQUEST, f"Invalid Request: {_reason(sdk_error)}")
    code, message = problem
    refused = _refused_call(raw, message) if method == "tools/call" else None
    return Verdict(False, (_error(request_id, code, message),), message, refused_call=refused)


def _refused_call(raw: dict[str, Any], message: str) -> RefusedCall:
    params = raw.get("params")
    params = params if isinstance(params, dict) else {}
    name = params.get("name")
    return RefusedCall(
        tool=name if isinstance(name, str) else "",
        arguments=recordable(params.get("arguments")),
        error=shown(message),
    )


def _request_problem(raw: dict[str, Any]) -> tuple[int, str] | None:
    if raw.get("jsonrpc") != "2.0":
        return (
            types.INVALID_REQUEST,
            f'Invalid Request: "jsonrpc" must be "2.0", not {_kind(raw.get("jsonrpc"))}',
        )
    method = raw.get("method")
    if not isinstance(method, str):
        return types.INVALID_REQUEST, f'Invalid Request: "method" must be a string, not {_kind(method)}'
    unreadable_method = _unreadable(method, "method")
    if unreadable_method:
        return types.INVALID_REQUEST, f"Invalid Request: {unreadable_method}"
    params = raw.get("params")
    if params is not None and not isinstance(params, dict):
        return types.INVALID_PARAMS, f"Invalid params: params must be an object, not {_kind(params)}"
    deep = too_deep(params)
    if deep is not None:
        where = json_path(deep[:4], "params") + ("…" if len(deep) > 4 else "")
        return (
            types.INVALID_PARAMS,
            f"Invalid params: nested more than {MAX_NESTING} levels deep (at {where})",
        )
    unreadable = _unreadable(params, "params")
    if unreadable:
        return types.INVALID_PARAMS, f"Invalid params: {unreadable}"
    return None


def _reason(error: ValueError) -> str:
    """The SDK's first complaint, without the input it quotes."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            first = errors(include_input=False, include_url=False)[0]
        except (IndexError, TypeError):
            first = None
        if first:
            where = ".".join(str(part) for part in first.get("loc", ()))
            return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    return type(error).__name__


class AnsweringStdin:
    """The client's lines, as the SDK's stdio transport reads them, minus those answered here.

    Give it to ``stdio_server(stdin=...)`` and :meth:`attach` the write stream it yields; answers to
    lines read before that wait for it.
    """

    def __init__(
        self, lines: AsyncIterable[bytes], on_refused_call: Callable[[RefusedCall], None] | None = None
    ) -> None:
        self._lines = lines
        self._write_stream: Any = None
        self._attached = anyio.Event()
        self._on_refused_call = on_refused_call
        #: The client's name and version as it gave them at ``initialize`` (for refused calls' records).
        self.client: tuple[str | None, str | None] = (None, None)

    def attach(self, write_stream: Any) -> None:
        self._write_stream = write_stream
        self._attached.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for raw in self._lines:
            line = raw.decode("utf-8", "replace")  # as the SDK decodes stdin
            verdict = judge(line)
            if verdict.note:
                logger.warning("client message refused: %s", verdict.note)
            if verdict.passed and '"initialize"' in line:
                self._note_client(line)
            if verdict.refused_call is not None and self._on_refused_call is not None:
                self._on_refused_call(verdict.refused_call)
            for reply in verdict.replies:
                await self._attached.wait()
                await self._write_stream.send(SessionMessage(reply))
            if verdict.passed:
                yield line

    def _note_client(self, line: str) -> None:
        with contextlib.suppress(ValueError, RecursionError, AttributeError):
            raw = json.loads(line)
            if isinstance(raw, dict) and raw.get("method") == "initialize":
                info = (raw.get("params") or {}).get("clientInfo") or {}
                name, version = info.get("name"), info.get("version")
                self.client = (
                    name if isinstance(name, str) else None,
                    version if isinstance(version, str) else None,
                )
