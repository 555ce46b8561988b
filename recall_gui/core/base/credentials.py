"""Credentials written into a URL or URI: in its user part (``s3://KEY:SECRET@bucket``,
``http://TOKEN@host``) or in its query (``?access_key=…&secret_key=…``, ``?token=…``, a presigned
``X-Amz-Credential``/``X-Amz-Signature``, an Azure SAS ``sig``).

A secret in an address is a secret like any key: every place that shows or logs an address, and every
error text, passes it through :func:`masked`, which keeps the user name (it says which account) and
writes ``***`` for the password, or for the whole user part when it has no password (a token alone), and
for the value of every query parameter whose name says it holds a secret.
"""

from __future__ import annotations

import base64
import functools
import re
from urllib.parse import unquote, urlsplit

#: ``scheme://``, then ``user:password`` (the password may hold ``/`` and ``+``, as AWS secret keys do, and
#: an unescaped ``@``: it runs to the last ``@`` before a space or a quote) or a token alone, then ``@``.
_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)"
    r"(?:(?P<user>[^/?#\s@:\"']*):[^\s\"']*|[^/?#\s@:\"']*)@"
)

MASK = "***"

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


def _masked_userinfo(match: re.Match[str]) -> str:
    user = match.group("user")
    kept = f"{user}:{MASK}" if user else MASK
    return f"{match.group('scheme')}{kept}@"


def masked(text: str) -> str:
    """``text`` with the password of every URL or URI in it, and the value of every secret query
    parameter, written as ``***``."""
    if "@" in text:
        text = _USERINFO.sub(_masked_userinfo, text)
    if "=" in text:
        text = _PARAMETER.sub(_masked_parameter, text)
    return text


def without_credentials(uri: str) -> str:
    """``uri`` without its user part and its secret query parameters, for what is kept to reopen a place
    (the secret comes from the environment or is typed again)."""
    uri = _USERINFO.sub(lambda match: match.group("scheme"), uri)
    head, mark, query = uri.partition("?")
    if not mark:
        return uri
    query, hash_mark, fragment = query.partition("#")
    # "&" and ";" both separate parameters (as masked() reads them); a kept one keeps the separator it had.
    parts = re.split(r"([&;])", query)
    kept = ""
    for index in range(0, len(parts), 2):
        if is_secret_parameter(parts[index].partition("=")[0]):
            continue
        kept += (parts[index - 1] if kept and index else "") + parts[index]
    return head + (mark + kept if kept else "") + hash_mark + fragment


def has_credentials(uri: str) -> bool:
    """Whether ``uri`` carries a password or token before its host, or a secret in its query."""
    return masked(uri) != uri


def url_secrets(url: str) -> list[str]:
    """The secret pieces of ``url``'s user part in every form a request or an error can carry them: the
    password as written and decoded, and the Basic authorization an HTTP client makes of them."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    forms: set[str] = set()
    for match in _PARAMETER.finditer("?" + parts.query):
        if is_secret_parameter(match.group("name")):
            forms |= {match.group("value"), unquote(match.group("value"))}
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
