"""The map page while its neighbour layout is made: colouring, choosing and other requests meanwhile,
and Cancel.

The layout's threads (or the inspection thread) are held by the test where a request must come while
the map is being made, so nothing here depends on how fast the layout runs."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui import core
from recall_gui.core.session.session import SCAN_THREADS
from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.panels.map_view import CHOSEN_COLOUR
from tests.kbtools import PASSAGES, cosh_entry, write_perturbed_table, write_registry
from tests.qt.conftest import WindowFactory, run, until, waiting_for
from tests.qt.test_map_view import colour_at

LAYOUT_TIMEOUT_S = 300.0


@pytest.fixture
def kinds(tmp_path: Path, passage_vectors: Any) -> Path:
    """240 rows (20 of each passage), with a column ``kind``: the passage's id (12 values)."""
    import lancedb
    import pyarrow as pa

    ids, texts = list(PASSAGES), list(PASSAGES.values())
    write_perturbed_table(
        tmp_path / "made", "kinds", ids, texts, passage_vectors, rows=240, ivf_partitions=None
    )
    rows = lancedb.connect(str(tmp_path / "made")).open_table("kinds").to_arrow()
    kind = pa.array([str(i).split("~")[0] for i in rows.column("id").to_pylist()], pa.utf8())
    lancedb.connect(str(tmp_path / "db")).create_table("kinds", rows.append_column("kind", kind))
    return write_registry(tmp_path / "registry", [cosh_entry("kinds", tmp_path / "db")])


def hold(workers: Executor, threads: int) -> threading.Event:
    """Keep ``threads`` threads of ``workers`` busy until the event returned is set."""
    held = threading.Event()
    for _ in range(threads):
        workers.submit(held.wait)
    return held


def start_layout(window: MainWindow, loop: asyncio.AbstractEventLoop) -> threading.Event:
    """Show the map page: the PCA map is drawn, and the neighbour layout starts and is held there."""
    page = window.map
    session = run(loop, window.services.session())
    held = hold(session.layout_executor, SCAN_THREADS)
    with waiting_for(loop, page.mapShown):
        window.pages.setCurrentWidget(page)
    run(loop, until(page.cancel_button.isVisible, "the neighbour layout is under way"))
    assert page.table_map.method == "pca"
    return held


def test_colouring_during_the_layout_colours_the_map_shown_and_the_layout_goes_on(
    kinds: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kinds)
    page = window.map
    held = start_layout(window, loop)
    try:
        combo = page.colour_combo
        with waiting_for(loop, page.mapShown):
            combo.setCurrentIndex(combo.findData("kind"))
            combo.activated.emit(combo.currentIndex())
        assert page.table_map.method == "pca" and "other (2 values)" in page.legend.text()
        assert page.cancel_button.isVisible() and window.operations.running("map")
    finally:
        held.set()
    run(loop, window.operations.wait_idle(), timeout=LAYOUT_TIMEOUT_S)
    assert page.table_map.method == "tsne" and page.method() == "tsne"
    assert "Laid out by t-SNE" in page.status.message and "cancelled" not in page.status.message
    assert "other (2 values)" in page.legend.text()  # the layout is drawn in the column's colours


def test_a_newer_request_during_the_layout_keeps_the_projection_chosen(
    kinds: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kinds)
    page = window.map
    held = start_layout(window, loop)
    try:
        page.seed_spin.setValue(7)
        page.seed_spin.editingFinished.emit()  # another seed: the layout is made again
    finally:
        held.set()
    run(loop, window.operations.wait_idle(), timeout=LAYOUT_TIMEOUT_S)
    assert page.method() == "tsne" and page.table_map.method == "tsne"
    assert page.table_map.projection.seed == 7
    assert "cancelled" not in page.status.message


def test_cancel_names_what_it_stopped(
    kinds: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kinds)
    page = window.map
    session = run(loop, window.services.session())
    held = hold(session.inspect_executor, 1)  # the PCA map waits for the inspection thread
    try:
        combo = page.projection_combo
        combo.setCurrentIndex(combo.findData("pca"))
        window.pages.setCurrentWidget(page)
        run(loop, until(lambda: "Making the PCA map" in page.status.message, "the PCA map is being made"))
        assert page.cancel()
        run(loop, until(lambda: "cancelled" in page.status.message, "the cancel is told"))
    finally:
        held.set()
    run(loop, window.operations.wait_idle())
    assert page.status.message == "Making the PCA map was cancelled; no map is shown."
    assert page.table_map is None and page.method() == "pca"


def test_the_rows_chosen_on_the_pca_map_stay_chosen_on_the_layout_that_replaces_it(
    kinds: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kinds)
    page, knowledge = window.map, window.knowledge
    held = start_layout(window, loop)
    try:
        positions = page.table_map.positions
        chosen = positions[:, 0] < np.median(positions[:, 0])
        with waiting_for(loop, knowledge.browseReady):
            run(loop, page.pointing.choose(chosen))
        ids = np.sort(page.table_map.row_ids[chosen])
    finally:
        held.set()
    run(loop, window.operations.wait_idle(), timeout=LAYOUT_TIMEOUT_S)
    assert page.table_map.method == "tsne"
    assert page.chosen_note.text().startswith(f"{len(ids)} points chosen")
    assert page.clear_button.isEnabled() and page.show_button.isEnabled()
    assert knowledge.selection is not None and np.array_equal(knowledge.selection[0], ids)
    view, now = page.view, page.table_map
    assert view is not None
    for point in np.flatnonzero(np.isin(now.row_ids, ids))[:5]:  # drawn as chosen on the new map
        x, y = (float(v) for v in now.positions[point])
        assert colour_at(view, x, y).rgb() == CHOSEN_COLOUR.rgb()
    with waiting_for(loop, knowledge.browseReady):
        page.clear_button.click()
    assert knowledge.selection is None and not page.clear_button.isEnabled()


def test_a_map_without_some_of_the_chosen_rows_ends_the_choice_on_the_knowledge_page_too(
    kinds: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = open_window(kinds)
    page, knowledge = window.map, window.knowledge
    combo = page.projection_combo
    combo.setCurrentIndex(combo.findData("pca"))
    with waiting_for(loop, page.mapShown):
        window.pages.setCurrentWidget(page)
    run(loop, window.operations.wait_idle())
    chosen = np.zeros(len(page.table_map), bool)
    chosen[-20:] = True
    with waiting_for(loop, knowledge.browseReady):
        run(loop, page.pointing.choose(chosen))
    assert knowledge.selection is not None
    made = core.inspect.build_map

    async def first_half(*args: Any, **kwargs: Any) -> Any:
        """A map of a sample without the rows chosen (as another seed of a bigger table draws)."""
        whole = await made(*args, **kwargs)
        half = slice(0, len(whole) // 2)
        projection = dataclasses.replace(whole.projection, positions=whole.positions[half])
        return dataclasses.replace(whole, projection=projection, row_ids=whole.row_ids[half], sampled=True)

    monkeypatch.setattr(core.inspect, "build_map", first_half)
    page.seed_spin.setValue(3)
    page.seed_spin.editingFinished.emit()
    run(loop, window.operations.wait_idle())
    assert page.table_map.projection.seed == 3 and len(page.table_map) == 120
    assert knowledge.selection is None and not page.clear_button.isEnabled()
    assert knowledge.browse_model.total == 240  # every row of the table again
