"""The local model's onnxruntime session must not busy-wait between queries: on a two-core machine its
spinning threads took the CPU the search right after each embedding needs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.coretools import query_session


@pytest.mark.parametrize("path", ["direct", "fastembed"])
def test_the_loaded_model_session_does_not_spin_between_runs(path: str, embedder: Any) -> None:
    import onnxruntime

    from recall_gui.core.embedders.local import load_offline_fastembed

    model = embedder if path == "direct" else load_offline_fastembed()
    options = query_session(model).get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"
    assert isinstance(
        onnxruntime.SessionOptions(), onnxruntime.capi.onnxruntime_pybind11_state.SessionOptions
    )
    assert len(model.embed_sync("still embeds")) == 384
