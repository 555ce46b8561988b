"""Credentials written into a URL or URI: in its user part (``s3://KEY:SECRET@bucket``,
``http://TOKEN@host``), in its query (``?access_key=…&secret_key=…``, ``?jwt=…``, a presigned
``X-Amz-Signature``, an Azure SAS ``sig``) or in its fragment (``#access_token=…``).

A secret in an address is a secret like any key: every place that shows or logs an address, and every
error text, passes it through :func:`masked`, which keeps the user name (it says which account) and
writes ``***`` for the password, or for the whole user part when it has no password (a token alone).
Of an address's query and fragment it keeps the names and masks every value, whatever the name
(``?jwt=``, ``?code=``, ``?session=``, ``?auth[token]=``: a server may take a secret under any name), but
for the few names known to carry none (:data:`HARMLESS_PARAMETERS`). Text that is not an address (a
path, a message without the scheme) has the values of parameters whose name says secret masked.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

#: ``scheme://``, then ``user:password`` (the password may hold ``/`` and ``+``, as AWS secret keys do, and
#: an unescaped ``@``: it runs to the last ``@`` before a space or a quote) or a token alone, then ``@``.
_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)"
    r"(?:(?P<user>[^/?#\s@:\"']*):[^\s\"']*|[^/?#\s@:\"']*)@"
)

MASK = "***"

#: A URL or URI in a text: ``scheme://`` and what follows, up to a space, a quote or an angle bracket.
_ADDRESS = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]*")
#: Query parameters whose values are shown: where and how an object store is reached, which version.
HARMLESS_PARAMETERS = frozenset(
    {
        "region",
        "aws_region",
        "endpoint",
        "aws_endpoint",
        "allow_http",
        "aws_allow_http",
        "version",
        "versionid",
    }
)
#: The shortest value of a parameter whose name says nothing that :func:`url_secrets` counts as a secret.
SCRUBBED_VALUE_CHARS = 8
#: A value that holds an address of its own (``endpoint=http://h?token=…``) is no harmless value.
_NESTED = re.compile(r"[?#@]|%(?:3f|23|40)", re.IGNORECASE)

#: A query parameter after ``?``, ``&`` or ``;``: its name and its value (up to the next separator).
_PARAMETER = re.compile(r"(?P<lead>[?&;])(?P<name>[A-Za-z0-9_.~%-]+)=(?P<value>[^&;#\s\"'<>]*)")
#: Words of a parameter's name that make its value a secret (``access_key``, ``AWSAccessKeyId``, ``sig``).
_SECRET_WORDS = frozenset({"key", "apikey", "accesskey", "secretkey", "sig", "sas", "pwd", "pass", "auth"})
#: Pieces of a name that do, wherever they stand in it (``client_secret``, ``X-Amz-Security-Token``).
_SECRET_PIECES = ("secret", "token", "passw", "signature", "credential")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@functools.lru_cache(maxsize=1024)
def is_secret_parameter(name: str) -> bool:
    """Whether a URL query parameter called ``name`` carries a secret."""
    name = unquote(name)
    lowered = name.lower()
    if any(piece in lowered for piece in _SECRET_PIECES):
        return True
    return any(word.lower() in _SECRET_WORDS for word in _WORDS.findall(name))


def _masked_parameter(match: re.Match[str]) -> str:
    if not match.group("value") or not is_secret_parameter(match.group("name")):
        return match.group()
    return f"{match.group('lead')}{match.group('name')}={MASK}"


def is_harmless_parameter(name: str) -> bool:
    """Whether an address's query parameter called ``name`` is shown with its value."""
    return unquote(name).lower().replace("-", "_") in HARMLESS_PARAMETERS


def _masked_part(part: str) -> str:
    """One ``name=value`` of a query or fragment with its value masked, unless it is harmless; a part
    without a name (``#token``) is all value."""
    name, equals, value = part.partition("=")
    if not part or (equals and not value):
        return part
    if is_harmless_parameter(name) and not _NESTED.search(value):
        return part
    return f"{name}={MASK}" if equals else MASK


def _masked_parts(text: str) -> str:
    """A query or a fragment: each part (separated by ``&`` or ``;``) through :func:`_masked_part`."""
    return "".join(
        _masked_part(piece) if index % 2 == 0 else piece
        for index, piece in enumerate(re.split(r"([&;])", text))
    )


def _masked_address(match: re.Match[str]) -> str:
    address, hash_mark, fragment = match.group().partition("#")
    head, mark, query = address.partition("?")
    return head + mark + _masked_parts(query) + hash_mark + _masked_parts(fragment)


def _masked_userinfo(match: re.Match[str]) -> str:
    user = match.group("user")
    kept = f"{user}:{MASK}" if user else MASK
    return f"{match.group('scheme')}{kept}@"


def masked(text: str) -> str:
    """``text`` with the password of every URL or URI in it, the value of every query parameter and
    fragment part but the harmless ones, and the value of every secret parameter elsewhere, written as
    ``***``."""
    if "@" in text:
        text = _USERINFO.sub(_masked_userinfo, text)
    if "://" in text:
        text = _ADDRESS.sub(_masked_address, text)
    if "=" in text:
        text = _PARAMETER.sub(_masked_parameter, text)
    return text


def without_credentials(uri: str) -> str:
    """``uri`` without its user part and the query parameters and fragment :func:`masked` would mask,
    for what is kept to reopen a place (the secret comes from the environment or is typed again)."""
    uri = _USERINFO.sub(lambda match: match.group("scheme"), uri)
    address, hash_mark, fragment = uri.partition("#")
    head, mark, query = address.partition("?")
    if "://" not in head:  # a path: only what a secret parameter's name says is dropped
        kept = _kept_parts(query, lambda part: is_secret_parameter(part.partition("=")[0]))
        return head + (mark + kept if kept else "") + hash_mark + fragment
    kept = _kept_parts(query, lambda part: _masked_part(part) != part)
    fragment = fragment if _masked_parts(fragment) == fragment else ""
    return head + (mark + kept if kept else "") + (hash_mark + fragment if fragment else "")


def _kept_parts(query: str, secret: Callable[[str], bool]) -> str:
    """The parts of ``query`` that are not ``secret``; a kept one keeps the separator (``&`` or ``;``)
    it had."""
    parts = re.split(r"([&;])", query)
    kept = ""
    for index in range(0, len(parts), 2):
        if secret(parts[index]):
            continue
        kept += (parts[index - 1] if kept and index else "") + parts[index]
    return kept


def has_credentials(uri: str) -> bool:
    """Whether ``uri`` carries a password or token before its host, or a value in its query or
    fragment that is not known to be harmless."""
    return masked(uri) != uri


def url_secrets(url: str) -> list[str]:
    """The secret pieces of ``url`` in every form a request or an error can carry them: the values of
    its query and fragment :func:`masked` masks, its password as written and decoded, and the Basic
    authorization an HTTP client makes of its user part."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    forms: set[str] = set()
    for part in re.split(r"[&;]", parts.query) + re.split(r"[&;]", parts.fragment):
        name, equals, value = part.partition("=")
        value = value if equals else name
        # A short value under a name that says nothing is masked in the address but not hunted for in
        # a text: every "1" or "true" of a message would go.
        if _masked_part(part) != part and (is_secret_parameter(name) or len(value) >= SCRUBBED_VALUE_CHARS):
            forms |= {value, unquote(value)}
    if parts.password is None and not parts.username:
        return [form for form in forms if form]
    if parts.password is None:  # a token alone: an HTTP client sends it as the user, with no password
        forms |= {parts.username or "", unquote(parts.username or "")}
    else:
        forms |= {parts.password, unquote(parts.password)}
    for user, password in (
        (parts.username or "", parts.password or ""),
        (unquote(parts.username or ""), unquote(parts.password or "")),
    ):
        pair = f"{user}:{password}".encode()
        forms.add(base64.b64encode(pair).decode("ascii"))
    return [form for form in forms if form]
