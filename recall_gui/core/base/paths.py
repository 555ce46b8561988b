"""Where things live on disk: cosh's registry, this app's config, data and cache.

Every location can be overridden by an environment variable, so tests and scripts never touch a user's
real files, and users can keep the app's state wherever they like.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "recall-gui"
REGISTRY_ENV = "RECALL_REGISTRY_DIR"
CONFIG_ENV = "RECALL_GUI_CONFIG_DIR"
DATA_ENV = "RECALL_GUI_DATA_DIR"
CACHE_ENV = "RECALL_GUI_CACHE_DIR"
AGENT_LOG_ENV = "RECALL_GUI_AGENT_LOG_DIR"
DBS_FILE = "rag_dbs.json"
ACTIVE_FILE = "rag_active.json"


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


def cosh_registry_dir() -> Path:
    """cosh's own registry: the platform data dir + ``/cosh`` (Rust's ``dirs::data_dir``, roaming)."""
    return Path(platformdirs.user_data_dir("cosh", appauthor=False, roaming=True))


def app_config_dir() -> Path:
    """Where the app keeps its own settings (the saved description suffix)."""
    return _env_path(CONFIG_ENV) or Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def app_data_dir() -> Path:
    """Where the app keeps its own registry and the demo knowledge base."""
    return _env_path(DATA_ENV) or Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def app_models_dir() -> Path:
    """Where ``recall-gui models get`` puts the model files it brings (a Hugging Face cache layout)."""
    return app_data_dir() / "models"


def app_cache_dir() -> Path:
    """Disposable files (the staged offline model folder)."""
    return _env_path(CACHE_ENV) or Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def cache_problem() -> str | None:
    """Why the app's cache folder cannot be written (made here if need be), or ``None`` when it can.
    Everything in it is disposable: searches go on without it, slower, and this says so."""
    folder = app_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    except OSError as error:
        return (
            f"the cache folder {folder} cannot be written ({error.strerror or error}): searches go on "
            "without it, slower (exact search scans float32 vectors instead of int8 codes, with four times "
            f"the memory; t-SNE maps are not kept); set {CACHE_ENV} to a folder you can write"
        )
    return None


def agent_log_dir() -> Path:
    """Where ``recall-gui mcp`` records the calls agents make (the app's data dir unless moved)."""
    return _env_path(AGENT_LOG_ENV) or app_data_dir()


def app_registry_dir() -> Path:
    """The app's own registry, used when the user has no cosh registry (it lists the demo)."""
    return app_data_dir() / "registry"


def demo_db_dir() -> Path:
    return app_data_dir() / "demo"


@dataclass(frozen=True)
class RegistryLocation:
    """A resolved registry directory and why it was chosen (shown to the user)."""

    directory: Path
    source: str

    @property
    def is_app_registry(self) -> bool:
        return self.source == "app"


def resolve_registry_dir(
    explicit: str | os.PathLike[str] | None = None, *, for_demo: bool = False
) -> RegistryLocation:
    """Pick the registry: ``--registry``, then ``$RECALL_REGISTRY_DIR``, then cosh's, then the app's own.

    ``for_demo``: where the demo is registered: the same, but never cosh's registry found by default (the
    demo only goes there if the user names it, and then it is refused: see ``core.demo``).
    """
    if explicit:
        return RegistryLocation(Path(explicit).expanduser(), "--registry")
    from_env = _env_path(REGISTRY_ENV)
    if from_env is not None:
        return RegistryLocation(from_env, REGISTRY_ENV)
    cosh = cosh_registry_dir()
    if not for_demo and (cosh / DBS_FILE).exists():
        return RegistryLocation(cosh, "cosh")
    return RegistryLocation(app_registry_dir(), "app")


def folder_problem(path: Path) -> str | None:
    """Why ``path`` is not a folder that can be read, in words that complete "``path`` …" ("does not
    exist", "is a file, not a folder", "is a symbolic link loop" …); ``None`` for a readable folder."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            return f"is a symbolic link to {os.readlink(path)}, which does not exist"
        return "does not exist"
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "is a symbolic link loop (it leads back to itself)"
        if error.errno == errno.ENOTDIR:
            return "does not exist (a part of its path is a file, not a folder)"
        if error.errno in (errno.EACCES, errno.EPERM):
            return "cannot be reached (permission denied)"
        return f"cannot be read ({error.strerror or error})"
    if stat.S_ISDIR(mode):
        return None if os.access(path, os.R_OK | os.X_OK) else "is a folder this user may not read"
    kinds = (
        (stat.S_ISREG, "a file"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
    )
    kind = next((name for test, name in kinds if test(mode)), None)
    return f"is {kind}, not a folder" if kind else "is not a folder"


def folder_making_problem(path: Path) -> str | None:
    """Why a file cannot be made in the folder ``path`` (made first, with its parents, where missing), in
    words naming the part at fault ("/x/data is a file, not a folder"); ``None`` when one can be."""
    for folder in (path, *path.parents):
        try:
            mode = folder.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue  # made with its parents, unless a part above is at fault
        except OSError as error:
            return f"{folder} cannot be reached ({error.strerror or error})"
        if not stat.S_ISDIR(mode):
            return f"{folder} {folder_problem(folder) or 'is not a folder'}"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"{folder} is a folder this user may not write to"
        return None
    return None
