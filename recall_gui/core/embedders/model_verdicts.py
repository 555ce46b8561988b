"""Whether a model file is cosh's, earned rather than assumed: *exact*, a *stand-in* or *unusable*.

A file is exact only when its sha256 is the one published for the file cosh downloads
(``cosh_files.published_sha256``), or when it reproduces, on :data:`PROBE_TEXTS` (a short text, one longer
than the 512 tokens cosh reads, a non-Latin one), the float32 vectors the app computes from the published
weights within :data:`EXACT_WITHIN`. A file that loads but is neither is a stand-in: measured against that
reference where there is one ("behaves like AllMiniLML6V2 within 0.04"), else unverified. One that does not
load, or gives vectors of another width, is unusable.

Verdicts are kept (:class:`Verdicts`) per model name and file with the file's size, modification time and
inode, in memory and in the cache folder: a hash, a probe or a failed load is paid once per file, not at
each start and not at each search.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.atomic import write_text_atomic
from recall_gui.core.base.paths import app_cache_dir
from recall_gui.core.base.regular_files import open_regular, read_regular

Status = Literal["exact", "stand-in", "unusable"]
Vectors = npt.NDArray[np.float32]

#: The largest difference of a vector component from the reference that is still the same model.
EXACT_WITHIN = 1e-5
#: What a probe embeds: a short question, a text longer than the 512 tokens cosh reads (so where a copy
#: cuts texts counts), and a non-Latin one.
PROBE_TEXTS = (
    "How do I reset my password?",
    " ".join(
        f"Step {number}: open the account settings, choose Security, then change the password there."
        for number in range(1, 61)
    ),
    "パスワードを再設定するには？ 如何重置密码？ 비밀번호를 재설정하려면? Как сбросить пароль? "
    "כיצד מאפסים סיסמה? كيف أعيد تعيين كلمة المرور؟ Πώς επαναφέρω τον κωδικό;",
)
#: Verdicts written under another version (another probe or rule) are judged afresh.
VERDICTS_VERSION = 1
VERDICTS_FILE = "model-verdicts.json"
#: Files whose verdicts the cache keeps (the oldest go first): far more than one machine's model copies.
KEPT_VERDICTS = 256
#: The most read of the verdicts' file (a few hundred short entries); a larger one is read as none.
VERDICTS_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class Verdict:
    """What a copy of a model was found to be, and why, in words."""

    status: Status
    why: str
    #: The largest component difference from the reference's vectors, where it was measured.
    deviation: float | None = None
    #: A stand-in known not to be cosh's file (another sha256 than the published one, or other vectors),
    #: not merely one that could not be verified.
    other_file: bool = False

    @property
    def exact(self) -> bool:
        return self.status == "exact"


def unusable(reason: str) -> Verdict:
    return Verdict("unusable", reason)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path) as handle:  # a pipe or a device at a model's name is refused, never read
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def judge(
    path: Path,
    published: str | None,
    embed: Callable[[list[str]], Vectors],
    reference: Callable[[], Vectors | None],
    model_name: str,
) -> Verdict:
    """The verdict on the model file at ``path``, loaded (``embed`` gives its vectors of texts):
    ``published``, the published sha256 of cosh's file if known; ``reference()``, the float32 model's
    vectors of :data:`PROBE_TEXTS` where there is one for this model (``None`` otherwise)."""
    digest = file_sha256(path) if published is not None else None
    if digest is not None and digest == published:
        return Verdict("exact", f"its sha256 is the one published for cosh's file ({digest[:8]}…)")
    expected = reference()
    if expected is not None:
        deviation = float(np.abs(embed(list(PROBE_TEXTS)) - expected).max())
        texts = f"{len(PROBE_TEXTS)} probe texts"
        if deviation <= EXACT_WITHIN:
            why = f"it gives the published weights' float32 vectors within {deviation:.1e} on {texts}"
            return Verdict("exact", why, deviation)
        return Verdict(
            "stand-in",
            f"behaves like {model_name} within {deviation:.2g} (the largest difference of a vector component "
            f"from the float32 model's, on {texts})",
            deviation,
            other_file=True,
        )
    if digest is not None and published is not None:
        why = f"its sha256 ({digest[:8]}…) is not the one published for cosh's file ({published[:8]}…)"
        return Verdict("stand-in", why, other_file=True)
    return Verdict(
        "stand-in",
        "not verified: no published sha256 of cosh's file is known here, nor a reference to compare",
    )


def _fingerprint(path: Path) -> list[int] | None:
    """What tells a file from its next version without reading it: size, modification time, inode."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns, stat.st_ino]


class Verdicts:
    """The verdicts on model copies: of this session (in memory) and of earlier ones (the cache folder's
    ``model-verdicts.json``, when it can be read and written; without it, each session judges afresh).
    Thread-safe: the embedding thread and a ``models`` listing may both ask."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._memory: dict[str, dict[str, Any]] = {}

    @property
    def path(self) -> Path:
        return self._path or app_cache_dir() / VERDICTS_FILE

    @staticmethod
    def _key(cosh_name: str, kind: str, path: Path) -> str:
        return f"{cosh_name}\t{kind}\t{path}"

    def get(self, cosh_name: str, kind: str, path: Path) -> Verdict | None:
        """The verdict on ``path`` as ``kind`` for ``cosh_name``, if it was judged as it is now."""
        fingerprint = _fingerprint(path)
        if fingerprint is None:
            return None
        key = self._key(cosh_name, kind, path)
        with self._lock:
            entry = self._memory.get(key) or self._read().get(key)
        if not isinstance(entry, dict) or entry.get("fingerprint") != fingerprint:
            return None
        try:
            return Verdict(**{name: entry[name] for name in ("status", "why", "deviation", "other_file")})
        except (KeyError, TypeError):
            return None

    def put(self, cosh_name: str, kind: str, path: Path, verdict: Verdict) -> None:
        """Keep ``verdict`` on ``path`` (as the file is now) for this session and, where the cache folder
        allows, for the next ones."""
        fingerprint = _fingerprint(path)
        if fingerprint is None:
            return
        key = self._key(cosh_name, kind, path)
        entry = {"fingerprint": fingerprint, **asdict(verdict)}
        with self._lock:
            self._memory[key] = entry
            kept = self._read()
            kept.pop(key, None)
            kept[key] = entry
            newest = dict(list(kept.items())[-KEPT_VERDICTS:])
            with contextlib.suppress(OSError):  # disposable: a cache folder that cannot be written
                write_text_atomic(
                    self.path, json.dumps({"version": VERDICTS_VERSION, "files": newest}) + "\n"
                )

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(read_regular(self.path, VERDICTS_MAX_BYTES).decode("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != VERDICTS_VERSION:
            return {}
        files = data.get("files")
        return files if isinstance(files, dict) else {}

    def forget(self) -> None:
        """Judge every copy afresh (this session's verdicts only: the cache file's are checked by their
        fingerprints anyway)."""
        with self._lock:
            self._memory.clear()
