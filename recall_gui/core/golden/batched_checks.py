"""Golden checks of one database in one pass: when its table has no index and its vectors are in memory,
every check's query is embedded as the agent's search embeds it, and all are ranked with one matrix
product (:func:`recall_gui.core.session.exact.nearest_rows_many`) instead of a scan each. The answers are the
ones the agent's search gives, check by check; anything else (an index, a cloud model, vectors not in
memory, an error) is left to the one-search-per-check path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from recall_gui.core.base.errors import RecallError
from recall_gui.core.base.types import effective_limit
from recall_gui.core.golden.golden import GoldenCheck
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.nearest import _exact_hits, checked_vector, index_for, open_for_search
from recall_gui.core.session.exact import nearest_rows_many
from recall_gui.core.session.vector_cache import NotCached
from recall_gui.core.storage.entry_names import IdRepeats
from recall_gui.core.storage.open_table import metric_for

#: Fewer checks than this run one search each (a pass per check costs no more).
MIN_BATCH = 2


#: What the agent gets for one check: the results' ids and contents, and the ids the table's rows share.
BatchFound = tuple[tuple[str, ...], tuple[str, ...], IdRepeats]


async def run_batch(
    harness: Harness, entry: DatabaseEntry, checks: Sequence[GoldenCheck]
) -> list[BatchFound | None] | None:
    """What the agent gets for each of ``checks`` (all run on ``entry``), in its order; ``None`` where
    the one-pass path does not apply and each check (or that one) should run its own search."""
    if len(checks) < MIN_BATCH:
        return None
    session = harness.session
    try:
        spec = entry.embedder
        if spec.kind != "local":
            return None
        opened = await open_for_search(session, entry.target)
        metric = metric_for(opened, entry.target.options)
        table_dim = opened.columns.vector_dim
        limits = [effective_limit(check.limit) for check in checks]
        if index_for(opened, metric) is not None or min(limits) <= 0 or spec.dim not in (None, table_dim):
            return None
        cached = await session.vectors.get(opened, wait=True)
        if isinstance(cached, NotCached):
            return None
        repeats = await opened.id_repeats()
        started = [session.models.start_query(spec, check.query, table_dim) for check in checks]
        vectors = [checked_vector(await query.wait(), table_dim) for query in started]
    except RecallError:
        return None  # each check's own search reports it, as the agent would get it
    import numpy as np

    measure = session.arithmetic.measure()
    job = session.compute_executor.submit(
        nearest_rows_many, cached.vectors, np.stack(vectors), metric, limits, measure=measure
    )
    rankings = await asyncio.wrap_future(job)
    session.arithmetic.start()  # once ranked, so the self-test never slows the first ranking down
    found: list[BatchFound | None] = []
    for positions, distances in rankings:
        hits = await _exact_hits(opened, cached, positions, distances)
        if hits is None:
            found.append(None)
        else:
            found.append((tuple(hit.id for hit in hits), tuple(hit.content for hit in hits), repeats))
    return found
