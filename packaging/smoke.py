"""Run the built one-folder program headless through every path a user takes, and fail on the first gap.

    .venv/bin/python packaging/smoke.py [dist/recall-gui/recall-gui]

(`make package-smoke` builds the program first.) The app imports most of its libraries lazily, so a build
can print its version and still lack LanceDB, onnxruntime, pydoc_data or a Qt plugin. Each step below
runs the built program, in an isolated set of app directories, exactly as a user would:

1. its shared libraries: nothing the build dropped is still needed by what it kept;
2. ``--version``;
3. ``models``: cosh's default model is exact, from the float32 weights the build carries; ``demo`` builds
   the demo knowledge base (Python's help topics, embedded with that model);
4. ``search`` on it: the JSON must be byte for byte what this checkout's ``recall-gui search`` prints;
5. ``list --json`` and ``tool``;
6. ``mcp``: a real MCP client (the SDK's) lists the tool and calls it; the payload is the search JSON;
7. the window (``--smoke``) on the offscreen platform, and under Xvfb on X11 when ``xvfb-run`` exists:
   shown, started, typed into, searched;
8. ``install.sh`` into a temporary prefix (menu entry, icons, the command), then ``--uninstall``.

Prints each step with its time; exits 1 with the reason on the first failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recall_gui import __version__  # noqa: E402
from recall_gui.mcp.probe import AgentProbe, ServerLaunch  # noqa: E402

DEMO_DB = "python-docs"
QUERY = "how do generators work"
LIMIT = "3"
#: Generous bounds for a loaded two-core machine; a healthy run takes a fraction of each.
DEMO_TIMEOUT = 600
STEP_TIMEOUT = 180


class SmokeError(Exception):
    pass


def isolated_env(root: Path, name: str) -> dict[str, str]:
    """Own config, data and cache dirs; no cosh registry, no API keys, no model downloads."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_API_KEY") and key not in {"RECALL_REGISTRY_DIR", "OLLAMA_HOST"}
    }
    env.update(
        {
            "RECALL_GUI_CONFIG_DIR": str(root / name / "config"),
            "RECALL_GUI_DATA_DIR": str(root / "data"),  # shared: every run sees the one demo
            "RECALL_GUI_CACHE_DIR": str(root / name / "cache"),
            "FASTEMBED_CACHE_PATH": str(root / name / "fastembed"),
            "XDG_DATA_HOME": str(root / name / "xdg-data"),
            "XDG_CONFIG_HOME": str(root / name / "xdg-config"),
            "HF_HUB_OFFLINE": "1",
            "RECALL_GUI_DOWNLOAD_MODELS": "0",
        }
    )
    return env


def run(command: list[str], env: dict[str, str], timeout: float = STEP_TIMEOUT) -> str:
    done = subprocess.run(command, env=env, capture_output=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise SmokeError(
            f"`{' '.join(command)}` exited {done.returncode}\n"
            f"stdout: {done.stdout.decode(errors='replace')[-2000:]}\n"
            f"stderr: {done.stderr.decode(errors='replace')[-4000:]}"
        )
    return done.stdout.decode("utf-8")


def is_elf(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(4) == b"\x7fELF"


def elf_files(folder: Path) -> list[Path]:
    return [
        path for path in folder.rglob("*.so*") if path.is_file() and not path.is_symlink() and is_elf(path)
    ]


def check_libraries(exe: Path) -> str:
    """No kept binary needs a library that the build environment has but the bundle lost.

    Libraries the build environment lacks too (libwayland-cursor on a machine without Wayland) belong
    to the desktop the program runs on, not to the bundle.
    """
    internal = exe.parent / "_internal"
    site = Path(sysconfig.get_paths()["purelib"])
    available = {path.name for path in site.rglob("*.so*")}
    env = {**os.environ, "LD_LIBRARY_PATH": str(internal)}
    problems, files = [], elf_files(internal)
    for path in files:
        out = subprocess.run(["ldd", str(path)], env=env, capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if "=> not found" in line:
                name = line.split("=>")[0].strip()
                if name in available:
                    problems.append(f"{path.relative_to(internal)} needs {name}, left out of the bundle")
    if problems:
        raise SmokeError("\n".join(problems))
    return f"{len(files)} libraries, none needs one the build dropped"


def check_version(exe: Path, env: dict[str, str]) -> str:
    out = run([str(exe), "--version"], env).strip()
    if out != f"recall-gui {__version__}":
        raise SmokeError(f"--version printed {out!r}, expected 'recall-gui {__version__}'")
    return out


def check_demo(exe: Path, env: dict[str, str]) -> str:
    out = run([str(exe), "demo"], env, timeout=DEMO_TIMEOUT)
    if "registered in:" not in out:
        raise SmokeError(f"demo printed {out!r}")
    return out.splitlines()[0]


def check_search(
    exe: Path, env: dict[str, str], checkout_env: dict[str, str], outputs: dict[str, str]
) -> str:
    command = ["search", "--db", DEMO_DB, "--limit", LIMIT, QUERY]
    built = outputs["search"] = run([str(exe), *command], env)
    result = json.loads(built)
    if result["query"] != QUERY or len(result["results"]) != int(LIMIT):
        raise SmokeError(f"search returned {built[:500]!r}")
    expected = run([sys.executable, "-m", "recall_gui", *command], {**checkout_env, "PYTHONPATH": str(ROOT)})
    if built != expected:
        raise SmokeError(f"the built program's search differs from the checkout's:\n{built}\n{expected}")
    return f"{len(result['results'])} results, first {result['results'][0]['id']}, same JSON as the checkout"


def check_models(exe: Path, env: dict[str, str]) -> str:
    """cosh's default model is served exactly by the build, from the weights it carries."""
    listed = {entry["name"]: entry for entry in json.loads(run([str(exe), "models", "--json"], env))}
    default = listed["AllMiniLML6V2"]
    if default["status"] != "exact":
        raise SmokeError(f"the build serves AllMiniLML6V2 as {default['status']}: {default['source']}")
    return f"AllMiniLML6V2 exact: {default['source']}"


def check_list_and_tool(exe: Path, env: dict[str, str]) -> str:
    rows = json.loads(run([str(exe), "list", "--json"], env))
    demo = next((row for row in rows if row["name"] == DEMO_DB), None)
    if demo is None or demo["problems"] or not demo["rows"]:
        raise SmokeError(f"list --json: {rows}")
    tool = json.loads(run([str(exe), "tool"], env))
    if tool.get("name") != "recall_search" or DEMO_DB not in tool.get("description", ""):
        raise SmokeError(f"tool printed {tool}")
    return f"{DEMO_DB}: {demo['rows']} rows, healthy; tool lists it"


def check_mcp(exe: Path, env: dict[str, str], registry: Path, expected: str) -> str:
    async def probe() -> str:
        launch = ServerLaunch(str(exe), ("mcp", "--registry", str(registry)), env)
        async with AgentProbe(launch, timeout=STEP_TIMEOUT) as server:
            listing = await server.list_tools()
            if DEMO_DB not in (listing.description() or ""):
                raise SmokeError(f"tools/list: {listing.tools}")
            payload = await server.call({"db_name": DEMO_DB, "query": QUERY, "limit": int(LIMIT)})
        if payload.is_error or payload.text != expected.rstrip("\n"):
            raise SmokeError(f"tools/call returned {payload}")
        return f"tools/list and tools/call over stdio ({payload.elapsed_ms:.0f} ms), payload = search JSON"

    return asyncio.run(probe())


def check_window(exe: Path, env: dict[str, str], registry: Path, platform: str) -> str:
    command = [str(exe), "--smoke", "--registry", str(registry)]
    window_env = dict(env)
    if platform == "offscreen":
        window_env["QT_QPA_PLATFORM"] = "offscreen"
    else:
        window_env.pop("QT_QPA_PLATFORM", None)
        window_env.pop("WAYLAND_DISPLAY", None)
        command = ["xvfb-run", "--auto-servernum", "--server-args=-screen 0 1280x800x24", *command]
    done = subprocess.run(
        command, env=window_env, capture_output=True, text=True, timeout=STEP_TIMEOUT, check=False
    )
    report = next((line for line in done.stderr.splitlines() if line.startswith("smoke:")), "")
    if done.returncode != 0 or not report.startswith("smoke: ok"):
        raise SmokeError(f"the window on {platform} exited {done.returncode}:\n{done.stderr[-4000:]}")
    return report.removeprefix("smoke: ok: ")


def check_install(exe: Path, env: dict[str, str], root: Path) -> str:
    """install.sh into a temporary prefix: program, link, menu entry, icons; then --uninstall."""
    prefix = root / "prefix"
    run(["sh", str(exe.parent / "install.sh"), "--prefix", str(prefix)], env)
    desktop = prefix / "share" / "applications" / "recall-gui.desktop"
    exec_line = next(line for line in desktop.read_text().splitlines() if line.startswith("Exec="))
    installed = prefix / "lib" / "recall-gui" / "recall-gui"
    if exec_line != f'Exec="{installed}"':
        raise SmokeError(f"the menu entry runs {exec_line!r}, expected {installed}")
    if shutil.which("desktop-file-validate"):
        run(["desktop-file-validate", str(desktop)], env)
    icons = sorted(
        p.parent.parent.name for p in (prefix / "share" / "icons" / "hicolor").glob("*/apps/recall-gui.*")
    )
    if len(icons) < 10:
        raise SmokeError(f"icons installed: {icons}")
    version = run([str(prefix / "bin" / "recall-gui"), "--version"], env).strip()
    if version != f"recall-gui {__version__}":
        raise SmokeError(f"the installed command printed {version!r}")
    run(["sh", str(exe.parent / "install.sh"), "--prefix", str(prefix), "--uninstall"], env)
    caches = {"mimeinfo.cache", "icon-theme.cache"}  # the desktop's indexes, rebuilt by install.sh
    left = [str(p.relative_to(prefix)) for p in prefix.rglob("*") if not p.is_dir() and p.name not in caches]
    if left:
        raise SmokeError(f"--uninstall left {left}")
    return f"menu entry, {len(icons)} icon sizes, the linked command runs; uninstall leaves nothing"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("exe", nargs="?", default=str(ROOT / "dist" / "recall-gui" / "recall-gui"))
    exe = Path(parser.parse_args().exe).resolve()
    if not exe.is_file():
        print(f"error: {exe} does not exist; build it first with `make package`", file=sys.stderr)
        return 1
    total = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="recall-gui-smoke-") as tmp:
        root = Path(tmp)
        env, checkout_env = isolated_env(root, "built"), isolated_env(root, "checkout")
        registry = root / "data" / "registry"
        outputs: dict[str, str] = {}

        steps: list[tuple[str, Callable[[], str]]] = [
            ("libraries", lambda: check_libraries(exe)),
            ("--version", lambda: check_version(exe, env)),
            ("models", lambda: check_models(exe, env)),
            ("demo", lambda: check_demo(exe, env)),
            ("search", lambda: check_search(exe, env, checkout_env, outputs)),
            ("list, tool", lambda: check_list_and_tool(exe, env)),
            ("mcp", lambda: check_mcp(exe, env, registry, outputs["search"])),
            ("window (offscreen)", lambda: check_window(exe, env, registry, "offscreen")),
            ("install.sh", lambda: check_install(exe, env, root)),
        ]
        if shutil.which("xvfb-run"):
            steps.append(("window (X11, Xvfb)", lambda: check_window(exe, env, registry, "xcb")))
        else:
            print("note: xvfb-run not found: the window is checked on the offscreen platform only")
        for name, step in steps:
            started = time.perf_counter()
            try:
                detail = step()
            except Exception as error:  # any failure of a step is reported the same way
                print(f"FAILED {name} after {time.perf_counter() - started:.1f} s: {error}", file=sys.stderr)
                return 1
            print(f"ok  {name:<20} {time.perf_counter() - started:6.1f} s  {detail}", flush=True)
    print(f"smoke run passed in {time.perf_counter() - total:.1f} s ({exe})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
