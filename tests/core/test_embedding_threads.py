"""The local model's onnxruntime session must not busy-wait between queries: on a two-core machine its
spinning threads took the CPU the search right after each embedding needs."""

from __future__ import annotations

from typing import Any


def test_the_loaded_model_session_does_not_spin_between_runs(embedder: Any) -> None:
    import onnxruntime

    session = embedder._model.model.model  # fastembed's TextEmbedding -> its ONNX model -> the session
    options = session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"
    assert isinstance(
        onnxruntime.SessionOptions(), onnxruntime.capi.onnxruntime_pybind11_state.SessionOptions
    )
    assert len(embedder.embed_sync("still embeds")) == 384
