"""Addresses and secrets from the environment, checked before they are used in a request.

A base URL with port 99999 or an unclosed ``[::1`` made the HTTP stack raise tracebacks; an API key
with a line break made it raise an error that quoted the key. Both are refused up front, naming the
variable and saying what is wrong, never showing a secret.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from recall_gui.core.base.surrogates import is_unicode, shown


def address_problem(url: str) -> str | None:
    """Why ``url`` cannot be an HTTP(S) endpoint, or ``None`` when it can."""
    odd = _odd_character(url, allow_non_ascii=True)
    if odd is not None or not is_unicode(url):
        return f"it holds {odd or 'a character outside ASCII'}"
    try:
        parts = urlsplit(url)
    except ValueError as error:  # "Invalid IPv6 URL" for an unclosed bracket
        return f"it does not parse ({shown(str(error))})"
    if parts.scheme not in ("http", "https"):
        scheme = f'"{shown(parts.scheme)}"' if parts.scheme else "none"
        return f"its scheme must be http or https (it has {scheme})"
    try:
        port = parts.port
    except ValueError:
        port_text = parts.netloc.rpartition(":")[2]
        return f'port "{shown(port_text)}" is not a number from 1 to 65535'
    if not parts.hostname:
        return "it names no host"
    if port is not None and not 1 <= port <= 65535:
        return f"port {port} is not a number from 1 to 65535"
    return None


def header_value_problem(value: str) -> str | None:
    """What in ``value`` an HTTP header cannot carry (printable ASCII without spaces), or ``None``.

    Says what kind of character it is, never the value: the value is a secret.
    """
    return _odd_character(value, allow_non_ascii=False)


def _odd_character(text: str, *, allow_non_ascii: bool) -> str | None:
    for char in text:
        code = ord(char)
        if char in "\r\n":
            return "a line break"
        if char in " \t":
            return "a space"
        if code < 0x20 or code == 0x7F:
            return "a control character"
        if code > 0x7E and not allow_non_ascii:
            return "a character outside ASCII"
    return None


#: ``storage_options`` the object store sends as HTTP header values (LanceDB's names and aliases, any case).
HEADER_STORAGE_OPTIONS = frozenset(
    {"aws_access_key_id", "access_key_id", "aws_session_token", "session_token", "aws_token", "token"}
)


def storage_option_problem(name: str, value: str) -> str | None:
    """Why the object store could not use storage option ``name`` set to ``value`` (never quoting it):
    an address that is no HTTP(S) URL, or a credential an HTTP header cannot carry."""
    lowered = name.lower()
    if lowered.endswith(("endpoint", "endpoint_url")):
        problem = address_problem(value)
        return None if problem is None else f"is not a usable address: {problem}"
    if lowered in HEADER_STORAGE_OPTIONS:
        problem = header_value_problem(value)
        return None if problem is None else f"holds {problem}, which an HTTP header cannot carry"
    return None
