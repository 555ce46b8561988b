"""Where model files already on this machine are looked for, in order (docs/MODELS.md says the same).

1. recall-gui's own model folder (what ``recall-gui models get`` brought);
2. Python fastembed's cache (``FASTEMBED_CACHE_PATH``, else ``fastembed_cache`` in the temp folder);
3. fastembed-rs's caches as cosh uses them: ``FASTEMBED_CACHE_DIR``, ``HF_HOME`` (fastembed-rs takes it as
   its cache folder), a ``.fastembed_cache`` folder in the current folder and in the home folder;
4. Hugging Face's hub cache (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``).

Each keeps a repository as Hugging Face's cache layout does: ``models--ORG--NAME/snapshots/REVISION/FILE``
(fastembed-rs and Python fastembed both write it). Nothing here writes anywhere.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from recall_gui.core.base.paths import app_models_dir
from recall_gui.core.base.regular_files import read_regular

#: The most of a repository's ``refs/main`` read: it names one commit.
REF_MAX_BYTES = 4096


@dataclass(frozen=True)
class CacheRoot:
    """A folder that may hold model repositories, and what it is, in words."""

    path: Path
    what: str


def fastembed_cache_dir() -> Path:
    """Python fastembed's model cache: ``$FASTEMBED_CACHE_PATH`` or its default under the temp folder."""
    return Path(os.environ.get("FASTEMBED_CACHE_PATH") or Path(tempfile.gettempdir()) / "fastembed_cache")


def _env_folder(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


def _fastembed_rs_cache(folder: Callable[[], Path]) -> Path | None:
    """``.fastembed_cache`` in ``folder()``; ``None`` when that folder is gone (a deleted current folder)
    or unknown (no home folder)."""
    with contextlib.suppress(OSError, RuntimeError):
        return folder() / ".fastembed_cache"
    return None


def hub_cache_dir() -> Path:
    """Hugging Face's hub cache, as ``huggingface_hub`` finds it."""
    explicit = _env_folder("HF_HUB_CACHE")
    if explicit is not None:
        return explicit
    home = _env_folder("HF_HOME")
    return (home / "hub") if home is not None else Path.home() / ".cache" / "huggingface" / "hub"


def cache_roots() -> list[CacheRoot]:
    """Every folder searched for model files, in the order they are searched (each once)."""
    candidates: list[tuple[Path | None, str]] = [
        (app_models_dir(), "recall-gui's model folder"),
        (fastembed_cache_dir(), "Python fastembed's cache"),
        (_env_folder("FASTEMBED_CACHE_DIR"), "fastembed-rs's cache (FASTEMBED_CACHE_DIR)"),
        (_env_folder("HF_HOME"), "fastembed-rs's cache (HF_HOME)"),
        (_fastembed_rs_cache(Path.cwd), "fastembed-rs's cache in the current folder"),
        (_fastembed_rs_cache(Path.home), "fastembed-rs's cache in the home folder"),
        (hub_cache_dir(), "Hugging Face's hub cache"),
    ]
    roots: list[CacheRoot] = []
    seen: set[Path] = set()
    for path, what in candidates:
        if path is None:
            continue
        with contextlib.suppress(OSError, RuntimeError):
            key = path.resolve()
            if key not in seen:
                seen.add(key)
                roots.append(CacheRoot(path, what))
    return roots


def _repo_folders(root: Path, repo: str) -> list[Path]:
    """The folders of ``repo`` in ``root`` (any casing: hub ids are case-insensitive, caches are not)."""
    wanted = ("models--" + repo.replace("/", "--")).lower()
    try:
        return sorted(child for child in root.iterdir() if child.name.lower() == wanted and child.is_dir())
    except OSError:
        return []


def _snapshots(repo_folder: Path) -> Iterator[Path]:
    """The repository's snapshots, the one ``refs/main`` names first."""
    snapshots = repo_folder / "snapshots"
    main: str | None = None
    with contextlib.suppress(OSError, UnicodeDecodeError):
        main = read_regular(repo_folder / "refs" / "main", REF_MAX_BYTES).decode("utf-8").strip()
    if main:
        yield snapshots / main
    with contextlib.suppress(OSError):
        yield from sorted(child for child in snapshots.iterdir() if child.name != main)


def _usable(path: Path) -> bool:
    with contextlib.suppress(OSError):
        return path.is_file() and path.stat().st_size > 0
    return False


def find_snapshot(root: Path, repo: str, files: tuple[str, ...]) -> Path | None:
    """The snapshot folder of ``repo`` in ``root`` that holds every one of ``files``, if there is one."""
    for folder in _repo_folders(root, repo):
        for snapshot in _snapshots(folder):
            if all(_usable(snapshot / name) for name in files):
                return snapshot
    return None
