"""What the inspecting commands say about the model that embedded their queries: a ``model`` object in
their JSON, and on stderr a note for each stand-in (its results may differ from the agent's)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from recall_gui.cli.common import report_error

if TYPE_CHECKING:
    from recall_gui.core.embedders import ModelInfo


def with_model(data: dict[str, Any], model: ModelInfo | None) -> dict[str, Any]:
    """``data`` with the ``model`` object the inspecting commands' JSON carries."""
    return data if model is None else {**data, "model": model.to_json()}


def note_stand_ins(models: Iterable[ModelInfo | None]) -> None:
    """One note on stderr for each stand-in among ``models``."""
    said: set[str] = set()
    for model in models:
        note = model.note() if model is not None else None
        if note is not None and model is not None and model.name not in said:
            said.add(model.name)
            report_error(note, level="note")
