"""The description suffix agents get: the database list generated live from the registry, as cosh builds
it, followed by the user's notes — or the user's own text instead, when they chose that knowingly.

:func:`served_tool` is the one answer to "what does an agent get now?": the MCP server lists it, and
``recall-gui tool`` prints it, with the warnings that go with it (a settings file that cannot be read, a
text naming databases that are not active or leaving out active ones).
"""

from __future__ import annotations

from dataclasses import dataclass

from recall_gui.core.base.credentials import masked
from recall_gui.core.base.tool import Recall
from recall_gui.core.registry.registry_types import Registry
from recall_gui.core.registry.suffix_drift import SuffixDrift, suffix_drift
from recall_gui.core.registry.suffix_store import SuffixMode, SuffixSettings, SuffixStore


def build_tool_suffix(registry: Registry) -> str:
    """cosh's suffix: every active database, in registry order, with its description, URI and model
    (a password in the URI masked: agents never get it)."""
    active = registry.active
    if not active:
        return "Available databases:\n\n(none active)\n"
    parts = ["Available databases:\n\n"]
    for db in active:
        parts.append(
            f"- Name: {db.name}\n  Description: {db.description}\n  DB URI: {masked(db.uri)}\n"
            f"  Embedding: {db.embedder.label}\n\n"
        )
    return "".join(parts)


def drift_of(settings: SuffixSettings, registry: Registry) -> SuffixDrift:
    """What the user's text in ``settings`` gets wrong about ``registry``'s databases."""
    replaces_list = settings.mode is SuffixMode.OVERRIDE
    return suffix_drift(settings.text(), registry, replaces_list=replaces_list)


#: What to do about a drift, by who wrote the text that drifted.
DRIFT_HINTS = {
    SuffixMode.NOTES: (
        "Your notes name them; the generated list always names the active databases. Edit the notes on "
        "the window's Agent's tool description page, or activate the databases (`recall-gui activate "
        "NAME`, or on that page)."
    ),
    SuffixMode.OVERRIDE: (
        "Your own text replaces the generated database list and does not follow the registry. Edit it on "
        "the window's Agent's tool description page, or switch back to notes after the generated list."
    ),
}


@dataclass(frozen=True)
class SuffixWarning:
    """Something the user should know about what agents get: what (``message``) and what to do."""

    message: str
    hint: str | None = None


@dataclass(frozen=True)
class ServedTool:
    """The tool an agent gets now, and why it may not be what the user meant."""

    tool: Recall
    #: The suffix inside the tool's description.
    suffix: str
    settings: SuffixSettings
    #: Of the text served (none while a settings file cannot be read: then the generated list is served).
    drift: SuffixDrift

    def warnings(self) -> tuple[SuffixWarning, ...]:
        return suffix_warnings(self.settings, self.drift)


def served_drift(settings: SuffixSettings, registry: Registry) -> SuffixDrift:
    """The drift of what is served with ``settings``: none while a file cannot be read (the generated
    list alone is served then)."""
    return SuffixDrift() if settings.problems else drift_of(settings, registry)


def suffix_warnings(settings: SuffixSettings, drift: SuffixDrift) -> tuple[SuffixWarning, ...]:
    """Every settings file that cannot be read, then the drift of what is served."""
    found = [SuffixWarning(problem.message, problem.hint) for problem in settings.problems]
    if drift:
        found.append(SuffixWarning(drift.describe(), DRIFT_HINTS[settings.mode]))
    return tuple(found)


def served_tool(registry: Registry, store: SuffixStore) -> ServedTool:
    """The tool object an agent is given now for ``registry``, read afresh from the saved settings."""
    settings = store.load()
    suffix = settings.served(build_tool_suffix(registry))
    return ServedTool(Recall().with_description(suffix), suffix, settings, served_drift(settings, registry))
