"""``recall-gui models``: every local model cosh knows, and what would really serve it on this machine.

Each model is *exact* (a copy proved to be cosh's file or, for AllMiniLML6V2, its published weights), a
*stand-in* (named, with what it stands in for and how far off it was measured to be, or that it could not
be verified) or *unavailable*; the copies passed over are named with why (``model_choice``). Nothing is
downloaded; a copy not judged before is loaded once to be judged (``model_verdicts`` keeps the verdict).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from recall_gui.core.embedders.cosh_files import cosh_file
from recall_gui.core.embedders.model_caches import CacheRoot, cache_roots
from recall_gui.core.embedders.model_choice import Choice, choose
from recall_gui.core.embedders.model_verdicts import Verdicts
from recall_gui.core.registry.models import LOCAL_MODELS

Status = Literal["exact", "stand-in", "unavailable"]


@dataclass(frozen=True)
class PassedOver:
    """A copy that does not serve the model: unusable, or a stand-in behind a better copy."""

    path: Path
    status: Literal["stand-in", "unusable"]
    why: str

    def to_json(self) -> dict[str, object]:
        return {"path": str(self.path), "status": self.status, "why": self.why}


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
    #: For an exact copy: how that was established.
    evidence: str = ""
    passed_over: tuple[PassedOver, ...] = ()

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
            "evidence": self.evidence or None,
            "passed_over": [copy.to_json() for copy in self.passed_over],
        }


def _entry(choice: Choice) -> CatalogEntry:
    name = choice.cosh_name
    model, wanted = LOCAL_MODELS[name], cosh_file(name)
    described = wanted.describe() if wanted is not None else ""
    passed = tuple(
        PassedOver(
            judged.candidate.path,
            "unusable" if judged.verdict.status == "unusable" else "stand-in",
            judged.verdict.why,
        )
        for judged in choice.passed_over
    )
    if choice.served is None:
        return CatalogEntry(name, model.shown_label, model.dim, described, "unavailable", passed_over=passed)
    info, found = choice.served.info, choice.served.candidate
    return CatalogEntry(
        name,
        model.shown_label,
        model.dim,
        described,
        "exact" if info.exact else "stand-in",
        info.source,
        found.path,
        found.size(),
        info.stands_in_for,
        info.agreement,
        info.evidence,
        passed,
    )


def catalog(roots: list[CacheRoot] | None = None, verdicts: Verdicts | None = None) -> list[CatalogEntry]:
    """Every local model cosh knows, in the registry's order, with what would serve it now; blocking."""
    searched = cache_roots() if roots is None else roots
    known = verdicts or Verdicts()
    return [_entry(choose(name, known, searched, load=False)) for name in LOCAL_MODELS]


def catalog_entry(name: str, verdicts: Verdicts | None = None) -> CatalogEntry:
    """One model's entry (``name`` must be one of cosh's local models); blocking."""
    return _entry(choose(name, verdicts or Verdicts(), load=False))
