"""What a model reads of a text: its tokenizer truncates every text at the model's token limit, and the
rest of the text never reaches the vector.

The limit and the cut are the model's own: its tokenizer as the loaded model runs it (truncation included,
its special tokens such as [CLS] and [SEP] counted against the limit as fastembed counts them), asked for
the character offsets of the tokens it keeps. Nothing here knows a number of tokens.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Texts tokenized per call when many are measured (the tokenizer spreads a batch over its threads).
READ_BATCH = 256
#: A long text is tokenized from its start only, this many characters per token of the limit at first
#: (twice as many each time that holds too few tokens): the cut lies there, and the rest costs nothing.
PREFIX_CHARS_PER_TOKEN = 6
#: Tokens a prefix must hold beyond the limit, so that its last word cannot touch the cut.
PREFIX_SPARE_TOKENS = 16


@dataclass(frozen=True)
class ReadExtent:
    """How much of one text a model reads: the characters before ``read_chars``."""

    chars: int
    read_chars: int
    #: Tokens the model is given, its special tokens included (at most the limit); ``None`` for a text
    #: measured without counting (short enough that it surely fits).
    tokens: int | None
    #: The model's limit, in tokens.
    limit: int
    #: Whether the text went on past the limit (then the characters from ``read_chars`` on are unread).
    truncated: bool

    @property
    def unread_chars(self) -> int:
        return self.chars - self.read_chars if self.truncated else 0

    def describe(self) -> str:
        """In words, for a line beside the text."""
        if not self.truncated:
            return f"the model reads all of it ({self._tokens_text()})"
        return (
            f"the model reads the first {self.read_chars:,} of {self.chars:,} characters "
            f"({self.limit:,} tokens); the rest ({self.unread_chars:,} characters) no vector search can find"
        )

    def short(self) -> str:
        """In a few words, beside an entry whose text marks the cut."""
        if not self.truncated:
            return f"all of it ({self._tokens_text()})"
        return (
            f"the first {self.read_chars:,} of {self.chars:,} characters ({self.limit:,} tokens); the rest, "
            "greyed, no vector search can find"
        )

    def _tokens_text(self) -> str:
        if self.tokens is None:
            return f"fewer than its {self.limit:,} tokens"
        return f"{self.tokens:,} of {self.limit:,} tokens"

    def to_dict(self) -> dict[str, Any]:
        return {
            "characters": self.chars,
            "characters_read": self.read_chars if self.truncated else self.chars,
            "tokens_read": self.tokens,
            "token_limit": self.limit,
            "truncated": self.truncated,
        }


class ModelReading:
    """A model's tokenizer, kept to measure texts: a copy of the one the model runs with its truncation
    and padding off (its limit kept in :attr:`limit`), so that one pass over a text says whether and
    where the model stops reading it, and measuring never shares an object with the model's own thread."""

    def __init__(self, tokenizer: Any, model_name: str) -> None:
        from tokenizers import Tokenizer

        truncation = tokenizer.truncation
        if not truncation or not truncation.get("max_length"):
            raise ValueError(f"the tokenizer of {model_name} does not truncate: its limit is unknown")
        if truncation.get("direction", "right") != "right":
            raise ValueError(f"the tokenizer of {model_name} keeps the end of a text, not its start")
        # Every token of the text, so that one pass says both where the cut falls and whether it does.
        whole = Tokenizer.from_str(tokenizer.to_str())
        whole.no_padding()
        whole.no_truncation()
        self._tokenizer = whole
        #: BERT's normalizer and WordPiece (all-MiniLM, BGE, ...): a token is at least one character of
        #: the text as normalized, so a text whose normalized length fits surely does.
        described = json.loads(tokenizer.to_str())
        self._wordpiece = (described.get("normalizer") or {}).get("type") == "BertNormalizer" and (
            described.get("model") or {}
        ).get("type") == "WordPiece"
        self.model_name = model_name
        #: The model's limit, in tokens (its special tokens included).
        self.limit = int(truncation["max_length"])
        #: The text's own tokens the model keeps: the limit less the special tokens added around them.
        self._kept = max(0, self.limit - whole.num_special_tokens_to_add(False))

    def extent(self, text: str) -> ReadExtent:
        """How much of ``text`` the model reads (blocking: a long text takes milliseconds)."""
        return self.extents([text])[0]

    def extents(self, texts: Sequence[str], *, count_tokens: bool = True) -> list[ReadExtent]:
        """:meth:`extent` of each of ``texts``, tokenized a batch at a time (blocking). Without
        ``count_tokens``, a text the model surely reads whole is not tokenized (its ``tokens`` is
        ``None``): what a table's scan needs, at a fraction of the cost."""
        found: list[ReadExtent] = []
        for start in range(0, len(texts), READ_BATCH):
            batch = list(texts[start : start + READ_BATCH])
            if count_tokens or not self._wordpiece:
                found.extend(self._batch(batch))
                continue
            fits = [self._surely_fits(text) for text in batch]
            measured = iter(self._batch([text for text, fit in zip(batch, fits, strict=True) if not fit]))
            found.extend(
                ReadExtent(len(text), len(text), None, self.limit, False) if fit else next(measured)
                for text, fit in zip(batch, fits, strict=True)
            )
        return found

    def _surely_fits(self, text: str) -> bool:
        """Whether ``text`` has fewer tokens than the model keeps, told without tokenizing it: BERT's
        normalizer lowercases and decomposes (NFD), and WordPiece makes no more tokens than characters."""
        if len(text) > self._kept:
            return False
        decomposed = unicodedata.normalize("NFD", text)
        return max(len(text.lower()), len(decomposed.lower()), len(decomposed)) <= self._kept

    def _batch(self, texts: list[str]) -> list[ReadExtent]:
        """Each text's start tokenized (the whole of a short one); a start that holds too few tokens to
        settle it is tokenized again, twice as long, until it does."""
        found: list[ReadExtent | None] = [None] * len(texts)
        chars = PREFIX_CHARS_PER_TOKEN * (self.limit + PREFIX_SPARE_TOKENS)
        waiting = list(range(len(texts)))
        while waiting:
            starts = [_start_of(texts[number], chars) for number in waiting]
            encodings = self._tokenizer.encode_batch(starts)
            still = []
            for number, start, encoding in zip(waiting, starts, encodings, strict=True):
                whole = len(start) == len(texts[number])
                if whole or len(encoding.ids) > self.limit + PREFIX_SPARE_TOKENS:
                    found[number] = self._measured(texts[number], encoding)
                else:
                    still.append(number)
            waiting, chars = still, chars * 2
        return [extent for extent in found if extent is not None]

    def _measured(self, text: str, encoding: Any) -> ReadExtent:
        """The extent of ``text`` from the tokens of all of it, or of a start of it longer than the cut."""
        if len(encoding.ids) <= self.limit:
            return ReadExtent(len(text), len(text), len(encoding.ids), self.limit, False)
        read, own = 0, 0
        for index, special in enumerate(encoding.special_tokens_mask):
            if own == self._kept:
                break
            if not special:
                own += 1
                read = encoding.token_to_chars(index)[1]
        return ReadExtent(len(text), read, self.limit, self.limit, True)


def _start_of(text: str, chars: int) -> str:
    """The first ``chars`` characters of ``text`` and the rest of the word they end in (a word cut in two
    would be tokenized otherwise), or all of it."""
    if len(text) <= chars:
        return text
    end = chars
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[:end]


def reading_of(model: Any, model_name: str) -> ModelReading | None:
    """The reading of a loaded query model (onnxruntime with a ``tokenizer``, or fastembed's
    ``TextEmbedding``, whose model holds it); ``None`` when it keeps no tokenizer that truncates."""
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None:
        tokenizer = getattr(getattr(model, "model", None), "tokenizer", None)
    if tokenizer is None or not hasattr(tokenizer, "to_str"):
        return None
    try:
        return ModelReading(tokenizer, model_name)
    except ValueError:
        return None


@dataclass
class TableReading:
    """How much of a table's text its model reads, summed over its rows (``add`` a batch at a time)."""

    model: str
    limit: int
    rows: int = 0
    #: Rows whose text goes on past what the model reads.
    rows_longer: int = 0
    chars: int = 0
    unread_chars: int = 0

    def add(self, extents: Sequence[ReadExtent]) -> None:
        for extent in extents:
            self.rows += 1
            self.chars += extent.chars
            if extent.truncated:
                self.rows_longer += 1
                self.unread_chars += extent.unread_chars

    @property
    def unread_share(self) -> float:
        """The share of the table's text (in characters) that no vector search can find."""
        return self.unread_chars / self.chars if self.chars else 0.0

    def describe(self) -> str:
        reads = f"{self.model} reads the first {self.limit:,} tokens of each entry"
        if not self.rows_longer:
            return f"{reads}: every row fits"
        return (
            f"{reads}: {self.rows_longer:,} of {self.rows:,} rows are longer, and {self.unread_share:.1%} of "
            f"the table's text ({self.unread_chars:,} of {self.chars:,} characters) lies past it, where no "
            "vector search can find it"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "token_limit": self.limit,
            "rows": self.rows,
            "rows_longer": self.rows_longer,
            "characters": self.chars,
            "characters_unread": self.unread_chars,
            "unread_share": self.unread_share,
        }
