"""Numbers the user sets in the environment (timeouts, memory bounds): honoured, or refused naming the
variable; never replaced by the default unseen. Unset or blank means the default."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from recall_gui.core.base.errors import InvalidInputError


def positive_number(
    name: str, default: float, unit: str, environment: Mapping[str, str] | None = None
) -> float:
    """``$name`` as a finite number above 0 (``unit``: what it counts, e.g. "seconds"); ``default`` when
    unset or blank; an :class:`InvalidInputError` naming the variable for anything else.
    ``environment``: where to read it (the process's own by default)."""
    text = (os.environ if environment is None else environment).get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise _refused(name, text, unit, default)
    return value


def positive_integer(name: str, default: int, unit: str) -> int:
    """As :func:`positive_number`, for a whole number (``4096``, not ``4096.5``)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) <= 0:
        raise _refused(name, text, unit, default)
    return int(text)


def _refused(name: str, text: str, unit: str, default: float) -> InvalidInputError:
    shown = text if len(text) <= 40 else text[:40] + "…"
    return InvalidInputError(
        f"{name} is {shown!r}, not a number of {unit} above 0",
        hint=f"Set {name} to a number of {unit} (the default is {default:g}), or unset it.",
    )
