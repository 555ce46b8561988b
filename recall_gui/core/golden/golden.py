"""Golden checks: the questions that matter and the entries each must retrieve, kept in a JSON file.

A golden file is ``{"checks": [{"db_name": ..., "query": ..., "expect": [ids], "limit": 5}, ...]}``
(``limit`` optional, default 5); an expected entry is an id or ``{"content_sha256": "<64 hex digits>"}``
(:mod:`recall_gui.core.golden.expected`), and ``"ids_may_repeat": true`` lets an id several rows share pass
the check (else such a check is refused). A check may pin the table's version it runs on: ``"version": N`` or
``"tag": "name"`` (a LanceDB tag), read-only; without a pin it runs on the latest, as the agent searches.
A check made on a folder opened by its path names the folder instead of
a database: ``"uri"`` and ``"table"`` (and ``"model"``, the model it was searched with) in place of
``"db_name"``; it runs on the registered database that reads the same table once there is one, on the
folder until then (:mod:`recall_gui.core.golden.check_places`). It is validated with a JSON schema; a problem
is reported with the file, the line of the check and its path (``checks[2].expect[0]``), and nothing of a
file that does not validate is used. A file is written pretty-printed and atomically, re-read just before
every change, so an edit made meanwhile in an editor is kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from recall_gui.core.base.atomic import write_text_atomic
from recall_gui.core.base.credentials import masked
from recall_gui.core.base.errors import GoldenFileError, InvalidInputError
from recall_gui.core.base.json_bounds import (
    MAX_INTEGER_DIGITS,
    MAX_NESTING,
    first_long_number,
    read_integer,
    too_deep,
)
from recall_gui.core.base.output_paths import OUTPUT_HINT, output_problem
from recall_gui.core.base.paths import app_data_dir
from recall_gui.core.base.regular_files import read_regular
from recall_gui.core.base.surrogates import is_unicode
from recall_gui.core.base.types import (
    DEFAULT_LIMIT,
    GOLDEN_MAX_BYTES,
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    QUERY_TOO_LONG_HINT,
    query_too_long,
)
from recall_gui.core.golden.expected import (
    SHA256_PATTERN,
    ContentRef,
    Expected,
    expected_from_text,
    expected_json,
    expected_text,
)

#: The largest version number Lance can look up (its versions are signed 64-bit on the way in).
MAX_VERSION = 2**63 - 1


def refuse_bad_version(option: str, value: int | None, what: str = "a version number") -> None:
    """Refuse an option's version (or count of versions) outside 1 to :data:`MAX_VERSION` before any
    table is read at it: LanceDB would answer a negative or too large one with its own traceback."""
    if value is not None and not 1 <= value <= MAX_VERSION:
        raise InvalidInputError(
            f"{option} {value} is not {what}", hint=f"Give a whole number from 1 to {MAX_VERSION}."
        )


GOLDEN_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "recall-gui golden checks",
    "type": "object",
    "required": ["checks"],
    "additionalProperties": False,
    "properties": {
        "checks": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["query", "expect"],
                "additionalProperties": False,
                "dependentRequired": {"uri": ["table"], "table": ["uri"], "model": ["uri"]},
                "properties": {
                    "db_name": {"type": "string", "minLength": 1},
                    "uri": {"type": "string", "minLength": 1},
                    "table": {"type": "string", "minLength": 1},
                    "model": {"type": "string", "minLength": 1},
                    "query": {"type": "string"},
                    "expect": {
                        "type": "array",
                        # An id, or an entry by its content (the object keywords hold for objects only).
                        "items": {
                            "type": ["string", "object"],
                            "required": ["content_sha256"],
                            "additionalProperties": False,
                            "properties": {"content_sha256": {"type": "string", "pattern": SHA256_PATTERN}},
                        },
                        "minItems": 1,
                        "uniqueItems": True,
                    },
                    "ids_may_repeat": {"type": "boolean"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
                    "version": {"type": "integer", "minimum": 1, "maximum": MAX_VERSION},
                    "tag": {"type": "string", "minLength": 1},
                },
            },
        }
    },
}

#: What a check searches: ``("name", db_name)`` or ``("folder", uri, table)``.
CheckDatabase = tuple[str, ...]
#: What identifies a check within a file (and across runs): its database, query, limit and pin (its
#: :attr:`VersionPin.text`, empty for none).
CheckKey = tuple[CheckDatabase, str, int, str]


@dataclass(frozen=True)
class VersionPin:
    """The version of its table a check runs on instead of the latest: a number, or a LanceDB tag."""

    version: int | None = None
    tag: str | None = None

    def __post_init__(self) -> None:
        if (self.version is None) == (self.tag is None):
            raise ValueError("a pin names a version or a tag, exactly one")

    @property
    def text(self) -> str:
        return f"version {self.version}" if self.tag is None else f'tag "{self.tag}"'

    def fields(self) -> dict[str, Any]:
        """How the file writes it: ``{"version": N}`` or ``{"tag": "name"}``."""
        return {"version": self.version} if self.tag is None else {"tag": self.tag}


@dataclass(frozen=True)
class FolderTable:
    """The table a check made on a folder opened by its path searches: the folder (or URI), the table,
    and the model it was searched with (``None``: the one detected)."""

    uri: str
    table: str
    model: str | None = None


@dataclass(frozen=True)
class GoldenCheck:
    """One question and the entries the agent must get for it (by id, or by content:
    :mod:`recall_gui.core.golden.expected`), in a registered database (``db_name``) or in a folder's table
    (``folder``): exactly one of them."""

    db_name: str | None
    query: str
    expect: tuple[Expected, ...]
    #: ``None``: not given in the file, so 5 (and left out when the file is written again).
    given_limit: int | None = None
    folder: FolderTable | None = None
    #: The version it runs on; ``None``: the latest, as the agent searches.
    pin: VersionPin | None = None
    #: The file allows an expected id that several rows share (any of them passes it); else such a check
    #: is refused.
    ids_may_repeat: bool = False

    def __post_init__(self) -> None:
        if (self.db_name is None) == (self.folder is None):
            raise ValueError("a golden check names a database (db_name) or a folder's table, exactly one")

    @property
    def limit(self) -> int:
        return DEFAULT_LIMIT if self.given_limit is None else self.given_limit

    @property
    def database(self) -> CheckDatabase:
        if self.folder is not None:
            return ("folder", self.folder.uri, self.folder.table)
        assert self.db_name is not None
        return ("name", self.db_name)

    @property
    def named(self) -> str:
        """The database as the check names it: its name, or ``table in folder URI``."""
        if self.folder is not None:
            return f"{self.folder.table} in folder {masked(self.folder.uri)}"
        assert self.db_name is not None
        return self.db_name

    @property
    def key(self) -> CheckKey:
        return (self.database, self.query, self.limit, "" if self.pin is None else self.pin.text)

    def arguments(self, db_name: str | None = None) -> dict[str, Any]:
        """The agent's tool arguments for this check, naming ``db_name`` (``None``: the check's own)."""
        name = db_name if db_name is not None else self.db_name
        return {"db_name": name, "query": self.query, "limit": self.limit}

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = self.database_fields()
        data |= {"query": self.query, "expect": [expected_json(wanted) for wanted in self.expect]}
        if self.given_limit is not None:
            data["limit"] = self.given_limit
        if self.ids_may_repeat:
            data["ids_may_repeat"] = True
        return data | self.pin_fields()

    @property
    def expect_text(self) -> str:
        """The expected entries as the check editor shows them: comma-separated, a content as
        ``sha256:<hex>``."""
        return ", ".join(expected_text(wanted) for wanted in self.expect)

    def pin_fields(self) -> dict[str, Any]:
        """The pin as the file writes it (nothing when the check runs on the latest version)."""
        return {} if self.pin is None else self.pin.fields()

    def database_fields(self) -> dict[str, Any]:
        """How the file names the check's database: ``db_name``, or ``uri``, ``table`` (and ``model``)."""
        if self.folder is None:
            return {"db_name": self.db_name}
        fields = {"uri": self.folder.uri, "table": self.folder.table}
        return fields | ({"model": self.folder.model} if self.folder.model is not None else {})


@dataclass(frozen=True)
class GoldenFile:
    """The checks of one file, in its order."""

    checks: tuple[GoldenCheck, ...] = ()

    def to_json(self) -> str:
        data = {"checks": [check.to_dict() for check in self.checks]}
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"

    def with_check(self, check: GoldenCheck) -> GoldenFile:
        """The file with ``check`` added, or replacing the check with the same key (in its place)."""
        checks = list(self.checks)
        for number, existing in enumerate(checks):
            if existing.key == check.key:
                checks[number] = check
                return GoldenFile(tuple(checks))
        return GoldenFile((*checks, check))

    def without(self, keys: Iterable[CheckKey]) -> GoldenFile:
        removed = set(keys)
        return GoldenFile(tuple(check for check in self.checks if check.key not in removed))

    def placed(self, keys: Iterable[CheckKey]) -> tuple[tuple[int, GoldenCheck], ...]:
        """The checks with these keys and their places in the file (what :meth:`with_restored` puts
        back)."""
        wanted = set(keys)
        return tuple((number, check) for number, check in enumerate(self.checks) if check.key in wanted)

    def with_restored(self, placed: Iterable[tuple[int, GoldenCheck]]) -> GoldenFile:
        """The file with removed checks back in their places (those added meanwhile with the same key are
        replaced, not repeated)."""
        restored = sorted(placed, key=lambda item: item[0])
        keys = {check.key for _number, check in restored}
        checks = [check for check in self.checks if check.key not in keys]
        for number, check in restored:
            checks.insert(min(number, len(checks)), check)
        return GoldenFile(tuple(checks))

    def with_edit(self, old: CheckKey, new: GoldenCheck) -> GoldenFile:
        """The file with the check keyed ``old`` replaced by ``new`` in its place; an edit that would make
        it repeat another check is refused (:class:`GoldenFileError`), and one whose check is gone too."""
        keys = [check.key for check in self.checks]
        if old not in keys:
            raise GoldenFileError(
                "the check is no longer in the file (it was changed meanwhile)",
                hint="Open the file again to see its checks as they are now.",
            )
        if new.key != old and new.key in keys:
            raise GoldenFileError(
                "another check already asks this query of this database with this limit",
                hint="Change the query or the limit, or add the ids to that check instead.",
            )
        number = keys.index(old)
        return GoldenFile((*self.checks[:number], new, *self.checks[number + 1 :]))


def edited(
    check: GoldenCheck, *, query: str | None = None, ids: str | None = None, limit: int | None = None
) -> GoldenCheck:
    """``check`` with a new query, expected entries (``ids``: comma-separated, as the window edits them;
    ``sha256:<64 hex digits>`` names a content) or limit; what a golden file could not hold is refused
    with what to do (:class:`InvalidInputError`)."""
    if query is not None:
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidInputError(query_too_long(len(query)), hint=QUERY_TOO_LONG_HINT)
        check = replace(check, query=query)
    if ids is not None:
        parts = (expected_from_text(part.strip()) for part in ids.split(",") if part.strip())
        expect = tuple(dict.fromkeys(parts))
        if not expect:
            raise InvalidInputError(
                "a check must expect at least one id",
                hint="Type the ids, separated by commas, or remove the check.",
            )
        check = replace(check, expect=expect)
    if limit is not None:
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInputError(
                f"the limit must be between 1 and {MAX_LIMIT:,}, not {limit:,}", hint="Type a positive limit."
            )
        check = replace(check, given_limit=limit)
    return check


def default_checks_dir() -> Path:
    """Where golden files are saved unless the user chooses another folder."""
    return app_data_dir() / "checks"


def parse_golden(text: str, source: str) -> GoldenFile:
    """The checks in ``text`` (the content of ``source``, named in errors), or a :class:`GoldenFileError`
    naming the first problem and where it is."""
    try:
        data = json.loads(text, parse_int=read_integer)
    except json.JSONDecodeError as error:
        reason = error.msg.removesuffix(" at")
        raise GoldenFileError(
            f"{source}: not valid JSON: {reason} at line {error.lineno} column {error.colno}",
            hint=_FORMAT_HINT,
        ) from None
    except RecursionError:
        raise GoldenFileError(
            f"{source}: nested too deeply to read (more than {MAX_NESTING} levels)", hint=_FORMAT_HINT
        ) from None
    _refuse_unreadable(data, text, source)
    _validate(data, text, source)
    checks: list[GoldenCheck] = []
    seen: dict[CheckKey, int] = {}
    for number, raw in enumerate(data["checks"]):
        limit = raw.get("limit")
        if ("db_name" in raw) == ("uri" in raw):
            raise GoldenFileError(
                f"{_where(text, source, number)}: "
                + ("names both a db_name and a uri" if "db_name" in raw else "names no database"),
                hint='A check names a registered database ("db_name") or a folder\'s table ("uri" and '
                '"table"), one of the two.',
            )
        if "version" in raw and "tag" in raw:
            raise GoldenFileError(
                f"{_where(text, source, number)}: pins both a version and a tag",
                hint='A check runs on one version: keep "version" or "tag", not both.',
            )
        folder = FolderTable(raw["uri"], raw["table"], raw.get("model")) if "uri" in raw else None
        pinned = "version" in raw or "tag" in raw
        check = GoldenCheck(
            raw.get("db_name"),
            raw["query"],
            tuple(w if isinstance(w, str) else ContentRef(w["content_sha256"]) for w in raw["expect"]),
            None if limit is None else int(limit),
            folder,
            VersionPin(raw.get("version"), raw.get("tag")) if pinned else None,
            raw.get("ids_may_repeat", False),
        )
        if len(check.query) > MAX_QUERY_CHARS:
            raise GoldenFileError(
                f"{_where(text, source, number)}, query: {query_too_long(len(check.query))}",
                hint=QUERY_TOO_LONG_HINT,
            )
        for name, value in (
            ("query", check.query),
            *((field, str(value)) for field, value in check.database_fields().items()),
            *((field, str(value)) for field, value in check.pin_fields().items()),
            *(("expect", i) for i in check.expect if isinstance(i, str)),
        ):
            if not is_unicode(value):
                raise GoldenFileError(
                    f"{_where(text, source, number)}: {name} holds an unpaired surrogate "
                    "(\\ud800-\\udfff), which is not text",
                    hint="Write the text as it is, or escape whole characters only.",
                )
        if check.key in seen:
            raise GoldenFileError(
                f"{_where(text, source, number)}: repeats check {seen[check.key] + 1} "
                "(the same database, query, limit and version)",
                hint="Merge their expected ids into one check.",
            )
        seen[check.key] = number
        checks.append(check)
    return GoldenFile(tuple(checks))


_FORMAT_HINT = (
    'A golden file is {"checks": [{"db_name": "...", "query": "...", "expect": ["id", ...], "limit": 5}]} '
    '(limit optional, default 5; an entry may be named by its content, {"content_sha256": "<64 hex '
    'digits>"}, in place of its id; a folder\'s table as "uri" and "table" in place of "db_name"; '
    '"version": N or "tag": "name" to run on that version of the table instead of the latest).'
)


def _refuse_unreadable(data: Any, text: str, source: str) -> None:
    """Refuse what nests deeper than any golden file needs (the validator would recurse out) and numbers
    too long to read, naming the check and the field."""
    deep = too_deep(data)
    if deep is not None:
        shown = _json_path(deep[:6]) + ("…" if len(deep) > 6 else "")
        raise GoldenFileError(
            f"{_located(text, source, deep)}: nested more than {MAX_NESTING} levels deep (at {shown})",
            hint=_FORMAT_HINT,
        )
    long_number = first_long_number(data)
    if long_number is not None:
        path, digits = long_number
        raise GoldenFileError(
            f"{_located(text, source, path)}: a number of {digits:,} digits, too long to read "
            f"(at most {MAX_INTEGER_DIGITS:,})",
            hint=_FORMAT_HINT,
        )


def _located(text: str, source: str, path: Sequence[Any]) -> str:
    """``source, line L, check N, field`` for a path into the checks, ``source, path`` for another."""
    if len(path) >= 2 and path[0] == "checks" and isinstance(path[1], int):
        inner = _json_path(path[2:3])
        return f"{_where(text, source, path[1])}{', ' + inner if inner else ''}"
    inner = _json_path(path[:1])
    return f"{source}{', ' + inner if inner else ''}"


def _whole(_checker: Any, value: Any) -> bool:
    """A JSON integer as written: ``3``, never ``3.0`` (JSON Schema's "integer" counts that in)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _validate(data: Any, text: str, source: str) -> None:
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import best_match

    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", _whole)
    validator = validators.extend(Draft202012Validator, type_checker=checker)
    error = best_match(validator(GOLDEN_SCHEMA).iter_errors(data))
    if error is None:
        return
    path = list(error.absolute_path)
    if len(path) >= 2 and path[0] == "checks" and isinstance(path[1], int):
        where = _where(text, source, path[1])
        inner = _json_path(path[2:])
        raise GoldenFileError(f"{where}{', ' + inner if inner else ''}: {error.message}", hint=_FORMAT_HINT)
    inner = _json_path(path)
    raise GoldenFileError(f"{source}{', ' + inner if inner else ''}: {error.message}", hint=_FORMAT_HINT)


def _json_path(path: Sequence[Any]) -> str:
    parts = ""
    for step in path:
        parts += f"[{step}]" if isinstance(step, int) else (f".{step}" if parts else str(step))
    return parts


def _where(text: str, source: str, number: int) -> str:
    """``source, line L, check N`` for the check at index ``number`` (the line where it starts). It walks
    the whole text: called once, for the problem reported, never per check."""
    offsets = _check_offsets(text)
    line = f", line {text.count(chr(10), 0, offsets[number]) + 1}" if number < len(offsets) else ""
    return f"{source}{line}, check {number + 1}"


def _check_offsets(text: str) -> list[int]:
    """Where each element of the top-level ``checks`` array starts in ``text`` (valid JSON), found by
    walking the top-level object with the standard decoder (Python's JSON parser keeps no positions)."""
    decoder = json.JSONDecoder(parse_int=read_integer)

    def skip(at: int) -> int:
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        return at

    at = skip(0)
    if text[at : at + 1] != "{":
        return []
    at = skip(at + 1)
    found: list[int] = []
    while at < len(text) and text[at] == '"':
        key, at = decoder.raw_decode(text, at)
        at = skip(skip(at) + 1)  # past the colon
        if key == "checks" and text[at : at + 1] == "[":
            found = []
            at = skip(at + 1)
            while at < len(text) and text[at] != "]":
                found.append(at)
                _, at = decoder.raw_decode(text, at)
                at = skip(at)
                if text[at : at + 1] == ",":
                    at = skip(at + 1)
            at += 1
        else:
            _, at = decoder.raw_decode(text, at)
        at = skip(at)
        if text[at : at + 1] == ",":
            at = skip(at + 1)
    return found


def read_golden(path: Path) -> GoldenFile:
    """The checks of the file at ``path``; a missing or unreadable file is a :class:`GoldenFileError`."""
    try:
        raw = read_regular(path, GOLDEN_MAX_BYTES)
    except FileNotFoundError:
        raise GoldenFileError(f"{path}: no such file", hint="Check the path of the golden file.") from None
    except OSError as error:
        raise GoldenFileError(f"{path}: cannot be read ({error.strerror or error})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise GoldenFileError(
            f"{path}: not UTF-8 text (byte {error.start + 1} cannot be decoded)",
            hint="Save the golden file as UTF-8.",
        ) from None
    return parse_golden(text, str(path))


def write_golden(path: Path, golden: GoldenFile) -> None:
    """Write ``golden`` to ``path`` atomically (a reader sees the old file or the new one); a path that
    is not a file to write (a FIFO, a table's folder) is refused."""
    problem = output_problem(path, golden_file=True)
    if problem is not None:
        raise GoldenFileError(f"{path}: not written: {problem}", hint=OUTPUT_HINT)
    try:
        write_text_atomic(path, golden.to_json())
    except OSError as error:
        raise GoldenFileError(
            f"{path}: cannot be written ({error.strerror or error})",
            hint="Save the checks to another folder.",
        ) from None


def edit_golden(path: Path, change: Callable[[GoldenFile], GoldenFile]) -> GoldenFile:
    """Apply ``change`` to the file as it is on disk now (an empty file set if it does not exist yet) and
    write the outcome; a file that does not validate is refused, never overwritten."""
    current = read_golden(path) if path.exists() else GoldenFile()
    updated = change(current)
    write_golden(path, updated)
    return updated
