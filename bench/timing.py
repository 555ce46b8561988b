"""Timing side by side: each measurement alternates with its floor, in the same process, and medians
are reported (the machine is shared, so single runs mean little)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Pair:
    """Medians (ms) of a measurement and its floor over the same runs."""

    value_ms: float
    floor_ms: float
    runs: int

    @property
    def ratio(self) -> float:
        return self.value_ms / self.floor_ms


def clock_ms(function: Callable[[], Any]) -> float:
    started = time.perf_counter()
    function()
    return (time.perf_counter() - started) * 1000


async def aclock_ms(function: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await function()
    return (time.perf_counter() - started) * 1000


async def side_by_side(
    inputs: Sequence[T],
    subject: Callable[[T], Awaitable[Any]],
    floor: Callable[[T], Any],
    *,
    rounds: int = 1,
) -> Pair:
    """Run ``subject`` and ``floor`` on every input, alternating which goes first; medians of both.

    ``floor`` may be synchronous or return an awaitable.
    """
    values: list[float] = []
    floors: list[float] = []

    async def run_floor(item: T) -> float:
        started = time.perf_counter()
        result = floor(item)
        if isinstance(result, Awaitable):
            await result
        return (time.perf_counter() - started) * 1000

    for round_number in range(rounds):
        for position, item in enumerate(inputs):
            if (position + round_number) % 2:
                floors.append(await run_floor(item))
                values.append(await aclock_ms(lambda item=item: subject(item)))  # type: ignore[misc]
            else:
                values.append(await aclock_ms(lambda item=item: subject(item)))  # type: ignore[misc]
                floors.append(await run_floor(item))
    return Pair(statistics.median(values), statistics.median(floors), len(values))
