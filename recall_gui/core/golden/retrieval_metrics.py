"""Id-exact retrieval metrics of one check, with binary relevance: the expected ids are the relevant ones.

For a check with limit k whose expected ids were found at ranks r (1 is first) among the k results:
recall = |found| / |expected|; reciprocal rank = 1 / (the first found rank), 0 when none is found; nDCG =
the sum of 1 / log2(r + 1) over the found ids, divided by the same sum for the best possible order
(min(|expected|, k) relevant ids at ranks 1, 2, ...). They are deterministic: a search gives one answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CheckMetrics:
    recall: float
    reciprocal_rank: float
    ndcg: float

    def to_dict(self) -> dict[str, float]:
        return {"recall": self.recall, "reciprocal_rank": self.reciprocal_rank, "ndcg": self.ndcg}


@dataclass(frozen=True)
class MeanMetrics:
    """The means of :class:`CheckMetrics` over the checks that ran."""

    recall: float
    mrr: float
    ndcg: float
    checks: int

    def to_dict(self) -> dict[str, float]:
        return {"recall": self.recall, "mrr": self.mrr, "ndcg": self.ndcg}

    def describe(self) -> str:
        return (
            f"recall {self.recall:.3f}, MRR {self.mrr:.3f}, nDCG {self.ndcg:.3f} "
            f"(means over {self.checks} check{'s' if self.checks != 1 else ''})"
        )


def check_metrics(ranks: Sequence[int | None], limit: int) -> CheckMetrics:
    """The metrics of one check from the rank of each expected id (``None``: not among the results)."""
    found = sorted(rank for rank in ranks if rank is not None)
    if not ranks:
        return CheckMetrics(0.0, 0.0, 0.0)
    ideal = sum(1 / math.log2(place + 1) for place in range(1, min(len(ranks), limit) + 1))
    gained = sum(1 / math.log2(rank + 1) for rank in found)
    return CheckMetrics(
        recall=len(found) / len(ranks),
        reciprocal_rank=1 / found[0] if found else 0.0,
        ndcg=gained / ideal if ideal > 0 else 0.0,
    )


def mean_metrics(metrics: Sequence[CheckMetrics]) -> MeanMetrics | None:
    """Means over ``metrics``; ``None`` when no check ran."""
    if not metrics:
        return None
    count = len(metrics)
    return MeanMetrics(
        recall=math.fsum(m.recall for m in metrics) / count,
        mrr=math.fsum(m.reciprocal_rank for m in metrics) / count,
        ndcg=math.fsum(m.ndcg for m in metrics) / count,
        checks=count,
    )
