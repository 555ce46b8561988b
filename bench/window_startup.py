"""How long `recall-gui` takes from process start until its window is shown and accepts input.

Each measurement runs in a fresh process (imports are what start-up costs), timed from the moment the OS
created the process. "Ready" is the first turn of the event loop with the window exposed: from then on
key presses are handled. "Libraries loaded" is when the background start-up has finished (LanceDB & co.
imported, databases checked, the first page shown); "max gap" is the longest the GUI thread went without
serving a 10 ms timer in between, i.e. the worst delay a key press typed meanwhile could see. A bare
PySide6 window is measured the same way.

    python -m bench.window_startup [--registry DIR] [--runs 5]

Needs a display (or QT_QPA_PLATFORM=offscreen, which measures less drawing).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.process_age import process_age_s


def _child(kind: str, registry: str | None) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QLineEdit, QMainWindow

    app = QApplication(sys.argv[:1])
    times: dict[str, float] = {}

    def window() -> QMainWindow | None:
        shown = [w for w in app.topLevelWidgets() if isinstance(w, QMainWindow) and w.isVisible()]
        return shown[0] if shown else None

    def finish() -> None:
        print(json.dumps(times), flush=True)
        found = window()
        if found is not None:
            found.close()
        if kind == "bare":
            app.quit()

    def probe() -> None:
        found = window()
        handle = found.windowHandle() if found is not None else None
        if found is None or handle is None or not handle.isExposed():
            QTimer.singleShot(1, probe)
            return
        times["ready_s"] = process_age_s()
        if kind == "bare":
            finish()
            return
        # While the libraries load behind the window, how long can the GUI thread keep a key press waiting?
        ticker = QTimer(found)
        last = [time.perf_counter()]
        times["max_gap_while_loading_ms"] = 0.0

        def tick() -> None:
            now = time.perf_counter()
            gap = (now - last[0]) * 1000
            times["max_gap_while_loading_ms"] = max(times["max_gap_while_loading_ms"], gap)
            last[0] = now

        def loaded() -> None:
            ticker.stop()
            times["libraries_loaded_s"] = process_age_s()
            finish()

        ticker.timeout.connect(tick)
        ticker.start(10)
        found.started.connect(loaded)  # type: ignore[attr-defined]

    QTimer.singleShot(0, probe)
    if kind == "bare":
        bare = QMainWindow()
        bare.setCentralWidget(QLineEdit())
        bare.resize(1280, 800)
        bare.show()
        app.exec()
        return
    from recall_gui.qt.app import run_app

    run_app(registry_dir=registry)


def measure_once(kind: str, registry: str | None, env: dict[str, str] | None = None) -> dict[str, float]:
    """One start-up in a fresh process (``env``: its environment, default this one's)."""
    command = [sys.executable, "-m", "bench.window_startup", "--child", kind]
    if registry:
        command += ["--registry", registry]
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True, env=env, cwd=root)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", help="registry directory for recall-gui (default: the usual one)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", choices=["app", "bare"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.registry)
        return
    rows: dict[str, list[float]] = {
        "bare_ready_s": [],
        "ready_s": [],
        "libraries_loaded_s": [],
        "max_gap_while_loading_s": [],
    }
    for _ in range(args.runs):
        rows["bare_ready_s"].append(measure_once("bare", None)["ready_s"])
        app = measure_once("app", args.registry)
        rows["ready_s"].append(app["ready_s"])
        rows["libraries_loaded_s"].append(app["libraries_loaded_s"])
        rows["max_gap_while_loading_s"].append(app["max_gap_while_loading_ms"] / 1000)
    for name, values in rows.items():
        print(
            f"{name:20} median {statistics.median(values) * 1000:7.0f} ms   runs: "
            + ", ".join(f"{v * 1000:.0f}" for v in values)
        )
    ratio = statistics.median(rows["ready_s"]) / statistics.median(rows["bare_ready_s"])
    print(f"{'ready vs bare':20} {ratio:.2f}x")


if __name__ == "__main__":
    main()
