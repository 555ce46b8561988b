"""Where the model stops reading a text: the app's cut is where the model's own vector stops changing, the
limit is the model's (read through its tokenizer, never a number of the app's), and `health` and `context`
say how much of a table's text no vector search can find."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.core.test_cli import cli
from tests.coshtools import long_text, whole_documents


@pytest.fixture(scope="module")
def reading(embedder: Any) -> Any:
    found = embedder.reading()
    assert found is not None
    return found


def whole_reading(embedder: Any, text: str) -> tuple[bool, int]:
    """The oracle: the model's own tokenizer as it runs (truncation on) on the whole text: whether it
    cut the text, and the end of the last token of the text it kept."""
    tokenizer = embedder._model.tokenizer
    encoding = tokenizer.encode(text)
    pairs = zip(encoding.offsets, encoding.special_tokens_mask, strict=True)
    ends = [end for (_start, end), special in pairs if not special]
    return bool(encoding.overflowing), (max(ends) if encoding.overflowing else len(text))


def test_the_model_reads_a_long_text_up_to_the_cut_and_nothing_after_it(embedder: Any, reading: Any) -> None:
    text = long_text(3000)
    extent = reading.extent(text)
    assert extent.truncated and extent.tokens == reading.limit
    assert 0 < extent.read_chars < len(text) and extent.unread_chars == len(text) - extent.read_chars
    whole = embedder.embed_sync(text)
    # What the model reads is the text up to the cut: that alone gives the very same vector ...
    assert np.array_equal(embedder.embed_sync(text[: extent.read_chars]), whole)
    # ... and the text after it changes nothing, while the last token read does change the vector.
    assert np.array_equal(embedder.embed_sync(text[: extent.read_chars] + " zebra " * 50), whole)
    assert not np.array_equal(embedder.embed_sync(text[: extent.read_chars - 1]), whole)
    # The next word of the text is not read either: the cut falls at the end of a word the model read.
    assert np.array_equal(embedder.embed_sync(text[: text.index(" ", extent.read_chars + 1)]), whole)
    assert extent.describe() == (
        f"the model reads the first {extent.read_chars:,} of {len(text):,} characters "
        f"({reading.limit:,} tokens); "
        f"the rest ({len(text) - extent.read_chars:,} characters) no vector search can find"
    )


def test_a_short_text_is_read_whole_and_its_tokens_counted_with_the_special_ones(
    embedder: Any, reading: Any
) -> None:
    text = "The tide turns twice a day."
    extent = reading.extent(text)
    given = embedder._model.tokenizer.encode(text).ids  # [CLS] … [SEP], as the model runs it
    assert not extent.truncated and extent.read_chars == extent.chars == len(text)
    assert extent.tokens == len(given) and extent.unread_chars == 0
    assert extent.describe() == f"the model reads all of it ({len(given)} of {reading.limit:,} tokens)"


def test_a_sessions_reading_is_its_local_models_and_a_cloud_model_has_none(
    tmp_path: Path, reading: Any
) -> None:
    from recall_gui.core.registry.registry import load_registry
    from recall_gui.core.session.session import Session
    from tests.kbtools import cosh_entry, write_registry

    cloud = {
        **cosh_entry("cloud", tmp_path / "db"),
        "embedder": {"Cloud": {"provider": "openai", "model": "x"}},
    }
    entries = load_registry(
        write_registry(tmp_path / "registry", [cosh_entry("local", tmp_path / "db"), cloud])
    )

    async def readings() -> tuple[Any, Any]:
        async with Session(keep_vectors=False) as session:
            local, remote = entries.get("local"), entries.get("cloud")
            assert local is not None and remote is not None
            return await session.models.reading(local.embedder), await session.models.reading(remote.embedder)

    local, remote = asyncio.run(readings())
    assert remote is None
    assert local is not None and local.limit == reading.limit
    text = long_text(3000)
    assert local.extent(text) == reading.extent(text)


def test_the_limit_is_the_tokenizer_the_model_runs(embedder: Any, reading: Any) -> None:
    assert reading.limit == embedder._model.tokenizer.truncation["max_length"]


@pytest.mark.parametrize(
    "text",
    [
        "short query",
        "",
        long_text(5000, seed=1),
        "x" * 6000,
        "日本語のテキスト、そして更に長い文章。" * 400,
        "word " * 2000,
        "emoji 🚀 and Arabic ش " * 600,
        long_text(270, seed=3),
    ],
)
def test_the_cut_and_the_whole_text_tokenized_agree(embedder: Any, reading: Any, text: str) -> None:
    truncated, read = whole_reading(embedder, text)
    extent = reading.extent(text)
    assert (extent.truncated, extent.read_chars if extent.truncated else len(text)) == (truncated, read)


def test_many_texts_are_measured_as_each_alone(embedder: Any, reading: Any) -> None:
    texts = [long_text(50 + 97 * n, seed=n) for n in range(40)]
    assert reading.extents(texts) == [reading.extent(text) for text in texts]
    assert [extent.truncated for extent in reading.extents(texts)] == [
        whole_reading(embedder, text)[0] for text in texts
    ]


@pytest.mark.process
def test_health_says_how_much_of_each_table_the_model_reads(
    tmp_path: Path, embedder: Any, reading: Any
) -> None:
    kb = whole_documents(tmp_path, embedder)
    registry, documents = kb.registry_dir, kb.contents
    done = cli("health", "--registry", str(registry), "--db", "manuals", "--json", "--fail-on", "unread")
    assert done.returncode == 1, done.stderr  # rows longer than the model reads: listed, and failed on
    report = json.loads(done.stdout)
    measured = [whole_reading(embedder, text) for text in documents]
    unread = sum(len(text) - read for text, (cut, read) in zip(documents, measured, strict=True) if cut)
    total = sum(len(text) for text in documents)
    assert report["model_reads"] == {
        "model": "AllMiniLML6V2",
        "token_limit": reading.limit,
        "rows": len(documents),
        "rows_longer": sum(cut for cut, _read in measured),
        "characters": total,
        "characters_unread": unread,
        "unread_share": unread / total,
    }
    assert report["ids_repeat"]["shared_ids"] == {"content": len(documents)}

    text = cli("health", "--registry", str(registry), "--db", "manuals").stdout.splitlines()
    longer = sum(cut for cut, _read in measured)
    assert (
        f"AllMiniLML6V2 reads the first {reading.limit:,} tokens of each entry: {longer} of {len(documents)} "
        f"rows are longer, and {unread / total:.1%} of the table's text ({unread:,} of {total:,} characters) "
        "lies past it, where no vector search can find it"
    ) in text
    assert f'ids repeat in this table: all {len(documents)} rows share the id "content"' in "\n".join(text)


def test_a_scan_that_skips_counting_short_texts_finds_the_same_cuts(embedder: Any, reading: Any) -> None:
    kept = reading.limit - 2  # [CLS] and [SEP]
    texts = [
        "a " * (kept // 2),  # fits, near the limit
        "a" * kept,  # one word of the limit's length: one [UNK] token
        "a." * (kept // 2 + 1),  # one token more than the model keeps
        ". " * kept + ".",
        "ﷺ" * (kept // 4),  # a character NFKC would spell out in 18
        "İstanbul " * (kept // 9),  # lowercase makes it longer
        "한국어 " * (kept // 4),
        long_text(40, seed=9),
        "",
    ]
    counted = reading.extents(texts)
    quick = reading.extents(texts, count_tokens=False)
    assert [(e.truncated, e.read_chars) for e in quick] == [(e.truncated, e.read_chars) for e in counted]
    assert [e.truncated for e in counted] == [whole_reading(embedder, text)[0] for text in texts]
    assert counted[2].truncated and not counted[0].truncated
