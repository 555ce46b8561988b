"""recall-gui's benchmarks: ``make bench`` (``python -m bench``).

Every measurement runs side by side with its floor, in the same process, and is reported as medians
with their ratio. Layout:

- ``__main__.py``: the entry point and :data:`bench.__main__.GROUPS`, the metric groups in run order;
- ``context.py``: what groups share (generated tables, the real model, query vectors, machine facts);
- ``data.py``: the data, built once and cached under ``bench/data/`` (git-ignored);
- ``timing.py``: alternating measurement with the floor; ``results.py``: the one results writer
  (printed table + ``bench/results.json``); ``report.py``: docs/PERFORMANCE.md's table of latest figures,
  from ``results.json`` (``python -m bench.report``; a run writes it too);
- one module per metric group: ``exact_search``, ``indexed_search``, ``end_to_end`` (core only) and
  ``startup`` (the window's start beside a bare PySide6 window's), ``window`` (``end_to_end_100k`` up to
  the window's results model, ``gui_max_gap_ms``, ``browse_1m_rss_mb``; the window runs in processes of
  its own, :mod:`bench.window_child`), ``window_memory`` (``window_rss_after_50_databases_mb``: memory kept
  across a user's repeated actions), ``fresh_search`` (a fresh ``recall-gui search`` process beside
  lsql's first result and beside its imports), ``cli`` (:mod:`bench.cli_cold`: a fresh ``list`` and
  ``search`` to their output), ``mcp`` (:mod:`bench.agent_first_call`: an agent's first call through
  ``recall-gui mcp``) and ``map`` (PCA and t-SNE of the 100k table's vectors, the GUI thread's longest
  stall panning its map; :mod:`bench.map_child`);
- ``gap.py``: the GUI-thread gap meter; ``window_startup.py`` and ``agent_view.py`` also run alone.

Adding a group: write ``bench/<group>.py`` with ``run(ctx: BenchContext) -> list[Metric]`` and add one
line to ``GROUPS``.
"""

# Set up the process as the app's entry points do, before anything imports NumPy (OpenBLAS on one
# thread): the benchmark measures the app as it runs.
from recall_gui.runtime import configure_process

configure_process()
