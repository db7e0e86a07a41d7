"""The operator table of webjax.onnx and what an operator implementation is handed.

An operator is a function `impl(node, *inputs)` returning one value or a tuple of values (a
list is one value, an ONNX sequence); `node`
is a `Node` (its attributes, the opset it is read at, subgraph evaluation). Values are
`host.HostArray`s while they are known at trace time (initializers, constants, shapes and what
is computed from them only) and webjax arrays otherwise, so shape arithmetic stays concrete
under jit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from webjax._src import core
from webjax._src.onnx import protobuf as pb
from webjax._src.onnx.host import HostArray, asarray

OpImpl = Callable[..., Any]
OPS: dict[tuple[str, str], OpImpl] = {}


def op(*names: str, domain: str = "") -> Callable[[OpImpl], OpImpl]:
    """Register `impl` as the ONNX operators `names` (of `domain`; "" is ai.onnx)."""

    def register(impl: OpImpl) -> OpImpl:
        for name in names:
            OPS[(domain, name)] = impl
        return impl

    return register


_MISSING = object()


class Node:
    """One node being evaluated: its attributes, opset, and a way to run its subgraphs."""

    def __init__(self, proto: pb.NodeProto, opset: int, evaluator: Any, attributes: dict):
        self.proto = proto
        self.op_type = proto.op_type
        self.opset = opset
        self.evaluator = evaluator  # model.GraphEvaluator running this node
        self.attributes = attributes

    def attr(self, name: str, default: Any = _MISSING) -> Any:
        a = self.attributes.get(name)
        if a is None:
            if default is _MISSING:
                raise ValueError(f"ONNX {self.op_type}: required attribute {name!r} is missing")
            return default
        if a.type == pb.ATTR_TENSOR:
            return self.evaluator.tensor_value(a.value)
        if a.type == pb.ATTR_TENSORS:
            return [self.evaluator.tensor_value(t) for t in a.value]
        if a.type == pb.ATTR_SPARSE_TENSOR:
            return a.value.value(self.evaluator.base_dir)
        return a.value

    def has(self, name: str) -> bool:
        return name in self.attributes

    def unsupported(self, what: str) -> NotImplementedError:
        return NotImplementedError(
            f"webjax.onnx: {self.op_type} (opset {self.opset}) with {what} is not supported"
        )

    def run_graph(self, graph: pb.GraphProto, inputs: list[Any]) -> list[Any]:
        return self.evaluator.run_subgraph(graph, inputs)


def is_host(*values: Any) -> bool:
    """True when every value is known at trace time (a HostArray, or None)."""
    return all(v is None or isinstance(v, HostArray) for v in values)


def static(node: Node, value: Any, what: str) -> HostArray:
    """A value the operator needs at trace time (a shape, axes, pads, ...), as a HostArray."""
    if isinstance(value, HostArray):
        return value
    if isinstance(value, core.Tracer):
        raise NotImplementedError(
            f"webjax.onnx: {node.op_type} (opset {node.opset}) needs its {what} at trace time, "
            "but it is computed from a traced input; pass that input as a constant (outside jit) "
            "or compute it from shapes and initializers only"
        )
    return asarray(value)
