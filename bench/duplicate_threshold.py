"""Where the default near-duplicate threshold comes from: distances in the demo's real passages.

    python -m bench.duplicate_threshold [--sample 120]

Embeds the demo's passages (Python's help topics, as ``recall-gui demo`` builds them) with the packaged
model, then measures two things with cosine distance:

- distinct passages: every pair, classed by how much text they share (the share of the shorter text the
  other one also holds): the help topics repeat whole sections under several topics, and those pairs are
  real duplicates; pairs sharing less than half their text are distinct passages;
- small edits: a seeded sample of passages, each edited in one small way (a typo, a word dropped, a word
  replaced by another word of the passage, a final period, blank lines) and embedded again; the distance
  between the original and the edited passage.

A default threshold must keep edited passages with their originals and keep distinct passages apart;
docs/PERFORMANCE_LOG.md#near_duplicates-default_thresholds has the numbers and the choice. Takes a few minutes
(about 1,250 passages are embedded).
"""

from __future__ import annotations

import argparse
import difflib
import random
import re
from collections.abc import Callable
from typing import Any

import numpy as np

THRESHOLDS = (0.01, 0.02, 0.03, 0.05, 0.08, 0.1)
_WORD = re.compile(r"[A-Za-z]{5,}")


def text_overlap(first: str, second: str) -> float:
    matcher = difflib.SequenceMatcher(None, first, second, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / min(len(first), len(second))


def edits(rng: random.Random) -> dict[str, Callable[[str], str]]:
    def typo(text: str) -> str:
        found = rng.choice(list(_WORD.finditer(text)))
        word, at = found.group(), rng.randrange(len(found.group()) - 1)
        swapped = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
        return text[: found.start()] + swapped + text[found.end() :]

    def drop_word(text: str) -> str:
        found = rng.choice(list(_WORD.finditer(text)))
        return text[: found.start()] + text[found.end() :].lstrip(" ")

    def replace_word(text: str) -> str:
        words = list(_WORD.finditer(text))
        found, other = rng.choice(words), rng.choice(words).group()
        return text[: found.start()] + other + text[found.end() :]

    def final_period(text: str) -> str:
        stripped = text.rstrip()
        return stripped[:-1] if stripped.endswith(".") else stripped + "."

    def blank_lines(text: str) -> str:
        return text.replace("\n", "\n\n", 2)

    return {
        "a typo": typo,
        "a word dropped": drop_word,
        "a word replaced": replace_word,
        "a final period": final_period,
        "blank lines": blank_lines,
    }


def cosine(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    return 1.0 - np.sum(a * b, axis=-1)


def share_within(distances: np.ndarray[Any, Any]) -> str:
    return " | ".join(f"{np.mean(distances <= t) * 100:5.1f}%" for t in THRESHOLDS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=120, help="passages edited per kind of edit")
    args = parser.parse_args()
    from recall_gui.core.demo import demo_passages
    from recall_gui.core.embedders.pool import load_local_model

    passages = demo_passages()
    texts = [passage.content for passage in passages]
    model = load_local_model("AllMiniLML6V2")
    print(f"embedding {len(texts)} demo passages ...", flush=True)
    vectors = np.vstack(model.embed_many(texts)).astype(np.float64)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    distances = 1.0 - unit @ unit.T
    first, second = np.triu_indices(len(texts), 1)
    pair_distances = distances[first, second]
    close = np.flatnonzero(pair_distances < 0.2)
    overlaps = np.array([text_overlap(texts[first[k]], texts[second[k]]) for k in close])
    distinct = pair_distances[close][overlaps < 0.5]
    shared = pair_distances[close][overlaps >= 0.9]
    print(f"\n{len(pair_distances):,} pairs of distinct passages")
    print(f"  closest pair sharing < 50% of its text: {distinct.min():.4f}")
    print(
        f"  pairs sharing >= 90% of their text (repeated sections): {len(shared)}, up to {shared.max():.4f}"
    )
    print("  | within " + " | ".join(f"{t:>6}" for t in THRESHOLDS) + " |")
    for label, values in (("pairs sharing < 50%", distinct), ("pairs sharing >= 90%", shared)):
        counts = " | ".join(f"{int(np.sum(values <= t)):>6}" for t in THRESHOLDS)
        print(f"  {label:<21} | {counts} |")

    rng = random.Random(7)
    sample = rng.sample(range(len(texts)), min(args.sample, len(texts)))
    print(
        f"\nsmall edits, {len(sample)} passages each: share within   "
        + " | ".join(f"{t:>6}" for t in THRESHOLDS)
    )
    everything = []
    for name, edit in edits(rng).items():
        edited = [edit(texts[i]) for i in sample]
        again = np.vstack(model.embed_many(edited)).astype(np.float64)
        moved = cosine(again, vectors[sample])
        everything.append(moved)
        print(
            f"  {name:<16} max {moved.max():.4f}, median {np.median(moved):.4f}: {share_within(moved)}",
            flush=True,
        )
    overall = np.concatenate(everything)
    print(f"  {'all':<16} max {overall.max():.4f}, median {np.median(overall):.4f}: {share_within(overall)}")


if __name__ == "__main__":
    main()
