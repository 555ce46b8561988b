"""Write the prebuilt demo shipped with the package: ``make demo-data``.

    .venv/bin/python packaging/demo_data.py [--check]

Takes the demo's passages from this Python's help topics (``pydoc_data.topics``), embeds them with cosh's
default model, all-MiniLM-L6-v2 in float32 from its published weights (the exact model; a stand-in is
refused), exactly as ``recall-gui demo`` does (sorted by length, batches of 8, the model's bulk session),
and writes passages and vectors to
``recall_gui/core/demo_data/python-docs.arrow`` (Arrow IPC, zstd). The file carries its own passages: a
first start uses them as they are, whatever Python version runs the app.

Then it verifies what it wrote: read back, the file's own passages embedded again must give exactly its
vectors. ``--check`` only verifies the file there is (exit 1 when it differs).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recall_gui.runtime import configure_process  # noqa: E402

configure_process()


def exact_model(name: str) -> Any:
    """cosh's model ``name`` as the app serves it, refused unless it is the exact one."""
    from recall_gui.core.embedders.pool import load_local_model

    embedder = load_local_model(name)
    if not embedder.model_info.exact:
        source = embedder.model_info.source
        raise SystemExit(f"{name} is served by a stand-in here ({source}): install its weights first")
    return embedder


def write(path: Path) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.ipc

    from recall_gui.core.demo import (
        BATCH,
        DEMO_MODEL,
        PREBUILT_FORMAT,
        PREBUILT_META_KEY,
        demo_passages,
        demo_table,
        embed_passages,
    )
    from recall_gui.core.embedders.published_weights import WEIGHTS_INSTALL, WEIGHTS_SHA256

    passages = demo_passages()
    embedder = exact_model(DEMO_MODEL)
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        print(f"embedding passages: {done}/{total}", file=sys.stderr, flush=True)

    texts = [p.content for p in passages]
    matrix = embed_passages(embedder, texts, progress=progress)
    print(f"embedded {len(texts)} passages in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    about = {
        "format": PREBUILT_FORMAT,
        "model": DEMO_MODEL,
        "embedded_with": embedder.model_info.source,
        "model_package": WEIGHTS_INSTALL.rsplit(" ", 1)[-1],
        "model_sha256": WEIGHTS_SHA256,
        "batch": BATCH,
        "passages": len(texts),
        "source": f"pydoc_data.topics of Python {platform.python_version()}",
    }
    table = demo_table([p.id for p in passages], texts, np.asarray(matrix, np.float32))
    table = table.replace_schema_metadata({PREBUILT_META_KEY: json.dumps(about).encode()})
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_suffix(".arrow.tmp")
    options = pyarrow.ipc.IpcWriteOptions(compression="zstd")
    with (
        pa.OSFile(str(staging), "wb") as sink,
        pyarrow.ipc.new_file(sink, table.schema, options=options) as out,
    ):
        out.write_table(table)
    staging.replace(path)
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB): {json.dumps(about)}", file=sys.stderr)


def check(path: Path) -> bool:
    """The file's vectors are exactly what the exact model makes of its passages."""
    from recall_gui.core.demo import DEMO_MODEL, read_prebuilt_demo, reembed_prebuilt

    prebuilt = read_prebuilt_demo(path)
    stored = prebuilt.vectors()
    fresh = reembed_prebuilt(prebuilt, exact_model(DEMO_MODEL))
    differing = int((stored != fresh).any(axis=1).sum())
    if differing:
        worst = float(abs(stored - fresh).max())
        print(f"FAILED: {differing} of {len(stored)} vectors differ (largest difference {worst:g})")
        return False
    print(f"verified: all {len(stored)} vectors are exactly what the exact model makes of the passages")
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only verify the file there is")
    args = parser.parse_args()
    from recall_gui.core.demo import prebuilt_demo_path

    path = prebuilt_demo_path()
    if not args.check:
        write(path)
    return 0 if check(path) else 1


if __name__ == "__main__":
    sys.exit(main())
