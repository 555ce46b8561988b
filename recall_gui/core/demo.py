"""The demo knowledge base: Python's own help topics, so a new user sees real search on the first start.

The text is the standard library's ``pydoc_data.topics`` (present in every Python), split into passages
with stable ids (``topic#n``), embedded with the local model cosh uses by default, and written in cosh's
schema. It is built in a temporary folder and moved into place only when complete, so a cancelled or
failed build leaves the previous demo (or nothing) behind, never half a table.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_gui.core.base.errors import (
    DemoBuildCancelled,
    DemoConflictError,
    DemoDataError,
    RegistryError,
    SettingsError,
)
from recall_gui.core.base.paths import (
    DATA_ENV,
    DBS_FILE,
    REGISTRY_ENV,
    RegistryLocation,
    cosh_registry_dir,
    demo_db_dir,
    folder_making_problem,
)
from recall_gui.core.registry.registry_changes import register_database, writable_entries
from recall_gui.core.registry.registry_types import Registry

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

    from recall_gui.core.embedders.local import LocalEmbedder

DEMO_NAME = "python-docs"
DEMO_DESCRIPTION = (
    "Python language reference: the help topics shipped with Python (statements, expressions, "
    "data model, built-in types). Built-in demo of recall-gui."
)
DEMO_MODEL = "AllMiniLML6V2"
MAX_PASSAGE_CHARS = 900
#: Small batches of passages of similar length waste least work on padding
#: (docs/PERFORMANCE_LOG.md#demo-batch).
BATCH = 8

_UNDERLINE = re.compile(r"^\s*([*=\-~^])\1{2,}\s*$")


@dataclass(frozen=True)
class Passage:
    id: str
    content: str


def _blocks(text: str) -> Iterator[str]:
    """Paragraphs of a topic, with heading underlines dropped and oversized paragraphs cut at lines."""
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line.rstrip() for line in paragraph.splitlines() if not _UNDERLINE.match(line)]
        block = "\n".join(lines).strip("\n")
        if not block.strip():
            continue
        while len(block) > MAX_PASSAGE_CHARS:
            cut = block.rfind("\n", 0, MAX_PASSAGE_CHARS)
            cut = cut if cut > MAX_PASSAGE_CHARS // 3 else MAX_PASSAGE_CHARS
            yield block[:cut].rstrip()
            block = block[cut:].lstrip("\n")
        if block.strip():
            yield block


def _topic_passages(topic: str, text: str) -> list[Passage]:
    """One topic's paragraphs grouped into passages of at most about :data:`MAX_PASSAGE_CHARS`."""
    blocks = list(_blocks(text))
    if not blocks:
        return []
    title = blocks[0].splitlines()[0].strip()
    groups: list[list[str]] = [[]]
    for block in blocks:
        current = groups[-1]
        if current and sum(len(b) + 2 for b in current) + len(block) > MAX_PASSAGE_CHARS:
            groups.append(current := [])
        current.append(block)
    passages = []
    for number, group in enumerate(groups):
        body = "\n\n".join(group)
        content = body if number == 0 else f"{title} (continued)\n\n{body}"
        passages.append(Passage(f"{topic}#{number}", content))
    return passages


def demo_passages() -> list[Passage]:
    """Every passage of the demo, in a stable order with stable ids."""
    from pydoc_data.topics import topics

    return [passage for topic in sorted(topics) for passage in _topic_passages(topic, topics[topic])]


ProgressCallback = Callable[[int, int], None]

#: The key this app writes into the demo's registry entry, and the file it writes into the demo's folder:
#: the marks that say "recall-gui made this", so a rebuild may replace it. Nothing else is ever replaced.
DEMO_MARK_KEY = "made_by"
DEMO_MARK_VALUE = "recall-gui demo"
DEMO_MARK_FILE = ".recall-gui-demo"
#: Registry keys of the demo's entry that a rebuild keeps as the user left them.
KEPT_ON_REBUILD = ("description",)


def demo_table_dir_name() -> str:
    return f"{DEMO_NAME}.lance"


def _folder_contents_not_ours(target: Path) -> list[str]:
    """What in ``target`` the demo did not put there (empty when it may be replaced)."""
    if not target.exists() and not target.is_symlink():
        return []
    if target.is_symlink() or not target.is_dir():
        return [target.name]
    names = sorted(child.name for child in target.iterdir())
    # A demo built by recall-gui 0.1 carries no mark: it is recognised by holding the demo's table alone.
    ours = {DEMO_MARK_FILE, demo_table_dir_name()} if DEMO_MARK_FILE in names else {demo_table_dir_name()}
    return [name for name in names if name not in ours]


def demo_folder_problem(target: Path) -> str | None:
    """Why ``target`` may not be replaced by the demo, or ``None`` when it may (absent, or the demo's)."""
    foreign = _folder_contents_not_ours(target)
    if not foreign:
        return None
    if foreign == [target.name]:
        return f"{target} exists and is not a folder recall-gui made for the demo"
    shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
    return f"{target} holds files that recall-gui did not put there ({shown})"


def is_demo_entry(existing: Mapping[str, Any], target: Path) -> bool:
    """Whether a registry entry named like the demo is the demo this app made: it carries the mark, or
    (a demo built by recall-gui 0.1, before the mark) it points at the app's demo folder, which holds the
    demo's table alone."""
    if existing.get(DEMO_MARK_KEY) == DEMO_MARK_VALUE:
        return True
    uri = existing.get("uri")
    return (
        isinstance(uri, str)
        and _same_path(Path(uri).expanduser(), target)
        and (target / demo_table_dir_name()).is_dir()
        and demo_folder_problem(target) is None
    )


def _same_path(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # a symlink loop raises RuntimeError before Python 3.13
        return a.absolute() == b.absolute()


def _refusal(registry_dir: Path) -> Callable[[Mapping[str, Any]], DemoConflictError]:
    def refuse(existing: Mapping[str, Any]) -> DemoConflictError:
        uri = existing.get("uri")
        where = f" (its table is in {uri})" if isinstance(uri, str) else ""
        return DemoConflictError(
            f'the registry in {registry_dir} already has a database named "{DEMO_NAME}" that recall-gui '
            f"did not make{where}; nothing was changed",
            hint=f"Rename or remove that entry in {registry_dir / DBS_FILE} to build the demo there, or "
            "build it into another registry with --registry DIR.",
        )

    return refuse


def check_demo_target(registry_dir: Path, target: Path) -> None:
    """Refuse, before any work, to build the demo where it would replace what recall-gui did not make:
    cosh's registry (the demo is never registered there), a registry entry named like the demo that is not
    the demo, or a folder that holds anything else. Raises :class:`DemoConflictError`."""
    if _same_path(Path(registry_dir), cosh_registry_dir()):
        raise DemoConflictError(
            f"{registry_dir} is cosh's registry, and the demo is never registered there; nothing was changed",
            hint=f"Leave out --registry and ${REGISTRY_ENV} to use the app's own registry, or name "
            "another folder with --registry DIR.",
        )
    for folder in (target.parent, Path(registry_dir)):
        unusable = folder_making_problem(folder)
        if unusable is not None:  # found now, not after a minute of embedding
            raise SettingsError(
                f"the demo was not built: {unusable}; nothing was changed",
                path=folder,
                hint=f"Set {DATA_ENV} to a folder you can write."
                if folder == target.parent
                else "Name a registry folder you can write.",
            )
    problem = demo_folder_problem(target)
    if problem is not None:
        raise DemoConflictError(
            f"{problem}; nothing was changed",
            hint=f"Move {target} elsewhere (it may hold your files), then build the demo again.",
        )
    try:  # a registry the demo could not be registered in is refused now, not after the embedding
        entries = writable_entries(Path(registry_dir))
    except RegistryError as error:
        raise RegistryError(
            f"the demo was not built: {error.message}; nothing was changed",
            hint="Fix or delete that file, then build the demo again.",
        ) from None
    for entry in entries:
        if isinstance(entry, dict) and entry.get("name") == DEMO_NAME and not is_demo_entry(entry, target):
            raise _refusal(Path(registry_dir))(entry)


def _cancelled(cancel: threading.Event | None) -> bool:
    return cancel is not None and cancel.is_set()


def publish_demo(
    table: pa.Table, registry_dir: Path, target: Path, *, cancel: threading.Event | None = None
) -> Path:
    """Write ``table`` as the demo's LanceDB table into ``target`` (replacing the previous demo, never
    anything else) and register it, active, in ``registry_dir``, keeping a description the user edited."""
    import lancedb

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".demo-building-", dir=target.parent))
    try:
        lancedb.connect(str(staging)).create_table(DEMO_NAME, table)
        (staging / DEMO_MARK_FILE).write_text(
            json.dumps({DEMO_MARK_KEY: DEMO_MARK_VALUE}) + "\n", encoding="utf-8"
        )
        if _cancelled(cancel):
            raise DemoBuildCancelled("building the demo knowledge base was cancelled")
        check_demo_target(registry_dir, target)  # again: something may have appeared meanwhile
        old = target.with_name(f".{target.name}-old-{int(time.time() * 1000)}")
        if target.exists():
            target.rename(old)
        staging.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    register_database(
        registry_dir,
        {
            "name": DEMO_NAME,
            "uri": str(target),
            "description": DEMO_DESCRIPTION,
            "embedder": {"Local": {"model": DEMO_MODEL}},
            "created_at": int(time.time() * 1000),
            DEMO_MARK_KEY: DEMO_MARK_VALUE,
        },
        replaceable=lambda existing: is_demo_entry(existing, target),
        keep=KEPT_ON_REBUILD,
        refusal=_refusal(Path(registry_dir)),
    )
    return target


def embed_passages(
    embedder: LocalEmbedder,
    texts: Sequence[str],
    *,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> npt.NDArray[np.float32]:
    """The demo's vectors for ``texts``, the one way they are made (from source and for the prebuilt
    copy): sorted by length, in batches of :data:`BATCH`, with the model's bulk session."""
    import numpy as np

    total = len(texts)
    report = progress or (lambda done, total: None)
    by_length = sorted(range(total), key=lambda i: len(texts[i]))
    matrix = np.zeros((total, embedder.dim or 384), dtype=np.float32)
    for start in range(0, total, BATCH):
        if _cancelled(cancel):
            raise DemoBuildCancelled("building the demo knowledge base was cancelled")
        batch = by_length[start : start + BATCH]
        vectors = embedder.embed_many([texts[i] for i in batch], batch_size=BATCH)
        matrix[batch] = np.vstack(vectors)
        report(min(start + BATCH, total), total)
    return matrix


def demo_table(ids: Sequence[str], contents: Sequence[str], matrix: npt.NDArray[np.float32]) -> pa.Table:
    """The demo's rows in cosh's schema."""
    import pyarrow as pa

    return pa.table(
        {
            "id": pa.array(ids, pa.utf8()),
            "content": pa.array(contents, pa.utf8()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1]),
        }
    )


def build_demo(
    registry_dir: Path,
    target: Path | None = None,
    *,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Build (or rebuild) the demo from source (this Python's help topics, embedded here) and register
    it, active, in ``registry_dir``. Blocking; returns the database folder. Raises
    :class:`DemoBuildCancelled` when ``cancel`` is set, :class:`DemoConflictError` when it would replace
    something recall-gui did not make."""
    from recall_gui.core.embedders.model_choice import load_local_model

    target = Path(target) if target is not None else demo_db_dir()
    check_demo_target(registry_dir, target)
    passages = demo_passages()
    report = progress or (lambda done, total: None)
    report(0, len(passages))
    embedder = load_local_model(DEMO_MODEL)
    texts = [p.content for p in passages]
    matrix = embed_passages(embedder, texts, progress=report, cancel=cancel)
    table = demo_table([p.id for p in passages], texts, matrix)
    return publish_demo(table, registry_dir, target, cancel=cancel)


#: The prebuilt demo shipped with the package (``make demo-data`` writes it): its passages and their
#: vectors as an Arrow IPC file, so a first start has the demo at once instead of embedding for a minute.
PREBUILT_FILE = "python-docs.arrow"
#: Schema metadata key of the prebuilt file: what made it (JSON).
PREBUILT_META_KEY = b"recall_gui.demo"
PREBUILT_FORMAT = 1


def prebuilt_demo_path() -> Path:
    """The packaged prebuilt demo file (it may be missing from a source tree that never ran
    ``make demo-data``)."""
    from importlib import resources

    return Path(str(resources.files("recall_gui.core").joinpath("demo_data", PREBUILT_FILE)))


@dataclass(frozen=True)
class PrebuiltDemo:
    """The prebuilt demo as packaged: its rows in cosh's schema and what made them."""

    table: pa.Table
    about: Mapping[str, Any]

    def texts(self) -> list[str]:
        return [str(text) for text in self.table.column("content").to_pylist()]

    def vectors(self) -> npt.NDArray[np.float32]:
        import numpy as np

        flat = self.table.column("vector").combine_chunks().flatten().to_numpy()
        return np.asarray(flat, dtype=np.float32).reshape(self.table.num_rows, -1)


def reembed_prebuilt(prebuilt: PrebuiltDemo, embedder: LocalEmbedder) -> npt.NDArray[np.float32]:
    """The prebuilt demo's own passages embedded again, the way the demo is built (to verify it)."""
    return embed_passages(embedder, prebuilt.texts())


def read_prebuilt_demo(path: Path | None = None) -> PrebuiltDemo:
    """Read and check the packaged prebuilt demo; raises :class:`DemoDataError` when it is missing or
    not what this version writes."""
    import pyarrow as pa
    import pyarrow.ipc

    path = Path(path) if path is not None else prebuilt_demo_path()
    hint = "Reinstall recall-gui, or build the demo from source with `recall-gui demo`."
    try:
        with pa.memory_map(str(path)) as source:
            table = pyarrow.ipc.open_file(source).read_all()
    except (OSError, pa.ArrowInvalid) as error:
        raise DemoDataError(f"the prebuilt demo {path} cannot be read: {error}", hint=hint) from error
    raw = (table.schema.metadata or {}).get(PREBUILT_META_KEY)
    try:
        about = json.loads(raw) if raw else {}
    except ValueError:
        about = {}
    expected = [
        ("id", pa.utf8()),
        ("content", pa.utf8()),
        ("vector", pa.list_(pa.float32(), 384)),
    ]
    if (
        about.get("format") != PREBUILT_FORMAT
        or about.get("model") != DEMO_MODEL
        or [(f.name, f.type) for f in table.schema] != expected
        or table.num_rows != about.get("passages")
        or table.num_rows == 0
    ):
        raise DemoDataError(
            f"the prebuilt demo {path} is not one this version of recall-gui reads", hint=hint
        )
    return PrebuiltDemo(table.replace_schema_metadata(None), about)


def install_demo(
    registry_dir: Path,
    target: Path | None = None,
    *,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Write the packaged prebuilt demo into ``target`` and register it, active, in ``registry_dir``:
    the same table :func:`build_demo` makes, in a second or two. Blocking; returns the database folder.
    Raises as :func:`build_demo` does, and :class:`DemoDataError` when the packaged file is unusable."""
    target = Path(target) if target is not None else demo_db_dir()
    check_demo_target(registry_dir, target)
    report = progress or (lambda done, total: None)
    prebuilt = read_prebuilt_demo()
    total = prebuilt.table.num_rows
    report(0, total)
    path = publish_demo(prebuilt.table, registry_dir, target, cancel=cancel)
    report(total, total)
    return path


def demo_wanted(location: RegistryLocation, registry: Registry) -> bool:
    """Whether to offer building the demo at start-up: only in the app's own registry, and only while it
    lists no database at all (a user with a cosh registry, or who chose one, never gets it unasked)."""
    return location.is_app_registry and not registry.databases and not registry.problems
