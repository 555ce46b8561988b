"""Near-duplicates: planted copies (exact, with small noise, re-embedded after a small edit) in real tables
are all found at the default threshold and nothing else is, the grouping is exactly NumPy's brute force,
and the search can be cancelled; the knowledge base's files are unchanged."""

from __future__ import annotations

import asyncio
import difflib
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.inspect.duplicate_threshold import DEFAULT_THRESHOLDS
from recall_gui.core.inspect.duplicates import NotInMemoryError, find_duplicates
from recall_gui.core.inspect.near_duplicates import GroupFinder, find_groups
from recall_gui.core.session.exact import VectorMatrix
from recall_gui.core.session.session import Session
from recall_gui.core.storage.target import TableTarget
from tests.core.test_cli import cli
from tests.kbtools import (
    PASSAGES,
    KnowledgeBase,
    cosh_entry,
    snapshot_tree,
    write_lance_table,
    write_perturbed_table,
    write_registry,
)

#: Small edits a person makes to an entry before ingesting it again (each re-embedded with the model).
EDITS = {
    "pw-reset": ("then Change", "and then Change"),
    "paris": ("Seine.", "Seine"),
    "generators": ("A generator", "a generator"),
    "coffee": ("finely ground", "finely-ground"),
    "tides": ("mainly", "mostly"),
    "git-rebase": ("rewriting its history", "rewriting history"),
}
#: Per-component noise added to copies of these entries' vectors (then renormalised, as the model's are).
NOISE = {"berlin": 0.002, "photosynthesis": 0.005, "unicode": 0.008}
#: Exact copies: the entry and how many copies of it.
COPIES = {"asyncio": 1, "lancedb": 3}


def planted_rows(
    ids: list[str], texts: list[str], vectors: np.ndarray[Any, Any], embedder: Any, rng: np.random.Generator
) -> tuple[list[str], list[str], np.ndarray[Any, Any], dict[str, set[str]]]:
    """The rows with copies planted after them, and each planted group (the original's id -> all ids)."""
    position = {entry_id: number for number, entry_id in enumerate(ids)}
    new_ids, new_texts, new_vectors = list(ids), list(texts), [vectors]
    groups: dict[str, set[str]] = {}
    for original, (old, new) in EDITS.items():
        edited = texts[position[original]].replace(old, new)
        assert edited != texts[position[original]]
        new_ids.append(f"{original}~edited")
        new_texts.append(edited)
        new_vectors.append(np.asarray(embedder.embed_sync(edited), np.float32)[None, :])
        groups.setdefault(original, {original}).add(f"{original}~edited")
    for original, sigma in NOISE.items():
        vector = vectors[position[original]] + rng.normal(0, sigma, vectors.shape[1]).astype(np.float32)
        new_ids.append(f"{original}~noisy")
        new_texts.append(texts[position[original]])
        new_vectors.append((vector / np.linalg.norm(vector))[None, :])
        groups.setdefault(original, {original}).add(f"{original}~noisy")
    for original, count in COPIES.items():
        for number in range(count):
            new_ids.append(f"{original}~copy{number}")
            new_texts.append(texts[position[original]])
            new_vectors.append(vectors[position[original]][None, :])
            groups.setdefault(original, {original}).add(f"{original}~copy{number}")
    return new_ids, new_texts, np.vstack(new_vectors).astype(np.float32), groups


@pytest.fixture
def planted(tmp_path: Path, passage_vectors: Any, embedder: Any) -> tuple[KnowledgeBase, dict[str, set[str]]]:
    ids, texts, vectors, groups = planted_rows(
        list(PASSAGES), list(PASSAGES.values()), passage_vectors, embedder, np.random.default_rng(7)
    )
    write_lance_table(tmp_path / "db", "notes", ids, texts, vectors)
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")])
    return KnowledgeBase("notes", tmp_path / "db", registry, tuple(ids), tuple(texts), vectors), groups


def brute_force_pairs(vectors: np.ndarray[Any, Any], threshold: float, metric: str) -> set[tuple[int, int]]:
    x = vectors.astype(np.float64)
    if metric == "cosine":
        unit = x / np.linalg.norm(x, axis=1, keepdims=True)
        distances = 1 - unit @ unit.T
    else:
        distances = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
    distances[(vectors[:, None, :] == vectors[None, :, :]).all(axis=2)] = 0.0  # copies: exactly 0
    first, second = np.nonzero(np.triu(distances <= threshold, 1))
    return set(zip(first.tolist(), second.tolist(), strict=True))


def components(pairs: set[tuple[int, int]]) -> set[frozenset[int]]:
    groups: list[set[int]] = []
    for a, b in sorted(pairs):
        joined = [group for group in groups if a in group or b in group]
        merged = {a, b}.union(*joined)
        groups = [group for group in groups if group not in joined] + [merged]
    return {frozenset(group) for group in groups}


def test_planted_copies_are_all_found_and_nothing_else(
    planted: tuple[KnowledgeBase, dict[str, set[str]]], session: Session
) -> None:
    kb, expected = planted
    before = snapshot_tree(kb.db_dir)
    report = asyncio.run(find_duplicates(session, kb.target))
    assert (report.threshold, report.metric) == (DEFAULT_THRESHOLDS["cosine"], "cosine")
    assert {frozenset(group.ids) for group in report.groups} == {frozenset(ids) for ids in expected.values()}
    by_first = {group.ids[0]: group for group in report.groups}
    for original in COPIES:
        assert by_first[original].max_distance == 0.0
    for original in NOISE:
        assert 0 < by_first[original].max_distance <= report.threshold
    contents = {entry.id: entry.content for group in report.groups for entry in group.entries}
    assert contents["pw-reset~edited"] == PASSAGES["pw-reset"].replace(*EDITS["pw-reset"])
    assert report.rows == len(kb.ids)
    assert snapshot_tree(kb.db_dir) == before


@pytest.mark.parametrize("reduced_dims", [0, 4])
@pytest.mark.parametrize(
    ("metric", "threshold"), [("cosine", 0.0), ("cosine", 0.05), ("cosine", 0.6), ("l2", 0.02), ("l2", 0.5)]
)
def test_groups_are_those_of_a_numpy_brute_force(
    passage_vectors: Any, embedder: Any, metric: str, threshold: float, reduced_dims: int
) -> None:
    """With and without the pre-filter (4 principal directions here), tiles of 3 x 5 rows: pairs within a
    tile, across tiles and on the diagonal all occur."""
    _ids, _texts, vectors, _groups = planted_rows(
        list(PASSAGES), list(PASSAGES.values()), passage_vectors, embedder, np.random.default_rng(3)
    )
    if threshold > 0:  # lengths differ (at 0 only identical vectors are exactly 0 apart)
        vectors = vectors * np.linspace(0.5, 2.0, len(vectors), dtype=np.float32)[:, None]
    assert_brute_force(vectors, threshold, metric, reduced_dims=reduced_dims)


def assert_brute_force(vectors: np.ndarray[Any, Any], threshold: float, metric: str, **options: Any) -> Any:
    matrix = VectorMatrix.build(vectors, np.arange(len(vectors), dtype=np.uint64))
    finder = GroupFinder(matrix, threshold, metric, tile_rows=3, tile_columns=5, **options)
    while not finder.done:
        finder.step()
    grouping = finder.finish()
    pairs = brute_force_pairs(vectors, threshold, metric)
    assert {frozenset(group.tolist()) for group in grouping.groups} == components(pairs)
    assert grouping.pairs == len(pairs)
    for group, largest, widest in zip(grouping.groups, grouping.max_distances, grouping.widest, strict=True):
        members = vectors[group].astype(np.float64)
        if metric == "cosine":
            members /= np.linalg.norm(members, axis=1, keepdims=True)
            distances = 1 - members @ members.T
        else:
            distances = ((members[:, None, :] - members[None, :, :]) ** 2).sum(axis=2)
        expected = max(float(distances.max()), 0.0)
        assert largest == pytest.approx(expected, abs=1e-9)
        first, second = (int(np.searchsorted(group, position)) for position in widest)
        assert first < second and group[first] == widest[0] and group[second] == widest[1]
        assert max(float(distances[first, second]), 0.0) == pytest.approx(expected, abs=1e-9)
    return finder


def test_with_the_pre_filter_on_thousands_of_rows_the_groups_are_still_exact(passage_vectors: Any) -> None:
    """4,800 rows, above the size where the pre-filter starts on its own: 600 directions in the span of the
    passages' vectors, eight rows around each at cosine distances of 0 to 0.06 (so many pairs lie near
    the threshold), and exact copies across the table. The same pairs and groups as a brute force."""
    rng = np.random.default_rng(21)
    rows = 4800
    centres = rng.standard_normal((600, len(passage_vectors))) @ passage_vectors.astype(np.float64)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    away = rng.standard_normal((rows, passage_vectors.shape[1]))
    away /= np.linalg.norm(away, axis=1, keepdims=True)
    cosines = 1 - rng.uniform(0, 0.06, (rows, 1))
    vectors = (centres[np.arange(rows) // 8] * cosines + away * np.sqrt(1 - cosines**2)).astype(np.float32)
    vectors[::97] = vectors[5]  # exact copies across the table
    matrix = VectorMatrix.build(vectors, np.arange(rows, dtype=np.uint64))
    finder = GroupFinder(matrix, 0.05, "cosine")
    while not finder.done:
        finder.step()
    grouping = finder.finish()
    assert finder._left is not None and finder.dense_tiles < len(finder._tiles) / 2  # the pre-filter ran
    unit = vectors.astype(np.float64) / np.linalg.norm(vectors.astype(np.float64), axis=1, keepdims=True)
    expected: set[tuple[int, int]] = set()
    for start in range(0, rows, 1200):
        first, second = np.nonzero(1 - unit[start : start + 1200] @ unit.T <= 0.05)
        expected.update((int(a) + start, int(b)) for a, b in zip(first, second, strict=True) if a + start < b)
    assert grouping.pairs == len(expected)
    labels = np.arange(rows)
    for a, b in sorted(expected):  # union-find by relabelling, small enough here
        labels[labels == labels[b]] = labels[a]
    by_label: dict[int, set[int]] = {}
    for position, label in enumerate(labels.tolist()):
        by_label.setdefault(label, set()).add(position)
    assert {frozenset(g.tolist()) for g in grouping.groups} == {
        frozenset(g) for g in by_label.values() if len(g) > 1
    }


def test_tiles_of_alike_vectors_are_compared_in_full(passage_vectors: Any) -> None:
    """Where the pre-filter keeps most pairs of a tile (entries that all look alike), the tile is scored
    in full; the groups are still exactly the brute force's."""
    rng = np.random.default_rng(9)
    alike = passage_vectors[0] + rng.normal(0, 0.01, (60, passage_vectors.shape[1])).astype(np.float32)
    vectors = np.vstack([alike, passage_vectors]).astype(np.float32)
    finder = assert_brute_force(vectors, 0.05, "cosine", reduced_dims=4)
    assert finder.dense_tiles > 0


def text_overlap(first: str, second: str) -> float:
    """The share of the shorter text that the longer one also holds (matching blocks)."""
    matcher = difflib.SequenceMatcher(None, first, second, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / min(len(first), len(second))


@pytest.mark.slow
def test_among_the_demo_passages_only_copies_and_shared_text_group(
    demo_build: Any, embedder: Any, tmp_path: Path
) -> None:
    """The demo's 649 passages, with copies planted: each planted copy groups with its original, and every
    other group at the default threshold joins passages that share their text (Python's help topics repeat
    sections under several topics), never distinct passages."""
    import lancedb

    from recall_gui.core.demo import DEMO_NAME

    demo = lancedb.connect(str(demo_build.db_dir)).open_table(DEMO_NAME).to_arrow()
    ids, texts = demo.column("id").to_pylist(), demo.column("content").to_pylist()
    vectors = np.vstack(demo.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)
    rng = np.random.default_rng(11)
    chosen = sorted(rng.choice(len(ids), 8, replace=False).tolist())
    planted_ids, planted_texts, planted_vectors = list(ids), list(texts), [vectors]
    for number in chosen:
        noisy = vectors[number] + rng.normal(0, 0.004, vectors.shape[1]).astype(np.float32)
        planted_ids.append(f"{ids[number]}~noisy")
        planted_texts.append(texts[number])
        planted_vectors.append((noisy / np.linalg.norm(noisy))[None, :])
    write_lance_table(tmp_path / "db", "docs", planted_ids, planted_texts, np.vstack(planted_vectors))

    async def go() -> Any:
        async with Session() as session:
            return await find_duplicates(session, TableTarget(str(tmp_path / "db"), "docs"))

    report = asyncio.run(go())
    grouped = {entry.id: group for group in report.groups for entry in group.entries}
    for number in chosen:
        assert ids[number] in grouped[f"{ids[number]}~noisy"].ids
    for group in report.groups:
        for entry in group.entries:
            others = [other for other in group.entries if other is not entry]
            assert max(text_overlap(entry.content, other.content) for other in others) >= 0.8, group.ids


def write_big_table(db_dir: Path, passage_vectors: Any, rows: int) -> TableTarget:
    """The table "big": ``rows`` noisy copies of the passages, without an index."""
    texts = list(PASSAGES.values())
    write_perturbed_table(
        db_dir, "big", list(PASSAGES), texts, passage_vectors, rows=rows, ivf_partitions=None
    )
    return TableTarget(str(db_dir), "big")


def test_a_table_above_the_memory_bound_is_refused_saying_so(
    tmp_path: Path, passage_vectors: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = write_big_table(tmp_path / "db", passage_vectors, 2000)
    monkeypatch.setenv("RECALL_GUI_EXACT_CACHE_MB", "1")

    async def go() -> Any:
        async with Session() as session:
            return await find_duplicates(session, target)

    with pytest.raises(NotInMemoryError) as refused:
        asyncio.run(go())
    assert refused.value.message == (
        'Cannot look for near-duplicates in "big": its vectors need 3 MB in memory, more than the 1 MB '
        "allowed (RECALL_GUI_EXACT_CACHE_MB)"
    )
    assert "RECALL_GUI_EXACT_CACHE_MB to at least 3" in (refused.value.hint or "")


@pytest.mark.slow
def test_cancelling_stops_the_work_and_leaves_the_compute_thread_free(
    tmp_path: Path, passage_vectors: Any
) -> None:
    target = write_big_table(tmp_path / "db", passage_vectors, 30_000)
    steps: list[tuple[float, float]] = []  # (time, share of the work done)

    async def go() -> float:
        loop = asyncio.get_running_loop()
        async with Session() as session:
            three_steps = asyncio.Event()

            def progress(share: float) -> None:
                if share > 0:  # after the pre-filter is prepared
                    steps.append((loop.time(), share))
                if len(steps) == 3:
                    three_steps.set()

            task = asyncio.ensure_future(find_duplicates(session, target, on_progress=progress))
            await three_steps.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            cancelled_at = len(steps)
            started = loop.time()
            await asyncio.wrap_future(session.compute_executor.submit(lambda: None))
            waited = loop.time() - started
            # The compute thread has run a job queued after the cancel: any step still to come is queued
            # behind it, and the progress it reports reaches the loop within its next turns.
            await asyncio.wrap_future(session.compute_executor.submit(lambda: None))
            for _ in range(3):
                await asyncio.sleep(0)
            assert len(steps) == cancelled_at  # no work reported after the cancel
            return waited

    waited = asyncio.run(go())
    assert 0 < steps[-1][1] < 0.5
    # The compute thread is free once the tile in flight is done: about one step, not the remaining work.
    longest_step = max(later[0] - earlier[0] for earlier, later in itertools.pairwise(steps))
    assert waited <= 3 * longest_step + 0.5


def test_bad_thresholds_are_refused() -> None:
    matrix = VectorMatrix.build(np.eye(3, dtype=np.float32), np.arange(3, dtype=np.uint64))
    for threshold, metric, message in [
        (-0.1, "cosine", "is not a distance"),
        (1.0, "cosine", "would group unrelated entries"),
        (float("nan"), "l2", "is not a distance"),
        (0.1, "dot", 'unknown metric "dot"'),
    ]:
        with pytest.raises(InvalidInputError, match=message):
            find_groups(matrix, threshold, metric)


@pytest.mark.process
def test_the_command_prints_the_groups_as_json_and_as_text(
    planted: tuple[KnowledgeBase, dict[str, set[str]]],
) -> None:
    kb, expected = planted
    done = cli("duplicates", "--registry", str(kb.registry_dir), "--db", kb.name, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) == {"threshold", "metric", "grouping", "left_out", "groups"}
    assert (data["threshold"], data["metric"], data["left_out"]) == (0.05, "cosine", 0)
    assert {frozenset(group["ids"]) for group in data["groups"]} == {
        frozenset(ids) for ids in expected.values()
    }
    assert all(set(group) == {"ids", "max_distance", "widest_pair", "chained"} for group in data["groups"])
    assert len(data["groups"][0]["ids"]) == 4  # largest first: lancedb and its 3 copies
    text = cli("duplicates", "--registry", str(kb.registry_dir), "--db", kb.name, "--threshold", "0")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == "group 1: 4 entries, largest distance 0.000000 between lancedb and lancedb~copy0"
    assert lines[-1].startswith(
        f"3 groups (8 of {len(kb.ids)} entries) linked by pairs within cosine distance 0, in "
    )
    refused = cli("duplicates", "--registry", str(kb.registry_dir), "--db", kb.name, "--threshold", "abc")
    assert refused.returncode == 1
    assert "error: --threshold 'abc' is not a number" in refused.stderr


@pytest.mark.process
def test_zero_vectors_are_said_to_be_left_out_of_a_cosine_comparison(tmp_path: Path) -> None:
    """Ten identical zero vectors and two real rows: cosine has no value for the zero ones, so the command
    says how many it left out and why, and squared L2 groups them."""
    vectors = np.zeros((12, 8), np.float32)
    vectors[10, 0], vectors[11, 1] = 1.0, 1.0
    ids = [f"zero-{i}" for i in range(10)] + ["x", "y"]
    write_lance_table(tmp_path / "db", "notes", ids, ids, vectors)
    zero = int(np.count_nonzero(np.linalg.norm(vectors, axis=1) == 0))  # the oracle: NumPy's count

    done = cli("duplicates", "--path", str(tmp_path / "db"))
    assert done.returncode == 0, done.stderr
    assert (
        f"0 groups (0 of {len(ids) - zero} entries) linked by pairs within cosine distance 0.05"
        in done.stdout
    )
    assert (
        f"note: {zero} entries have a zero vector (all components 0): cosine distance is undefined for it, "
        "so they were left out; --metric l2 compares them." in done.stdout
    )
    as_json = json.loads(cli("duplicates", "--path", str(tmp_path / "db"), "--json").stdout)
    assert (as_json["left_out"], as_json["groups"]) == (zero, [])
    by_l2 = json.loads(cli("duplicates", "--path", str(tmp_path / "db"), "--metric", "l2", "--json").stdout)
    assert by_l2["left_out"] == 0
    assert [sorted(group["ids"]) for group in by_l2["groups"]] == [sorted(ids[:zero])]


def write_chained_table(db_dir: Path) -> tuple[list[str], np.ndarray[Any, Any]]:
    """Unit vectors: a, b and c 0.28 radians apart in turn (a-b and b-c within cosine distance 0.05, a-c
    beyond it), d and e 0.1 radians apart, and four rows far from all. Ids and vectors, as written."""
    angles = {"a": 0.0, "b": 0.28, "c": 0.56}
    vectors = np.zeros((9, 8), np.float64)
    for row, angle in enumerate(angles.values()):
        vectors[row, :2] = np.cos(angle), np.sin(angle)
    vectors[3, 2] = 1.0
    vectors[4, 2:4] = np.cos(0.1), np.sin(0.1)
    vectors[5:, 4:] = np.eye(4)
    ids = [*angles, "d", "e", "far-1", "far-2", "far-3", "far-4"]
    write_lance_table(db_dir, "notes", ids, [f"text of {i}" for i in ids], vectors.astype(np.float32))
    return ids, vectors.astype(np.float32)


def numpy_cosine_distances(vectors: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    unit = vectors.astype(np.float64) / np.linalg.norm(vectors.astype(np.float64), axis=1, keepdims=True)
    return 1 - unit @ unit.T


@pytest.mark.process
def test_a_chain_of_close_pairs_is_one_group_whose_widest_pair_is_shown(tmp_path: Path) -> None:
    """a-b and b-c lie within the threshold, a-c beyond: one group of three (no close pair is hidden),
    its widest pair a-c with NumPy's distance, said to be chained; d-e is a group every pair of which is
    within the threshold."""
    ids, vectors = write_chained_table(tmp_path / "db")
    distances = numpy_cosine_distances(vectors)
    a, b, c, d, e = (ids.index(name) for name in "abcde")
    assert distances[a, b] <= 0.05 and distances[b, c] <= 0.05 < distances[a, c]  # the table is as meant
    done = cli("duplicates", "--path", str(tmp_path / "db"), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert "linked by pairs within the threshold" in data["grouping"]
    assert data["groups"] == [
        {
            "ids": ["a", "b", "c"],
            "max_distance": round(float(distances[a, c]), 7),
            "widest_pair": ["a", "c"],
            "chained": True,
        },
        {
            "ids": ["d", "e"],
            "max_distance": round(float(distances[d, e]), 7),
            "widest_pair": ["d", "e"],
            "chained": False,
        },
    ]
    text = cli("duplicates", "--path", str(tmp_path / "db")).stdout.splitlines()
    assert text[0] == (
        f"group 1: 3 entries, largest distance {distances[a, c]:.6f} between a and c, beyond 0.05: "
        "linked through the others"
    )
    assert text[4] == f"group 2: 2 entries, largest distance {distances[d, e]:.6f} between d and e"
    assert text[-1].startswith(
        "note: 1 group holds entries farther apart than 0.05; a group holds the entries"
    )
