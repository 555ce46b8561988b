"""docs/ARCHITECTURE.md names every thread and process the app starts: recall_gui/ is scanned for the calls
that start one, so a new thread, process or QProcess fails here until the document's table names it."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "recall_gui"
SECTION = "## Threads and processes"

#: Calls that start a thread (or a multiprocessing process), and the keyword that names it.
THREAD_NAMES = {"Thread": "name", "ThreadPoolExecutor": "thread_name_prefix", "Process": "name"}
#: The app's own helper that starts a thread: its first argument is the thread's name.
THREAD_HELPERS = {"on_own_thread": "core/base/own_thread.py"}
#: Calls that start processes (or threads) without a name of the app's: a row of the table names the call
#: and the module that makes it.
UNNAMED_STARTS = {
    "QProcess",
    "QThread",
    "QThreadPool",
    "Popen",
    "ProcessPoolExecutor",
    "create_subprocess_exec",
    "create_subprocess_shell",
    "stdio_client",
}
#: The same, as ``module.call`` (``run`` or ``system`` alone would match calls that start nothing).
UNNAMED_DOTTED = {
    "ray.init",
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "os.system",
    "os.fork",
    "os.forkpty",
    "os.posix_spawn",
    "pty.fork",
}
STARTS_WITHOUT_NAMES = UNNAMED_STARTS | UNNAMED_DOTTED


@dataclass(frozen=True)
class Start:
    """One call that starts a thread or a process: where it is, and what the document must name."""

    module: str  # relative to recall_gui/, as the document writes it: ``core/ray/cluster.py``
    line: int
    call: str  # ``Thread``, ``ray.init``, …
    name: str | None  # the name the app gives it; None for a start the app cannot name, or did not

    def __str__(self) -> str:
        return f"{self.module}:{self.line} {self.call}({self.name or ''})"

    def named_by(self, section: str) -> bool:
        """A named one by its name; another by a row of the table naming the call and its module."""
        if self.name is not None:
            return f"`{self.name}`" in section
        rows = (line for line in section.splitlines() if line.startswith("|"))
        return any(f"`{self.module}`" in row and self.call in row for row in rows)


def called(node: ast.Call) -> tuple[str, str]:
    """The called function's last name, and ``base.name`` when it is an attribute of a plain name."""
    function = node.func
    if isinstance(function, ast.Name):
        return function.id, function.id
    if isinstance(function, ast.Attribute):
        base = function.value.id if isinstance(function.value, ast.Name) else "?"
        return function.attr, f"{base}.{function.attr}"
    return "", ""


def literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def starts_in(path: Path) -> list[Start]:
    module = path.relative_to(PACKAGE).as_posix()
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name, dotted = called(node)
        if name in THREAD_NAMES:
            keyword = next((k.value for k in node.keywords if k.arg == THREAD_NAMES[name]), None)
            if literal(keyword) is None and module in THREAD_HELPERS.values():
                continue  # the helper names its thread by its argument, checked at each call below
            found.append(Start(module, node.lineno, name, literal(keyword)))
        elif name in THREAD_HELPERS:
            found.append(Start(module, node.lineno, name, literal(node.args[0]) if node.args else None))
        elif name in UNNAMED_STARTS or dotted in UNNAMED_DOTTED:
            found.append(Start(module, node.lineno, dotted if dotted in UNNAMED_DOTTED else name, None))
    return found


@functools.cache
def all_starts() -> list[Start]:
    return [start for path in sorted(PACKAGE.rglob("*.py")) for start in starts_in(path)]


def documented() -> str:
    """The document's section on threads and processes, up to the next section."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    start = text.index(f"\n{SECTION}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def test_the_scan_finds_the_threads_and_processes_the_app_is_known_to_start() -> None:
    found = {(start.module, start.call, start.name) for start in all_starts()}
    known = {
        ("core/session/session.py", "ThreadPoolExecutor", "recall-embed"),
        ("core/storage/filter_guard.py", "Process", "recall-filter-check"),  # spawned by multiprocessing
        ("core/agent_log/call_log.py", "Thread", "recall-gui-agent-log"),
        ("core/ray/check_tasks.py", "on_own_thread", "recall-ray-job"),
        ("qt/dialogs/exact_model.py", "QProcess", None),
        ("mcp/probe.py", "stdio_client", None),  # the MCP SDK starts the server's process
        ("core/ray/cluster.py", "ray.init", None),  # Ray's own processes
    }
    assert sorted(known - found, key=str) == []


def test_every_thread_and_spawned_process_has_a_name() -> None:
    named_by_the_app = [start for start in all_starts() if start.call not in STARTS_WITHOUT_NAMES]
    assert [str(start) for start in named_by_the_app if start.name is None] == []


def test_every_thread_and_process_the_app_starts_is_in_the_architecture_document() -> None:
    section = documented()
    assert [str(start) for start in all_starts() if not start.named_by(section)] == []


def test_every_thread_the_document_names_is_started_by_the_app() -> None:
    started = {start.name for start in all_starts()}
    named = set(re.findall(r"`((?:recall|ray)-[\w-]+)`", documented()))
    assert len(named) > 10
    assert sorted(named - started) == []
