"""Which copy serves a local model here: the first candidate (``model_sources``, best first) judged exact,
else the first stand-in that loads. Each copy is judged once per file (``model_verdicts``): loaded, then
held to the published sha256 of cosh's file or, for AllMiniLML6V2, to the float32 model of its published
weights. A copy that did not load is remembered as unusable and not loaded again while it is unchanged.

Nothing is downloaded: a model none of them serves fails at once with a message that names
``recall-gui models get``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from recall_gui.core.base.errors import ModelUnavailableError
from recall_gui.core.base.paths import app_models_dir
from recall_gui.core.embedders.base import ModelInfo
from recall_gui.core.embedders.cosh_files import cosh_file, published_sha256
from recall_gui.core.embedders.local import LocalEmbedder, load_candidate
from recall_gui.core.embedders.model_caches import CacheRoot, cache_roots
from recall_gui.core.embedders.model_sources import WEIGHTS_MODEL, Candidate, candidates
from recall_gui.core.embedders.model_verdicts import PROBE_TEXTS, Vectors, Verdict, Verdicts, judge, unusable
from recall_gui.core.registry.models import LOCAL_MODELS, local_model

#: The published weights' verdict once they loaded: loading them checks their sha256.
WEIGHTS_VERDICT = Verdict("exact", "its sha256 is the one published for the weights")


@dataclass(frozen=True)
class Judged:
    """A candidate and the verdict on it."""

    candidate: Candidate
    verdict: Verdict

    @property
    def info(self) -> ModelInfo:
        return served_info(self.candidate, self.verdict)


@dataclass
class Choice:
    """What serves ``cosh_name`` here (``None``: nothing), the copies passed over, and the served model,
    loaded (when it was asked for)."""

    cosh_name: str
    served: Judged | None
    passed_over: list[Judged] = field(default_factory=list)
    embedder: LocalEmbedder | None = None


def served_info(candidate: Candidate, verdict: Verdict) -> ModelInfo:
    """What is said of ``candidate`` once judged: its claim where the verdict bears it out, a stand-in
    with the verdict's measure where it does not."""
    claim = candidate.info
    if verdict.exact:
        return ModelInfo(claim.name, True, claim.source, evidence=verdict.why)
    if claim.exact:  # a file at cosh's name that is not cosh's file, or could not be shown to be
        wanted = cosh_file(candidate.cosh_name)
        described = wanted.describe() if wanted is not None else "cosh's file"
        what = "another file than cosh's" if verdict.other_file else "not verified as cosh's file"
        source = f"a file named as cosh's {described} in {candidate.where}, {what}"
        return ModelInfo(claim.name, False, source, described, verdict.why)
    agreement = "; ".join(text for text in (verdict.why, claim.agreement) if text)
    return ModelInfo(claim.name, False, claim.source, claim.stands_in_for, agreement)


class _Reference:
    """The float32 model of AllMiniLML6V2's published weights, loaded when a copy needs probing: its
    vectors of the probe texts, and the loaded model itself for the weights' own turn."""

    def __init__(self, cosh_name: str, roots: list[CacheRoot], verdicts: Verdicts) -> None:
        self._roots = roots if cosh_name == WEIGHTS_MODEL else None
        self._verdicts = verdicts
        self._vectors: Vectors | None = None
        self.loaded: dict[Path, LocalEmbedder] = {}

    def vectors(self) -> Vectors | None:
        if self._roots is None:
            return None
        if self._vectors is None:
            weights = (c for c in candidates(WEIGHTS_MODEL, self._roots) if c.kind == "weights")
            for candidate in weights:
                known = self._verdicts.get(WEIGHTS_MODEL, "weights", candidate.path)
                if known is not None and known.status == "unusable":
                    continue
                try:
                    model = self.loaded.get(candidate.path) or _load(candidate, known)
                except ModelUnavailableError as error:
                    self._verdicts.put(WEIGHTS_MODEL, "weights", candidate.path, unusable(error.message))
                    continue
                if known is None:  # loading held it to its published sha256
                    self._verdicts.put(WEIGHTS_MODEL, "weights", candidate.path, WEIGHTS_VERDICT)
                self.loaded[candidate.path] = model
                self._vectors = _embed(model, list(PROBE_TEXTS))
                break
            else:
                self._roots = None  # no weights here: nothing to compare with
        return self._vectors


def _embed(model: LocalEmbedder, texts: list[str]) -> Vectors:
    return np.vstack([model.embed_sync(text) for text in texts])


def _load(candidate: Candidate, verdict: Verdict | None) -> LocalEmbedder:
    info = local_model(candidate.cosh_name)
    assert info is not None
    return load_candidate(candidate, info.dim, verified=verdict is not None and verdict.exact)


def _judge(candidate: Candidate, model: LocalEmbedder, reference: _Reference) -> Verdict:
    if candidate.kind == "weights":  # loading held it to the published sha256
        return WEIGHTS_VERDICT
    if not candidate.info.exact and reference.vectors() is None:
        return Verdict("stand-in", "", other_file=True)  # another file by its own account, not measurable
    wanted = cosh_file(candidate.cosh_name)
    published = published_sha256(wanted) if wanted is not None and candidate.info.exact else None
    return judge(
        candidate.path, published, lambda texts: _embed(model, texts), reference.vectors, candidate.cosh_name
    )


def choose(
    cosh_name: str, verdicts: Verdicts, roots: list[CacheRoot] | None = None, *, load: bool = True
) -> Choice:
    """The copy that serves ``cosh_name`` here, and the ones passed over (blocking: it may load models).

    ``load``: the served model is wanted loaded (a search); without it (a listing), a copy already judged
    exact is taken on its verdict. Copies not judged yet are loaded and judged either way (once)."""
    searched = cache_roots() if roots is None else roots
    reference = _Reference(cosh_name, searched, verdicts)
    passed: list[Judged] = []
    stand_ins: list[tuple[Judged, LocalEmbedder | None]] = []
    for candidate in candidates(cosh_name, searched):
        known = verdicts.get(cosh_name, candidate.kind, candidate.path)
        if known is not None and known.status == "unusable":
            passed.append(Judged(candidate, known))
            continue
        if known is not None and known.status == "stand-in":
            stand_ins.append((Judged(candidate, known), None))
            continue
        if known is not None and not load:
            return Choice(cosh_name, Judged(candidate, known), passed + [j for j, _ in stand_ins])
        judged, model = _judged(candidate, known, reference, verdicts)
        if model is None:
            passed.append(judged)
        elif judged.verdict.exact:
            return Choice(cosh_name, judged, passed + [j for j, _ in stand_ins], model)
        else:
            stand_ins.append((judged, model))
    for number, (waiting, loaded) in enumerate(stand_ins):
        judged, model = waiting, loaded
        if model is None and load:
            judged, model = _judged(waiting.candidate, waiting.verdict, reference, verdicts)
            if model is None:
                passed.append(judged)
                continue
        others = [j for j, _ in stand_ins[number + 1 :]]
        return Choice(cosh_name, judged, passed + others, model)
    return Choice(cosh_name, None, passed)


def _judged(
    candidate: Candidate, known: Verdict | None, reference: _Reference, verdicts: Verdicts
) -> tuple[Judged, LocalEmbedder | None]:
    """``candidate`` loaded and judged (``known``: its verdict, if it has one); no model when it does
    not load, and then its verdict says why."""
    try:
        model = reference.loaded.get(candidate.path) or _load(candidate, known)
    except ModelUnavailableError as error:
        verdict = unusable(error.message)
        verdicts.put(candidate.cosh_name, candidate.kind, candidate.path, verdict)
        return Judged(candidate, verdict), None
    verdict = known or _judge(candidate, model, reference)
    if known is None:
        verdicts.put(candidate.cosh_name, candidate.kind, candidate.path, verdict)
    info = served_info(candidate, verdict)
    return Judged(candidate, verdict), model.labelled(info)


def judge_copy(
    candidate: Candidate, verdicts: Verdicts, roots: list[CacheRoot] | None = None
) -> tuple[Judged, LocalEmbedder | None]:
    """One copy loaded and judged afresh (a copy just brought here), against the published weights found
    in ``roots`` (default: every model folder); no model when it does not load."""
    searched = cache_roots() if roots is None else roots
    return _judged(candidate, None, _Reference(candidate.cosh_name, searched, verdicts), verdicts)


def load_local_model(cosh_name: str, verdicts: Verdicts | None = None) -> LocalEmbedder:
    """cosh's local model ``cosh_name`` served the best way this machine allows (see the module's text),
    labelled with what it was found to be; blocking. Raises :class:`ModelUnavailableError`."""
    if local_model(cosh_name) is None:
        raise ModelUnavailableError(
            f'unknown local embedding model "{cosh_name}"',
            hint=f"cosh's local models are: {', '.join(sorted(LOCAL_MODELS))}.",
        )
    choice = choose(cosh_name, verdicts or Verdicts())
    if choice.embedder is None:
        raise model_missing(cosh_name, choice.passed_over)
    return choice.embedder


def _failures(passed: list[Judged]) -> Iterator[Judged]:
    return (judged for judged in passed if judged.verdict.status == "unusable")


def model_missing(cosh_name: str, passed: list[Judged]) -> ModelUnavailableError:
    """Why ``cosh_name`` cannot be served (``passed``: the copies that did not load, and why), and what
    brings it."""
    failed = list(_failures(passed))
    failures = [f"{judged.candidate.path}: {judged.verdict.why}" for judged in failed]
    damaged = [
        judged.candidate.folder
        for judged in failed
        if judged.candidate.folder is not None and judged.candidate.kind != "packaged-int8"
    ]
    info = local_model(cosh_name)
    label = f"{cosh_name} ({info.shown_label})" if info is not None else cosh_name
    wanted = cosh_file(cosh_name)
    what = f"cosh's file {wanted.describe()}" if wanted is not None else "its model file"
    if failures:
        found = "; ".join(failures[:3]) + (f"; and {len(failures) - 3} more" if len(failures) > 3 else "")
        message = f"model {label}: no copy on this machine could be used ({found})"
    else:
        message = f"model {label} is not on this machine ({what} was not found in any model cache)"
    get = (
        f"`recall-gui models get {cosh_name}` downloads cosh's file at once (with --from PATH it takes "
        "a copy you have instead); see docs/MODELS.md."
    )
    ours = [folder for folder in damaged if folder.is_relative_to(app_models_dir())]
    if ours:
        return ModelUnavailableError(
            message, hint=f"The copy in recall-gui's model folder looks damaged: delete {ours[0]}, then {get}"
        )
    if damaged:  # another program's cache (cosh's, fastembed's): not recall-gui's to delete
        return ModelUnavailableError(
            message,
            hint=f"The copy in {damaged[0]} did not load; it is in another program's cache, so leave it "
            f"there. recall-gui looks in its own model folder first: {get}",
        )
    return ModelUnavailableError(message, hint=get)


def local_model_problem(cosh_name: str, verdicts: Verdicts | None = None) -> ModelUnavailableError | None:
    """Why cosh's local model ``cosh_name`` cannot be served here, found without loading it: ``None`` when
    some copy is on this machine that is not known to be unusable (reads folders and verdicts only)."""
    if local_model(cosh_name) is None:
        return None  # an unknown model is named without any I/O (model_problem)
    known = verdicts or Verdicts()
    passed: list[Judged] = []
    for candidate in candidates(cosh_name):
        verdict = known.get(cosh_name, candidate.kind, candidate.path)
        if verdict is None or verdict.status != "unusable":
            return None
        passed.append(Judged(candidate, verdict))
    return model_missing(cosh_name, passed)
