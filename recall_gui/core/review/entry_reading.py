"""How much of an entry's text its model reads: the tokenizer of the loaded model truncates every text at
the model's limit, and the rest never reaches the vector. The Review page shows the count against the
limit, and where the model stopped reading when a text is longer.

The limit is the loaded tokenizer's own truncation (its special tokens counted against it, as fastembed
counts them); a cloud model's tokenizer is not known here.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from recall_gui.core.embedders.local import LocalEmbedder
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.session.session import Session


@dataclass(frozen=True)
class TokenCount:
    """One text's tokens against its model's limit, and the characters before the cut."""

    model: str
    #: The text's tokens, the model's special tokens included (not truncated).
    tokens: int
    limit: int
    chars: int
    #: The characters the model reads (all of them when the text fits).
    read_chars: int

    @property
    def truncated(self) -> bool:
        return self.tokens > self.limit

    def text(self) -> str:
        """``AllMiniLML6V2 reads the first 1,269 of 3,000 characters (602 tokens; it reads 256). …``"""
        if not self.truncated:
            return f"{self.model} reads all of it ({self.tokens:,} tokens; it reads up to {self.limit:,})"
        return (
            f"{self.model} reads the first {self.read_chars:,} of {self.chars:,} characters ({self.tokens:,} "
            f"tokens; it reads {self.limit:,}). No vector search finds what comes after."
        )


class TokenCounter:
    """A copy of a model's tokenizer without truncation or padding, so that counting never shares an
    object with the thread that embeds; blocking calls (run them on a worker)."""

    def __init__(self, tokenizer: Any, model: str) -> None:
        from tokenizers import Tokenizer

        truncation = tokenizer.truncation or {}
        whole = Tokenizer.from_str(tokenizer.to_str())
        whole.no_truncation()
        whole.no_padding()
        self._tokenizer = whole
        self.model = model
        self.limit = int(truncation["max_length"])
        #: The text's own tokens the model keeps: the limit less the special tokens around them.
        self._kept = max(0, self.limit - whole.num_special_tokens_to_add(False))

    def count(self, text: str) -> TokenCount:
        encoding = self._tokenizer.encode(text)
        read, own = len(text), 0
        if len(encoding.ids) > self.limit:
            read = 0
            for index, special in enumerate(encoding.special_tokens_mask):
                if own == self._kept:
                    break
                span = encoding.token_to_chars(index)
                if not special and span is not None:
                    own += 1
                    read = span[1]
        return TokenCount(self.model, len(encoding.ids), self.limit, len(text), read)


async def token_counter(session: Session, entry: DatabaseEntry) -> TokenCounter | None:
    """The counter of ``entry``'s local model, loaded if need be on the session's embedding thread;
    ``None`` for a cloud model, or a loaded model whose tokenizer does not truncate."""
    if entry.embedder.kind != "local":
        return None
    embedder = await session.models.get(entry.embedder)
    if not isinstance(embedder, LocalEmbedder):
        return None
    tokenizer = embedder.tokenizer
    if tokenizer is None or not (tokenizer.truncation or {}).get("max_length"):
        return None
    made = session.models.executor.submit(TokenCounter, tokenizer, embedder.model_info.name)
    return await asyncio.wrap_future(made)


async def count_tokens(session: Session, counter: TokenCounter, text: str) -> TokenCount:
    """``counter.count(text)`` on the session's embedding thread (a long text takes milliseconds)."""
    return await asyncio.wrap_future(session.models.executor.submit(counter.count, text))
