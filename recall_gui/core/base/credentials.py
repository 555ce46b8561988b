"""Credentials written into a URL or URI (``s3://KEY:SECRET@bucket``, ``http://user:password@host``).

A secret in an address is a secret like any key: every place that shows or logs an address, and every
error text, passes it through :func:`masked`, which keeps the user name (it says which account) and
writes ``***`` for the password, or for the whole user part when it has no password (a token alone).
"""

from __future__ import annotations

import base64
import re
from urllib.parse import unquote, urlsplit

#: ``scheme://``, then ``user:password`` (the password may hold ``/`` and ``+``, as AWS secret keys do, and
#: an unescaped ``@``: it runs to the last ``@`` before a space or a quote) or a token alone, then ``@``.
_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)"
    r"(?:(?P<user>[^/?#\s@:\"']*):[^\s\"']*|[^/?#\s@:\"']*)@"
)

MASK = "***"


def _masked_userinfo(match: re.Match[str]) -> str:
    user = match.group("user")
    kept = f"{user}:{MASK}" if user else MASK
    return f"{match.group('scheme')}{kept}@"


def masked(text: str) -> str:
    """``text`` with the password of every URL or URI in it written as ``***``."""
    if "@" not in text:
        return text
    return _USERINFO.sub(_masked_userinfo, text)


def without_credentials(uri: str) -> str:
    """``uri`` without its user part, for what is kept to reopen a place (the secret comes from the
    environment or is typed again)."""
    return _USERINFO.sub(lambda match: match.group("scheme"), uri)


def has_credentials(uri: str) -> bool:
    """Whether ``uri`` carries a password or token before its host."""
    return masked(uri) != uri


def url_secrets(url: str) -> list[str]:
    """The secret pieces of ``url``'s user part in every form a request or an error can carry them: the
    password as written and decoded, and the Basic authorization an HTTP client makes of them."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    if parts.password is None:
        return [parts.username] if parts.username else []
    forms = {parts.password, unquote(parts.password)}
    for user, password in (
        (parts.username or "", parts.password),
        (unquote(parts.username or ""), unquote(parts.password)),
    ):
        pair = f"{user}:{password}".encode()
        forms.add(base64.b64encode(pair).decode("ascii"))
    return [form for form in forms if form]
