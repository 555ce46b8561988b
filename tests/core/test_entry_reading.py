"""How much of an entry its model reads: the count of tokens against the limit, and the cut, checked against
the model's own tokenizer as it runs (truncation on): the text before the cut is exactly what the model is
given, and one more word would not be."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from recall_gui.core.registry.registry import load_registry
from recall_gui.core.review.entry_reading import TokenCounter, count_tokens, token_counter
from recall_gui.core.session.session import Session
from tests.kbtools import cosh_entry, write_registry

LONG = " ".join(f"lighthouse{number} keepers log the weather" for number in range(200))


def test_a_text_longer_than_the_model_reads_is_cut_where_the_models_own_tokenizer_stops(
    embedder: Any,
) -> None:
    tokenizer = embedder.tokenizer
    limit = tokenizer.truncation["max_length"]
    counted = TokenCounter(tokenizer, embedder.model_info.name).count(LONG)
    given = tokenizer.encode(LONG).ids  # what the model reads, by its own truncation
    assert len(given) == limit and counted.limit == limit
    assert counted.truncated and counted.tokens > limit and counted.chars == len(LONG)
    assert tokenizer.encode(LONG[: counted.read_chars]).ids == given
    longer = LONG[: LONG.index(" ", counted.read_chars + 1)]
    assert tokenizer.encode(longer).ids == given  # the next word is not read either
    assert len(tokenizer.encode(LONG[: counted.read_chars - 1]).ids) <= limit
    assert tokenizer.encode(LONG[: counted.read_chars - 1]).ids != given
    assert counted.text() == (
        f"{embedder.model_info.name} reads the first {counted.read_chars:,} of {len(LONG):,} characters "
        f"({counted.tokens:,} tokens; it reads {limit:,}). No vector search finds what comes after."
    )


def test_a_short_text_is_read_whole_and_its_tokens_counted_with_the_special_ones(embedder: Any) -> None:
    tokenizer = embedder.tokenizer
    counted = TokenCounter(tokenizer, "m").count("The tide turns twice a day.")
    assert not counted.truncated and counted.read_chars == counted.chars
    assert counted.tokens == len(tokenizer.encode("The tide turns twice a day.").ids)  # [CLS] … [SEP]


def test_a_databases_counter_comes_from_its_loaded_model_and_a_cloud_model_has_none(tmp_path: Path) -> None:
    registry = write_registry(
        tmp_path / "registry",
        [
            cosh_entry("local", tmp_path / "db"),
            {
                **cosh_entry("cloud", tmp_path / "db"),
                "embedder": {"Cloud": {"provider": "openai", "model": "x"}},
            },
        ],
    )
    entries = load_registry(registry)

    async def counters() -> tuple[Any, Any, Any]:
        async with Session(keep_vectors=False) as session:
            local, cloud = entries.get("local"), entries.get("cloud")
            assert local is not None and cloud is not None
            counter = await token_counter(session, local)
            assert counter is not None
            return counter, await token_counter(session, cloud), await count_tokens(session, counter, LONG)

    counter, cloud, counted = asyncio.run(counters())
    assert cloud is None
    assert counter.limit == counted.limit and counted.truncated
