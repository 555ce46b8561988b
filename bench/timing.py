"""Timing side by side: each measurement alternates with its floor (and any other references), in the
same process, over the same inputs; medians are reported (the machine is shared: one run means little)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Pair:
    """Medians (ms) of a measurement and its floor over the same runs, and of any other references."""

    value_ms: float
    floor_ms: float
    runs: int
    others_ms: dict[str, float] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.value_ms / self.floor_ms


async def _clock_ms(function: Callable[[], Any]) -> float:
    started = time.perf_counter()
    result = function()
    if isinstance(result, Awaitable):
        await result
    return (time.perf_counter() - started) * 1000


async def side_by_side(
    inputs: Sequence[T],
    subject: Callable[[T], Awaitable[Any]],
    floor: Callable[[T], Any],
    *,
    rounds: int = 1,
    others: Mapping[str, Callable[[T], Any]] | None = None,
    settle: Callable[[], Awaitable[Any]] | None = None,
) -> Pair:
    """Run ``subject``, ``floor`` and ``others`` on every input, rotating which goes first; medians.

    ``floor`` and ``others`` may be synchronous or return an awaitable. ``settle``, if given, is awaited
    untimed before each timed call (a window paints what the previous call showed, as it would before
    a user's next query).
    """
    functions: dict[str, Callable[[T], Any]] = {"subject": subject, "floor": floor, **(others or {})}
    times: dict[str, list[float]] = {name: [] for name in functions}
    names = list(functions)
    for round_number in range(rounds):
        for position, item in enumerate(inputs):
            shift = (position + round_number) % len(names)
            for name in names[shift:] + names[:shift]:
                if settle is not None:
                    await settle()
                times[name].append(await _clock_ms(lambda name=name, item=item: functions[name](item)))  # type: ignore[misc]
    medians = {name: statistics.median(values) for name, values in times.items()}
    return Pair(
        medians.pop("subject"),
        medians.pop("floor"),
        len(times["subject"]),
        medians,
    )
