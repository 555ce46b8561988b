"""Write the ONNX graph the float32 all-MiniLM-L6-v2 runs on.

    .venv/bin/python packaging/minilm_graph.py [--check]

The published weights of ``sentence-transformers/all-MiniLM-L6-v2`` are a ``model.safetensors`` file (a BERT
encoder: 6 layers, 384 wide, 12 heads, GELU). This writes the encoder's graph without its weights to
``recall_gui/core/embedders/minilm_graph.onnx``: every weight is an external initializer named as in the
safetensors file, which the app hands to ONNX Runtime from the file at load time
(``core/embedders/published_weights.py``). So the app needs neither PyTorch nor the ``onnx`` package to run
the model, and the graph (about 20 kB) can be read as the model's definition.

Inputs and output are those of the ONNX exports fastembed runs (``input_ids``, ``attention_mask``,
``token_type_ids`` in, ``last_hidden_state`` out); pooling and normalisation stay in Python, as fastembed
does them. ``--check`` only verifies that the file there is what this script writes (exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GRAPH = ROOT / "recall_gui" / "core" / "embedders" / "minilm_graph.onnx"

#: The encoder's shape, as its ``config.json`` gives it.
HIDDEN = 384
HEADS = 12
LAYERS = 6
INTERMEDIATE = 1536
VOCAB = 30522
POSITIONS = 512
TOKEN_TYPES = 2
LAYER_NORM_EPS = 1e-12
#: ONNX opset 17 has LayerNormalization; ONNX Runtime runs it since 1.14.
OPSET = 17
IR_VERSION = 8


class _Builder:
    """Nodes and value names of one graph; weights are declared external, named as in safetensors."""

    def __init__(self) -> None:
        from onnx import helper

        self.helper = helper
        self.nodes: list[Any] = []
        self.constants: list[Any] = []
        self.weights: list[Any] = []
        self._count = 0

    def name(self, stem: str) -> str:
        self._count += 1
        return f"{stem}_{self._count}"

    def node(self, op: str, inputs: list[str], stem: str, **attributes: Any) -> str:
        out = self.name(stem)
        self.nodes.append(self.helper.make_node(op, inputs, [out], name=out, **attributes))
        return out

    def constant(self, stem: str, values: list[float] | list[int], dtype: str) -> str:
        from onnx import TensorProto

        kind = TensorProto.FLOAT if dtype == "float" else TensorProto.INT64
        name = self.name(stem)
        self.constants.append(self.helper.make_tensor(name, kind, [len(values)], values))
        return name

    def scalar(self, stem: str, value: float) -> str:
        from onnx import TensorProto

        name = self.name(stem)
        self.constants.append(self.helper.make_tensor(name, TensorProto.FLOAT, [], [value]))
        return name

    def weight(self, name: str, dims: list[int]) -> str:
        """A float32 tensor of the safetensors file, its data supplied when the session is made."""
        from onnx import TensorProto

        tensor = TensorProto()
        tensor.name = name
        tensor.data_type = TensorProto.FLOAT
        tensor.dims.extend(dims)
        tensor.data_location = TensorProto.EXTERNAL
        entry = tensor.external_data.add()
        entry.key, entry.value = "location", "model.safetensors"
        self.weights.append(tensor)
        return name

    def linear(self, x: str, prefix: str, inputs: int, outputs: int) -> str:
        """``x @ W.T + b`` with W as stored (out, in): the transpose is folded into the weight at load."""
        weight = self.weight(f"{prefix}.weight", [outputs, inputs])
        bias = self.weight(f"{prefix}.bias", [outputs])
        transposed = self.node("Transpose", [weight], "wt", perm=[1, 0])
        return self.node("Add", [self.node("MatMul", [x, transposed], "mm"), bias], "linear")

    def layer_norm(self, x: str, prefix: str) -> str:
        scale = self.weight(f"{prefix}.weight", [HIDDEN])
        bias = self.weight(f"{prefix}.bias", [HIDDEN])
        return self.node("LayerNormalization", [x, scale, bias], "ln", axis=-1, epsilon=LAYER_NORM_EPS)


def _embeddings(b: _Builder) -> str:
    word_table = b.weight("embeddings.word_embeddings.weight", [VOCAB, HIDDEN])
    words = b.node("Gather", [word_table, "input_ids"], "we")
    length = b.node(
        "Gather", [b.node("Shape", ["input_ids"], "shape"), b.constant("one", [1], "int")], "length"
    )
    positions = b.node(
        "Range",
        [
            b.node("Squeeze", [b.constant("zero", [0], "int")], "start"),
            b.node("Squeeze", [length], "stop"),
            b.node("Squeeze", [b.constant("step", [1], "int")], "delta"),
        ],
        "positions",
    )
    position_table = b.weight("embeddings.position_embeddings.weight", [POSITIONS, HIDDEN])
    type_table = b.weight("embeddings.token_type_embeddings.weight", [TOKEN_TYPES, HIDDEN])
    summed = b.node(
        "Add",
        [
            b.node("Add", [words, b.node("Gather", [position_table, positions], "pe")], "wp"),
            b.node("Gather", [type_table, "token_type_ids"], "te"),
        ],
        "emb",
    )
    return b.layer_norm(summed, "embeddings.LayerNorm")


def _attention_bias(b: _Builder) -> str:
    """0 where a token may be attended to, float32's lowest value where it is padding: [batch, 1, 1, seq]."""
    mask = b.node("Cast", ["attention_mask"], "mask", to=1)  # 1: FLOAT
    padding = b.node("Sub", [b.scalar("one", 1.0), mask], "padding")
    bias = b.node("Mul", [padding, b.scalar("lowest", -3.4028234663852886e38)], "bias")
    return b.node("Unsqueeze", [bias, b.constant("axes", [1, 2], "int")], "bias4")


def _layer(b: _Builder, x: str, index: int, bias: str) -> str:
    prefix = f"encoder.layer.{index}."
    head = HIDDEN // HEADS
    split = b.constant("heads", [0, 0, HEADS, head], "int")
    merge = b.constant("merge", [0, 0, HIDDEN], "int")

    def heads(name: str, perm: list[int]) -> str:
        projected = b.linear(x, prefix + f"attention.self.{name}", HIDDEN, HIDDEN)
        return b.node("Transpose", [b.node("Reshape", [projected, split], "split")], name, perm=perm)

    query, key, value = heads("query", [0, 2, 1, 3]), heads("key", [0, 2, 3, 1]), heads("value", [0, 2, 1, 3])
    scores = b.node("Div", [b.node("MatMul", [query, key], "qk"), b.scalar("sqrt_head", head**0.5)], "scores")
    weights = b.node("Softmax", [b.node("Add", [scores, bias], "masked")], "probs", axis=-1)
    context = b.node("MatMul", [weights, value], "context")
    merged = b.node("Reshape", [b.node("Transpose", [context], "ctx_t", perm=[0, 2, 1, 3]), merge], "merged")
    attended = b.linear(merged, prefix + "attention.output.dense", HIDDEN, HIDDEN)
    x = b.layer_norm(b.node("Add", [attended, x], "res1"), prefix + "attention.output.LayerNorm")
    inner = b.linear(x, prefix + "intermediate.dense", HIDDEN, INTERMEDIATE)
    # GELU as BERT defines it: x * (1 + erf(x / sqrt(2))) / 2.
    erf = b.node("Erf", [b.node("Div", [inner, b.scalar("sqrt2", 2.0**0.5)], "scaled")], "erf")
    doubled = b.node("Mul", [inner, b.node("Add", [erf, b.scalar("one", 1.0)], "erf1")], "g")
    gelu = b.node("Mul", [doubled, b.scalar("half", 0.5)], "gelu")
    out = b.linear(gelu, prefix + "output.dense", INTERMEDIATE, HIDDEN)
    return b.layer_norm(b.node("Add", [out, x], "res2"), prefix + "output.LayerNorm")


def build() -> Any:
    """The encoder as an ``onnx.ModelProto`` (weights external, named as in ``model.safetensors``)."""
    from onnx import TensorProto, helper

    b = _Builder()
    x = _embeddings(b)
    bias = _attention_bias(b)
    for index in range(LAYERS):
        x = _layer(b, x, index, bias)
    b.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="last_hidden_state"))
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", HIDDEN]
    )
    graph = helper.make_graph(
        b.nodes, "all-MiniLM-L6-v2", inputs, [output], initializer=[*b.constants, *b.weights]
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="recall-gui packaging/minilm_graph.py",
        doc_string="sentence-transformers/all-MiniLM-L6-v2 (BERT encoder), weights external",
    )
    model.ir_version = IR_VERSION
    return model


def serialized() -> bytes:
    data: bytes = build().SerializeToString(deterministic=True)
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only verify the file there is")
    args = parser.parse_args()
    data = serialized()
    if args.check:
        same = GRAPH.is_file() and GRAPH.read_bytes() == data
        said = "up to date" if same else "differs: run python packaging/minilm_graph.py"
        print(f"{GRAPH.relative_to(ROOT)}: {said}")
        return 0 if same else 1
    GRAPH.write_bytes(data)
    print(f"wrote {GRAPH.relative_to(ROOT)} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
