"""ONNXModel: an ONNX model read from bytes or a file, run as an ordinary webjax function."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from webjax._src import numpy as jnp
from webjax._src.onnx import protobuf as pb
from webjax._src.onnx import registry
from webjax._src.onnx.host import HostArray

# importing the operator modules fills registry.OPS
from webjax._src.onnx.ops import (  # noqa: F401
    attention,
    control_flow,
    detection,
    elementwise,
    linalg,
    loss,
    nn,
    quantization,
    reduction,
    rnn,
    sampling,
    sequence,
    shape,
    signal,
)

DEFAULT_DOMAINS = ("", "ai.onnx")


class GraphEvaluator:
    """Evaluates the nodes of one graph in order over an environment of named values (a scope:
    names it lacks are looked up in the enclosing graph's, as ONNX subgraphs see outer values)."""

    def __init__(self, model: ONNXModel, env: dict[str, Any], parent: GraphEvaluator | None):
        self.model = model
        self.env = env
        self.parent = parent
        self.base_dir = model.base_dir
        # attribute values of the function call being expanded (for ref_attr_name)
        self.call_attributes: dict[str, pb.AttributeProto] = (
            parent.call_attributes if parent else {}
        )
        self.opsets: dict[str, int] = parent.opsets if parent else model.opset_import

    def lookup(self, name: str) -> Any:
        if name == "":
            return None
        scope: GraphEvaluator | None = self
        while scope is not None:
            if name in scope.env:
                return scope.env[name]
            scope = scope.parent
        raise KeyError(f"webjax.onnx: value {name!r} is used before it is computed")

    def tensor_value(self, t: pb.TensorProto) -> HostArray:
        return t.value(self.base_dir)

    def run_nodes(self, nodes: list[pb.NodeProto]) -> None:
        for proto in nodes:
            self.run_node(proto)

    def run_node(self, proto: pb.NodeProto) -> None:
        domain = "" if proto.domain in DEFAULT_DOMAINS else proto.domain
        attributes = {}
        for name, a in proto.attributes.items():
            if a.ref_attr_name:
                if a.ref_attr_name in self.call_attributes:
                    attributes[name] = self.call_attributes[a.ref_attr_name]
                continue
            attributes[name] = a
        inputs = [self.lookup(n) for n in proto.inputs]
        function = self.model.functions.get((proto.domain, proto.op_type))
        if function is not None:
            outputs = self.call_function(function, inputs, attributes)
        else:
            impl = registry.OPS.get((domain, proto.op_type))
            opset = self.opsets.get(domain, self.opsets.get("ai.onnx", 0) if domain == "" else 0)
            if impl is None:
                where = f" of domain {proto.domain!r}" if domain else ""
                raise NotImplementedError(
                    f"webjax.onnx: operator {proto.op_type}{where} (opset {opset}) is not supported"
                )
            node = registry.Node(proto, opset, self, attributes)
            result = impl(node, *inputs)
            outputs = list(result) if isinstance(result, tuple) else [result]
        for name, value in zip(proto.outputs, outputs):
            if name:
                self.env[name] = value

    def call_function(
        self, f: pb.FunctionProto, inputs: list[Any], attributes: dict[str, pb.AttributeProto]
    ) -> list[Any]:
        env = {name: v for name, v in zip(f.inputs, inputs) if v is not None}
        inner = GraphEvaluator(self.model, env, None)
        inner.call_attributes = {**f.attribute_defaults, **attributes}
        inner.opsets = {**self.opsets, **f.opset_import}
        inner.run_nodes(f.nodes)
        return [inner.env.get(name) for name in f.outputs]

    def run_subgraph(self, graph: pb.GraphProto, inputs: list[Any]) -> list[Any]:
        env: dict[str, Any] = {}
        for t in graph.initializers:
            env[t.name] = self.tensor_value(t)
        for sparse in graph.sparse_initializers:
            env[sparse.values.name] = sparse.value(self.base_dir)
        for info, value in zip(graph.inputs, inputs):
            env[info.name] = value
        inner = GraphEvaluator(self.model, env, self)
        inner.run_nodes(graph.nodes)
        return [inner.lookup(o.name) for o in graph.outputs]


class ONNXModel:
    """An ONNX model (`ModelProto` bytes, or a path to a .onnx file) as a webjax function.

    `run(inputs)` (also `model(inputs)` or `model(**inputs)`) evaluates the graph with
    webjax.numpy/lax, so `jit`, `grad` and `vmap` apply to it; values known at trace time
    (initializers, shapes and what is computed from them) are kept on the host as `HostArray`s
    (pure Python, exact int64), so shape arithmetic stays concrete under `jit` (one trace per
    input shape). Inputs may be webjax arrays, NumPy arrays or nested lists. External tensor
    data is read from files beside the model (`base_dir`, the model's folder when it is given as
    a path).
    """

    def __init__(
        self,
        model: bytes | bytearray | memoryview | str | os.PathLike[str],
        base_dir: str | os.PathLike[str] | None = None,
    ):
        if isinstance(model, (str, os.PathLike)):
            path = os.fspath(model)
            with open(path, "rb") as fh:
                data = fh.read()
            if base_dir is None:
                base_dir = os.path.dirname(os.path.abspath(path))
        elif isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model)
        else:
            raise TypeError(
                f"ONNXModel: expected the model's bytes or a path, got {type(model).__name__}"
            )
        self.base_dir = base_dir
        self.proto = pb.ModelProto.parse(data)
        self.opset_import = dict(self.proto.opset_import)
        if "ai.onnx" in self.opset_import and "" not in self.opset_import:
            self.opset_import[""] = self.opset_import["ai.onnx"]
        self.opset_import.setdefault("", 1)
        self.functions = {(f.domain, f.name): f for f in self.proto.functions}
        graph = self.proto.graph
        self.initializers: dict[str, HostArray] = {}
        for t in graph.initializers:
            self.initializers[t.name] = t.value(base_dir)
        for s in graph.sparse_initializers:
            self.initializers[s.values.name] = s.value(base_dir)
        # inputs that are also initializers are optional overrides (IR < 4 lists them all)
        self.input_names = [i.name for i in graph.inputs if i.name not in self.initializers]
        self.output_names = [o.name for o in graph.outputs]
        self.input_types = {i.name: i.type for i in graph.inputs}
        self.output_types = {o.name: o.type for o in graph.outputs}

    @property
    def opset(self) -> int:
        """The model's ai.onnx opset version."""
        return self.opset_import[""]

    def run(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """The model's outputs (name -> webjax Array) for `inputs` (name -> array-like)."""
        missing = [n for n in self.input_names if n not in inputs]
        if missing:
            raise ValueError(
                f"ONNXModel.run: missing inputs {missing} (inputs: {self.input_names})"
            )
        known = set(self.input_names) | set(self.initializers)
        unknown = [n for n in inputs if n not in known]
        if unknown:
            raise ValueError(
                f"ONNXModel.run: unknown inputs {unknown} (inputs: {self.input_names})"
            )
        env: dict[str, Any] = dict(self.initializers)
        for name, value in inputs.items():
            env[name] = _as_value(value)
        evaluator = GraphEvaluator(self, env, None)
        evaluator.run_nodes(self.proto.graph.nodes)
        return {name: _as_output(evaluator.lookup(name)) for name in self.output_names}

    def __call__(self, inputs: Mapping[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
        return self.run({**(inputs or {}), **kwargs})

    def __repr__(self) -> str:
        return (
            f"ONNXModel(opset={self.opset}, inputs={self.input_names}, outputs={self.output_names})"
        )


def _as_value(value: Any) -> Any:
    if isinstance(value, list):  # an ONNX sequence
        return [_as_value(v) for v in value]
    if value is None:
        return None
    return jnp.asarray(value)


def _as_output(value: Any) -> Any:
    if isinstance(value, list):
        return [_as_output(v) for v in value]
    if value is None:
        return None
    return jnp.asarray(value)
