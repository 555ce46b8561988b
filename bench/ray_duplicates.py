"""``duplicates_ray_20k``: near-duplicates of a 20k x 384 table on a local Ray of this machine's cores
(``find_duplicates_on_ray``: lance-ray's read, k-means partitions with guests, exact pairs per partition,
the groups joined in the driver) beside the local engine on the same table. Checked: the Ray engine's
groups are the local engine's (the recall of its groups is 1.0); the partitions' sizes and the guests'
overhead are kept. Ray's start is timed apart. Needs the scale extra."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bench.context import BenchContext
from bench.results import Metric

ROWS = 20_000
PARTITIONS = 8


def run(ctx: BenchContext) -> list[Metric]:
    from recall_gui.core.ray.cluster import ray_cluster

    table = ctx.table(ROWS)
    with ray_cluster() as cluster:
        return [asyncio.run(measure(table, cluster.start_seconds))]


async def measure(table: Any, start_s: float) -> Metric:
    from recall_gui.core.inspect.duplicates import find_duplicates
    from recall_gui.core.ray.duplicate_engine import find_duplicates_on_ray
    from recall_gui.core.session.session import Session
    from recall_gui.core.storage.target import TableTarget

    target = TableTarget(str(table.db_dir), table.name)
    async with Session() as session:
        started = time.perf_counter()
        local = await find_duplicates(session, target)
        local_s = time.perf_counter() - started
        started = time.perf_counter()
        found = await find_duplicates_on_ray(session, target, partitions=PARTITIONS)
        ray_s = time.perf_counter() - started
    expected = {frozenset(group.ids) for group in local.groups}
    got = {frozenset(group.ids) for group in found.report.groups}
    recall = len(expected & got) / len(expected) if expected else 1.0
    same = found.report.to_dict() == local.to_dict()
    plan = found.plan
    print(
        f"  local {local_s:.1f} s, Ray {ray_s:.1f} s (+{start_s:.1f} s to start); {len(local.groups)} "
        f"groups, recall {recall:.3f}, same report: {same}; partitions {plan.held} (at home {plan.home}), "
        f"guests {plan.guest_share:.2f} per row",
        flush=True,
    )
    return Metric(
        f"duplicates_ray_{ROWS // 1000}k",
        ray_s,
        "s",
        local_s,
        "same groups (recall 1.0)",
        same and recall == 1.0,
        {
            "partitions": PARTITIONS,
            "held": list(plan.held),
            "home": list(plan.home),
            "guest_share": round(plan.guest_share, 3),
            "groups": len(local.groups),
            "recall": recall,
            "ray_start_s": round(start_s, 1),
        },
    )
