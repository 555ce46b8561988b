"""The prebuilt demo shipped with the package (``make demo-data``): its own passages, and exactly the
vectors cosh's default model (float32, from its published weights) makes of them, so a first start has the
demo a `recall-gui demo` rebuild makes, without a minute of embedding."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from recall_gui.core.base.errors import DemoDataError
from recall_gui.core.base.paths import app_registry_dir
from recall_gui.core.demo import (
    DEMO_NAME,
    PREBUILT_META_KEY,
    PrebuiltDemo,
    demo_passages,
    install_demo,
    prebuilt_demo_path,
    read_prebuilt_demo,
    reembed_prebuilt,
)
from recall_gui.core.embedders.pool import load_local_model
from recall_gui.core.embedders.published_weights import WEIGHTS_SHA256
from tests import processor
from tests.conftest import DemoBuild

ROOT = Path(__file__).resolve().parents[2]


def test_the_prebuilt_demo_carries_its_own_passages_and_says_what_made_it() -> None:
    prebuilt = read_prebuilt_demo()
    assert prebuilt.about["model"] == "AllMiniLML6V2"
    assert prebuilt.about["embedded_with"].startswith(
        "the published float32 weights of sentence-transformers"
    )
    assert prebuilt.about["model_sha256"] == WEIGHTS_SHA256
    assert prebuilt.about["source"].startswith("pydoc_data.topics of Python ")
    ids = prebuilt.table.column("id").to_pylist()
    assert len(ids) == len(set(ids)) == prebuilt.table.num_rows > 500
    assert "yield#0" in ids
    assert prebuilt.table.schema.metadata is None  # what is written into LanceDB is cosh's schema alone


def test_the_prebuilt_vectors_are_what_the_exact_model_makes_of_its_passages_here(
    demo_build: DemoBuild,
) -> None:
    """Bitwise on an Intel processor, the kind the copy was made on (an Intel Xeon): the model gives
    identical vectors across thread counts there, batched as the demo is
    (docs/PERFORMANCE_LOG.md#demo-prebuilt). onnxruntime's kernels for other processors round otherwise:
    on an AMD EPYC (AVX2) nine values in ten differ, by at most 1.03e-7. The run's demo, built from
    source, embedded this Python's help topics that one way: where they are the prebuilt copy's passages,
    its vectors are the fresh ones; elsewhere the prebuilt passages are embedded again here."""
    import lancedb

    prebuilt = read_prebuilt_demo()
    built = lancedb.connect(str(demo_build.db_dir)).open_table(DEMO_NAME).to_arrow()
    if built.column("content").to_pylist() == prebuilt.texts():
        fresh = PrebuiltDemo(built, prebuilt.about).vectors()  # the same schema, read the same way
    else:
        fresh = reembed_prebuilt(prebuilt, load_local_model("AllMiniLML6V2"))
    stored = prebuilt.vectors()
    assert stored.shape == fresh.shape == (prebuilt.table.num_rows, 384)
    assert np.abs(stored - fresh).max() <= 2e-7
    if processor.intel():
        assert (stored == fresh).all()


def test_a_damaged_prebuilt_file_is_refused_with_what_to_do(tmp_path: Path) -> None:
    damaged = tmp_path / "python-docs.arrow"
    damaged.write_bytes(prebuilt_demo_path().read_bytes()[:5000])
    with pytest.raises(DemoDataError) as refused:
        read_prebuilt_demo(damaged)
    assert refused.value.hint and "recall-gui demo" in refused.value.hint


def test_a_prebuilt_file_of_another_format_is_refused(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.ipc

    prebuilt = read_prebuilt_demo()
    about = dict(prebuilt.about) | {"format": 99}
    table = prebuilt.table.replace_schema_metadata({PREBUILT_META_KEY: json.dumps(about).encode()})
    other = tmp_path / "python-docs.arrow"
    with pa.OSFile(str(other), "wb") as sink, pyarrow.ipc.new_file(sink, table.schema) as out:
        out.write_table(table)
    with pytest.raises(DemoDataError, match="not one this version of recall-gui reads"):
        read_prebuilt_demo(other)


@pytest.mark.process
def test_the_installed_demo_answers_byte_for_byte_as_a_rebuilt_one(demo_build: DemoBuild) -> None:
    """`recall-gui search` on the prebuilt demo prints what it prints on the demo built from source (when
    this Python's help topics are the ones the prebuilt copy was made from)."""
    prebuilt = read_prebuilt_demo()
    if [p.content for p in demo_passages()] != prebuilt.texts():
        pytest.skip(f"this Python's help topics differ from the prebuilt demo's ({prebuilt.about['source']})")
    install_demo(app_registry_dir())

    def search(registry: Path, env: dict[str, str]) -> str:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "recall_gui",
                "search",
                "--registry",
                str(registry),
                "--db",
                DEMO_NAME,
                "--limit",
                "8",
                "what does the with statement guarantee",
            ],
            check=True,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        return done.stdout

    installed = search(app_registry_dir(), {**os.environ, "PYTHONPATH": str(ROOT)})
    rebuilt = search(demo_build.registry_dir, demo_build.env)
    assert installed == rebuilt
    assert json.loads(installed)["results"]
