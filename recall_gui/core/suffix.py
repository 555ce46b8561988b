"""The description suffix: generated from the registry as cosh does, or saved by the user.

The generated text follows cosh's ``build_tool_suffix`` byte for byte. A saved suffix lives in this app's
config dir (never in cosh's files); when one exists it is what agents get, until the user resets it.
"""

from __future__ import annotations

from pathlib import Path

from recall_gui.core.atomic import write_text_atomic
from recall_gui.core.paths import app_config_dir
from recall_gui.core.registry import Registry
from recall_gui.core.tool import Recall

SUFFIX_FILE = "tool_suffix.txt"


def build_tool_suffix(registry: Registry) -> str:
    """cosh's suffix: every active database, in registry order, with its description, URI and model."""
    active = registry.active
    if not active:
        return "Available databases:\n\n(none active)\n"
    parts = ["Available databases:\n\n"]
    for db in active:
        parts.append(
            f"- Name: {db.name}\n  Description: {db.description}\n  DB URI: {db.uri}\n"
            f"  Embedding: {db.embedder.label}\n\n"
        )
    return "".join(parts)


class SuffixStore:
    """The user's own suffix, kept in the app's config dir."""

    def __init__(self, config_dir: Path | None = None) -> None:
        self.directory = Path(config_dir) if config_dir is not None else app_config_dir()

    @property
    def path(self) -> Path:
        return self.directory / SUFFIX_FILE

    def load(self) -> str | None:
        """The saved suffix, or ``None`` when the user has not saved one."""
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def save(self, suffix: str) -> None:
        write_text_atomic(self.path, suffix)

    def reset(self) -> None:
        """Forget the saved suffix: agents get the generated one again."""
        self.path.unlink(missing_ok=True)


def effective_suffix(registry: Registry, store: SuffixStore) -> str:
    """What agents get now: the saved suffix if there is one, else the generated one."""
    saved = store.load()
    return saved if saved is not None else build_tool_suffix(registry)


def current_tool(registry: Registry, store: SuffixStore) -> Recall:
    """The tool object an agent would be given now."""
    return Recall().with_description(effective_suffix(registry, store))
