"""``recall-gui models``: every local model cosh knows, and how this machine would serve it.

Read from folders and file sizes only (nothing is loaded or downloaded): each model is *exact* (cosh's own
file or, for AllMiniLML6V2, its published weights), a *stand-in* (named, with what it stands in for and
how well it agrees where that was measured) or *unavailable*.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from recall_gui.core.embedders.cosh_files import cosh_file
from recall_gui.core.embedders.model_caches import CacheRoot, cache_roots
from recall_gui.core.embedders.model_sources import Candidate, candidates
from recall_gui.core.registry.models import LOCAL_MODELS

Status = Literal["exact", "stand-in", "unavailable"]


@dataclass(frozen=True)
class CatalogEntry:
    """One of cosh's local models, as this machine would serve it now."""

    name: str
    label: str
    dim: int
    #: The file cosh runs for it (Hugging Face repository and file).
    cosh_file: str
    status: Status
    source: str = ""
    path: Path | None = None
    size: int | None = None
    stands_in_for: str = ""
    agreement: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "label": self.label,
            "dim": self.dim,
            "cosh_file": self.cosh_file,
            "status": self.status,
            "exact": self.status == "exact",
            "source": self.source or None,
            "path": str(self.path) if self.path is not None else None,
            "size_bytes": self.size,
            "stands_in_for": self.stands_in_for or None,
            "agreement": self.agreement or None,
        }


def _entry(name: str, found: Candidate | None) -> CatalogEntry:
    model, wanted = LOCAL_MODELS[name], cosh_file(name)
    described = wanted.describe() if wanted is not None else ""
    if found is None:
        return CatalogEntry(name, model.label, model.dim, described, "unavailable")
    info = found.info
    return CatalogEntry(
        name,
        model.label,
        model.dim,
        described,
        "exact" if info.exact else "stand-in",
        info.source,
        found.path,
        found.size(),
        info.stands_in_for,
        info.agreement,
    )


def catalog(roots: list[CacheRoot] | None = None) -> list[CatalogEntry]:
    """Every local model cosh knows, in the registry's order, with the way it would be served now."""
    searched = cache_roots() if roots is None else roots
    return [_entry(name, next(candidates(name, searched), None)) for name in LOCAL_MODELS]


def catalog_entry(name: str) -> CatalogEntry:
    """One model's entry (``name`` must be one of cosh's local models)."""
    return _entry(name, next(candidates(name), None))
