"""What makes two entries near-duplicates: a metric and a threshold, with the defaults and the checks a
threshold a user typed must pass (kept apart from the NumPy search so the window and the command line can
offer them without loading NumPy)."""

from __future__ import annotations

import math

from recall_gui.core.base.errors import InvalidInputError

#: The default thresholds (docs/PERFORMANCE_LOG.md#near_duplicates-default_thresholds): a passage re-embedded
#: after a small edit stays within them, distinct passages of the demo are twice as far apart or more.
#: For vectors of length 1 (most embedding models), squared L2 is twice the cosine distance.
DEFAULT_THRESHOLDS = {"cosine": 0.05, "l2": 0.10}
METRICS = tuple(DEFAULT_THRESHOLDS)
#: How a group of near-duplicates is made, in the words the report, the command and the page use.
GROUPING_RULE = (
    "a group holds the entries linked by pairs within the threshold, so a chain of close pairs can hold "
    "two entries farther apart (its widest pair is shown)"
)


def check_threshold(threshold: float, metric: str) -> float:
    """``threshold`` if it can be used with ``metric``; refuses it with what to use instead."""
    if metric not in DEFAULT_THRESHOLDS:
        raise InvalidInputError(
            f'unknown metric "{metric}" for near-duplicates (expected one of {", ".join(METRICS)})'
        )
    if not math.isfinite(threshold) or threshold < 0:
        raise InvalidInputError(
            f"the threshold {threshold!r} is not a distance",
            hint=f"Give a number of 0 or more; the default for {metric} is {DEFAULT_THRESHOLDS[metric]}.",
        )
    if metric == "cosine" and threshold >= 1:
        raise InvalidInputError(
            f"a cosine distance threshold of {threshold:g} would group unrelated entries",
            hint=f"Give a number below 1; near-copies are within about {DEFAULT_THRESHOLDS['cosine']}.",
        )
    return float(threshold)
