"""Does the user's text tell agents about the databases they can search, and only those?

The generated list always names exactly the active databases. The user's own text may not: notes that
mention a database since deactivated, or an override written for another registry, or one saved before
cosh activated another database. A database counts as named when a ``Name:`` line lists it (cosh's
listing format) or its name stands in the text as a word of its own. An override that lists databases
leaves out every active database it does not list; one in prose leaves out those it never mentions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from recall_gui.core.registry.registry_types import Registry

#: A ``Name:`` line of a listing, with or without cosh's leading dash.
_LISTED = re.compile(r"^[ \t]*(?:-[ \t]*)?Name:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
#: A word as database names are usually spelt: letters, digits, ``_`` and ``-``, joined by single dots.
_WORD = re.compile(r"[\w-]+(?:\.[\w-]+)*")
#: How many names a warning spells out before it counts the rest.
NAMES_SHOWN = 8


@dataclass(frozen=True)
class SuffixDrift:
    """Databases the user's text names wrongly, or leaves out."""

    #: Named, and in the registry, but not active: agents calling them get "not found".
    inactive: tuple[str, ...] = ()
    #: Listed, but not in this registry at all.
    unknown: tuple[str, ...] = ()
    #: Active, but never named (only an override can leave one out).
    omitted: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.inactive or self.unknown or self.omitted)

    def describe(self) -> str:
        """One sentence naming every problem, e.g. for ``warning:`` lines and the window."""
        parts = []
        if self.inactive:
            parts.append(f"names {_databases(self.inactive, 'that is not active', 'that are not active')}")
        if self.unknown:
            held = "this registry does not hold"
            parts.append(f"names {_databases(self.unknown, held, held)}")
        if self.omitted:
            parts.append(f"leaves out {_databases(self.omitted, 'that is active', 'that are active')}")
        if not parts:
            return "The tool description names exactly the active databases."
        joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        return f"The tool description agents get {joined}."


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown + (f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")


def _databases(names: Sequence[str], one: str, many: str) -> str:
    if len(names) == 1:
        return f"a database {one} ({names[0]})"
    return f"{len(names)} databases {many} ({_names(names)})"


def _word_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.[\w-])")


def suffix_drift(text: str, registry: Registry, *, replaces_list: bool) -> SuffixDrift:
    """What ``text`` (the user's notes, or with ``replaces_list`` their override) gets wrong about the
    databases of ``registry``. Linear in the text and the registry, for registries of many thousands."""
    listed = list(dict.fromkeys(match.group(1) for match in _LISTED.finditer(text) if match.group(1)))
    listed_set = set(listed)
    words = set(_WORD.findall(text))

    def mentioned(name: str) -> bool:
        if name in listed_set or name in words:
            return True
        # A name that is not one word (spaces, quotes ...) is looked for as it is.
        return _WORD.fullmatch(name) is None and _word_pattern(name).search(text) is not None

    # An empty text mentions no name: a large registry is not walked for nothing.
    has_text = bool(text.strip())
    inactive = tuple(db.name for db in registry.inactive if mentioned(db.name)) if has_text else ()
    unknown = tuple(name for name in listed if registry.get(name) is None)
    if not replaces_list:
        return SuffixDrift(inactive, unknown)
    if listed:
        omitted = tuple(db.name for db in registry.active if db.name not in listed_set)
    else:
        omitted = tuple(db.name for db in registry.active if not (has_text and mentioned(db.name)))
    return SuffixDrift(inactive, unknown, omitted)
