"""The tracing core: primitives, abstract values, traces and tracers.

Dispatch is context based, as in JAX today and Autodidax2: one *current trace* (a context
variable) receives every `bind`. The eval trace at the bottom runs primitives' `impl`; a
transformation installs its own trace for the duration of a call and lifts foreign values into
its tracers. The core knows nothing of kernels or devices: the layers above register rules.
"""

from __future__ import annotations

import builtins
import contextlib
import math
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import config as _config
from . import dtypes
from .dtypes import DType


# ---- errors (JAX's names) -------------------------------------------------------------------
class ConcretizationTypeError(TypeError):
    pass


class TracerBoolConversionError(ConcretizationTypeError):
    pass


class TracerIntegerConversionError(TypeError):
    pass


class TracerArrayConversionError(TypeError):
    pass


class UnexpectedTracerError(Exception):
    pass


class JaxRuntimeError(RuntimeError):
    """An error while a computation ran (a host callback raised): its message ends with the
    callback's traceback, as JAX's."""


class JAXIndexError(IndexError):
    pass


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask index whose value is traced (its result shape would depend on it)."""


# ---- abstract values ------------------------------------------------------------------------
class ShapedArray:
    """The abstract value of an array: shape, dtype and JAX's weak_type flag."""

    __slots__ = ("shape", "dtype", "weak_type")
    array_abstraction_level = 1

    def __init__(
        self,
        shape: Sequence[int],
        dtype: DType,
        weak_type: bool = False,
        *,
        sharding: Any = None,
        manual_axis_type: Any = None,
        memory_space: Any = None,
    ) -> None:
        # webjax keeps no shardings or memory spaces in types: those arguments are accepted
        # (programs pass an aval's own back) and the aval's `sharding` is the unsharded one.
        del sharding, manual_axis_type, memory_space
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtypes.dtype(dtype)
        self.weak_type = bool(weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def sharding(self) -> Any:
        """The unsharded NamedSharding over the empty mesh (JAX's aval sharding outside a
        mesh context)."""
        return None if unsharded is None else unsharded(self.ndim)

    def update(
        self, shape: Any = None, dtype: Any = None, weak_type: Any = None, **_: Any
    ) -> ShapedArray:
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is ShapedArray
            and self.shape == other.shape
            and self.dtype is other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    def str_short(self, short_dtypes: bool = False) -> str:
        """'float32[2,3]' ('f32[2,3]' with short_dtypes), as JAX's."""
        name = _SHORT.get(self.dtype.name, self.dtype.name) if short_dtypes else self.dtype.name
        return f"{name}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(False)}{weak})"

    def __str__(self) -> str:
        return ("~" if self.weak_type else "") + self.str_short(False)


_SHORT = {
    "complex64": "c64",
    "complex128": "c128",
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "bfloat16": "bf16",
    "int32": "i32",
    "int64": "i64",
    "int16": "i16",
    "int8": "i8",
    "uint32": "u32",
    "uint64": "u64",
    "uint16": "u16",
    "uint8": "u8",
    "bool": "bool",
}

# The sharding every aval reports (one for each rank), installed by the sharding layer.
unsharded: Callable[[int], Any] | None = None

# Maps Python/host types to functions giving their abstract value; the array layer adds its own.
pytype_aval_mappings: dict[type, Callable[[Any], ShapedArray]] = {}


def _scalar_aval(x: Any) -> ShapedArray:
    return ShapedArray((), dtypes.python_scalar_dtype(x), weak_type=type(x) is not builtins.bool)


for _t in (builtins.bool, builtins.int, builtins.float, builtins.complex):
    pytype_aval_mappings[_t] = _scalar_aval


def get_aval(x: Any) -> ShapedArray:
    if isinstance(x, Tracer):
        return x.aval
    fn = pytype_aval_mappings.get(type(x))
    if fn is not None:
        return fn(x)
    for t in type(x).__mro__[1:]:
        fn = pytype_aval_mappings.get(t)
        if fn is not None:
            return fn(x)
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    if type(x).__module__ == "numpy":
        return _host_aval(x)
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid JAX type")


def _host_aval(x: Any) -> ShapedArray:
    """The aval of the array a NumPy array or scalar becomes (as JAX: its dtype canonicalized,
    not weakly typed), read off without converting it."""
    name = getattr(getattr(x, "dtype", None), "name", None)
    if name not in dtypes.DType._by_name:
        raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid JAX type")
    return ShapedArray(tuple(x.shape), dtypes.canonicalize(dtypes.dtype(name)))


# Turns a NumPy array or scalar into an Array (the dispatch layer installs `to_array`): JAX's
# primitives accept NumPy operands, so `lax.add(np.ones(3), 1.0)` works as it does there.
lift_host_value: Callable[[Any], Any] | None = None


def _lift_host_values(args: Sequence[Any]) -> tuple[Any, ...]:
    if lift_host_value is None:
        raise RuntimeError("the array layer is not imported: import webjax first")
    return tuple(lift_host_value(a) if type(a).__module__ == "numpy" else a for a in args)


def is_valid_jaxtype(x: Any) -> bool:
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


# ---- primitives -----------------------------------------------------------------------------
class Primitive:
    """A named operation. Rules live in tables keyed by the primitive (see the interpreters)."""

    multiple_results = False
    call_primitive = False
    map_primitive = False
    # Set once its abstract evaluation reported side effects: staging never drops it then.
    effectful = False

    def __init__(self, name: str) -> None:
        self.name = name
        self.impl: Callable[..., Any] | None = None
        self.abstract_eval: Callable[..., Any] | None = None

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args: Any, **params: Any) -> Any:
        for a in args:
            if type(a).__module__ == "numpy":
                args = _lift_host_values(args)
                break
        return find_cur_trace().process_primitive(self, args, params)

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        self.impl = impl
        return impl

    def def_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.abstract_eval = rule
        return rule

    def def_effectful_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """A shape rule giving `(avals, effects)`: a primitive with effects is never dropped
        from a jaxpr (webjax runs effects in program order and tracks no effect types)."""

        def abstract_eval(*avals: Any, **params: Any) -> Any:
            out, effects = rule(*avals, **params)
            if effects:
                self.effectful = True
            return out

        self.abstract_eval = abstract_eval
        return rule

    def bind_with_trace(self, trace: Trace, args: Sequence[Any], params: dict) -> Any:
        return trace.process_primitive(self, args, params)

    def is_effectful(self, params: dict) -> bool:
        return self.effectful

    def impl_or_raise(self) -> Callable[..., Any]:
        if self.impl is None:
            raise NotImplementedError(f"primitive '{self.name}' has no evaluation rule yet")
        return self.impl


class CompositePrimitive(Primitive):
    """A primitive of JAX's that webjax builds from others: binding it applies `decompose` (to
    the operands and params JAX's primitive takes) in the current trace, so it evaluates, traces,
    differentiates and batches as its decomposition does. A jaxpr shows the decomposition's
    equations; rules registered for the primitive itself are not consulted."""

    def __init__(self, name: str, decompose: Callable[..., Any], multiple_results: bool = False):
        super().__init__(name)
        self.multiple_results = multiple_results
        self.decompose = decompose
        self.impl = decompose

    def bind(self, *args: Any, **params: Any) -> Any:
        for a in args:
            if type(a).__module__ == "numpy":
                args = _lift_host_values(args)
                break
        out = self.decompose(*args, **params)
        return list(out) if self.multiple_results else out


# ---- traces ---------------------------------------------------------------------------------
class Trace:
    """Receives primitive applications while it is the current trace."""

    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        raise NotImplementedError


class EvalTrace(Trace):
    """The bottom trace: evaluate primitives on concrete values."""

    def process_primitive(self, primitive: Primitive, args: Sequence[Any], params: dict) -> Any:
        for a in args:
            if isinstance(a, Tracer):
                raise UnexpectedTracerError(
                    f"Encountered an unexpected tracer ({a.aval.str_short(True)}) outside the "
                    f"transformation that created it, while evaluating '{primitive.name}'. "
                    "A traced value leaked out of a jit, grad or vmap scope."
                )
        out = primitive.impl_or_raise()(*args, **params)
        if _config.check_special():
            check_outputs[0](primitive, out)
        return out


# jax_debug_nans / jax_debug_infs: the check of an eager application's outputs (dispatch
# installs it: it raises FloatingPointError naming the primitive).
check_outputs: list[Callable[[Primitive, Any], None]] = [lambda prim, out: None]
eval_trace = EvalTrace()
_current_trace: list[Trace] = [eval_trace]


def find_cur_trace() -> Trace:
    return _current_trace[-1]


@contextlib.contextmanager
def set_current_trace(trace: Trace) -> Iterator[None]:
    _current_trace.append(trace)
    try:
        yield
    finally:
        _current_trace.pop()


@contextlib.contextmanager
def eval_context() -> Iterator[None]:
    """Operations inside run eagerly (on concrete values), even while tracing: JAX's
    `jax.core.eval_context` (operations on traced values fail)."""
    with set_current_trace(eval_trace):
        yield


# Whether staging traces evaluate applications whose operands are all concrete at once.
_constant_folding: list[bool] = [False]


def constant_folding() -> bool:
    return _constant_folding[-1]


@contextlib.contextmanager
def eager_constant_folding() -> Iterator[None]:
    """JAX's `ensure_compile_time_eval`: while tracing, operations on concrete values run at
    once (their results are concrete arrays); operations on traced values are staged as
    usual."""
    _constant_folding.append(True)
    try:
        yield
    finally:
        _constant_folding.pop()


class Tracer:
    """A value standing for an array inside a transformation. Subclasses set `aval`."""

    __array_priority__ = 1000
    __slots__ = ("_trace",)
    aval: ShapedArray

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> DType:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def size(self) -> int:
        return self.aval.size

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def to_concrete_value(self) -> Any:
        """The concrete value this tracer stands for, when known (e.g. a jvp primal)."""
        return None

    def __bool__(self) -> bool:
        v = self.to_concrete_value()
        if v is not None:
            return bool(v)
        raise TracerBoolConversionError(
            f"Attempted boolean conversion of traced array with shape {self.aval.str_short(False)}."
            "\nThe truth value of a traced value depends on its runtime value; use jax.lax.cond "
            "or jnp.where for value-dependent control flow.\nSee "
            "https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError"
        )

    def _concrete_error(self, detail: str, exc: type = ConcretizationTypeError) -> Exception:
        return exc(
            "Abstract tracer value encountered where concrete value is expected: traced array "
            f"with shape {self.aval.str_short(False)}\n{detail}"
        )

    def _conversion_error(self, fn: str) -> Exception:
        return self._concrete_error(
            f"The problem arose with the `{fn}` function. If trying to convert the data type of a "
            f"value, try using `x.astype({fn})` or `jnp.array(x, {fn})` instead."
        )

    def __int__(self) -> int:
        v = self.to_concrete_value()
        if v is not None:
            return int(v)
        raise self._conversion_error("int")

    def __float__(self) -> float:
        v = self.to_concrete_value()
        if v is not None:
            return float(v)
        raise self._conversion_error("float")

    def __complex__(self) -> complex:
        v = self.to_concrete_value()
        if v is not None:
            return complex(v)
        raise self._conversion_error("complex")

    def __index__(self) -> int:
        v = self.to_concrete_value()
        if v is not None:
            return operator.index(v)
        raise TracerIntegerConversionError(
            "The __index__() method was called on traced array with shape "
            f"{self.aval.str_short(False)}\nSee "
            "https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerIntegerConversionError"
        )

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TracerArrayConversionError(
            "The numpy.ndarray conversion method __array__() was called on traced array with "
            f"shape {self.aval.str_short(False)}\nSee "
            "https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerArrayConversionError"
        )

    def tolist(self) -> Any:
        raise self._concrete_error(
            f"The tolist() method was called on traced array with shape "
            f"{self.aval.str_short(False)}."
        )

    def item(self, *args: Any) -> Any:
        raise self._concrete_error("This occurred in the item() method of jax.Array")

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: {type(self).__name__}")

    def __iter__(self) -> Iterator[Any]:
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))  # type: ignore[index]


def to_concrete(x: Any) -> Any:
    """`x` itself if concrete, the value a tracer stands for if known, else None."""
    if isinstance(x, Tracer):
        return x.to_concrete_value()
    return x


def concrete_or_error(fn: Callable[[Any], Any], x: Any, context: str = "") -> Any:
    """Apply `fn` to a concrete value, or raise JAX's ConcretizationTypeError for a tracer."""
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        if v is not None:
            return fn(v)
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {context}"
        )
    return fn(x)


def canonicalize_shape(shape: Any, context: str = "") -> tuple[int, ...]:
    if isinstance(shape, (int,)) or (hasattr(shape, "__index__") and not hasattr(shape, "__len__")):
        shape = (shape,)
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
            + (f" {context}" if context else "")
        ) from None
    if any(d < 0 for d in out):
        raise ValueError(f"negative dimensions are not allowed, got shape {out}")
    return out


# ---- jaxprs -----------------------------------------------------------------------------------
class Var:
    """A jaxpr variable. Names are assigned when printing."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var({self.aval.str_short(True)})"


class Literal:
    """A constant inlined into a jaxpr (scalars print as `2.0:f32[]`)."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray) -> None:
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.val!r})"


Atom = Var | Literal


class JaxprEqn:
    __slots__ = ("primitive", "invars", "outvars", "params")

    def __init__(
        self, primitive: Primitive, invars: list[Atom], outvars: list[Var], params: dict[str, Any]
    ) -> None:
        self.primitive = primitive
        self.invars = invars
        self.outvars = outvars
        self.params = params

    def __repr__(self) -> str:
        return f"JaxprEqn({self.primitive.name})"


class Jaxpr:
    __slots__ = ("constvars", "invars", "outvars", "eqns")

    def __init__(
        self, constvars: list[Var], invars: list[Var], outvars: list[Atom], eqns: list[JaxprEqn]
    ) -> None:
        self.constvars = constvars
        self.invars = invars
        self.outvars = outvars
        self.eqns = eqns

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __repr__(self) -> str:
        return pp_jaxpr(self)

    __str__ = __repr__


class ClosedJaxpr:
    """A jaxpr with values for its constvars."""

    __slots__ = ("jaxpr", "consts")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]) -> None:
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> list[JaxprEqn]:
        return self.jaxpr.eqns

    def __repr__(self) -> str:
        return pp_jaxpr(self.jaxpr)

    __str__ = __repr__

    def pretty_print(self, **_: Any) -> str:
        return pp_jaxpr(self.jaxpr)


def jaxprs_in_params(params: dict[str, Any]) -> Iterator[Jaxpr]:
    """The jaxprs held by an equation's params (closed ones opened, tuples of them walked)."""
    for v in params.values():
        for x in v if isinstance(v, (tuple, list)) else (v,):
            if isinstance(x, ClosedJaxpr):
                yield x.jaxpr
            elif isinstance(x, Jaxpr):
                yield x


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Evaluate `jaxpr` by binding its primitives in the current trace."""
    env: dict[Var, Any] = {}

    def read(x: Atom) -> Any:
        return x.val if isinstance(x, Literal) else env[x]

    for v, val in zip(jaxpr.constvars, consts, strict=True):
        env[v] = val
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    for v, val in zip(jaxpr.invars, args, strict=True):
        env[v] = val
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, val in zip(eqn.outvars, outs, strict=True):
            env[v] = val
    return [read(v) for v in jaxpr.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)


class JaxprTypeError(TypeError):
    pass


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Type-check: every variable defined once before use, every eqn's avals agree with its
    primitive's abstract evaluation."""
    defined: set[int] = set()

    def use(x: Atom) -> ShapedArray:
        if isinstance(x, Var) and id(x) not in defined:
            raise JaxprTypeError(f"Variable {x} used before it is defined")
        return x.aval

    for v in [*jaxpr.constvars, *jaxpr.invars]:
        if id(v) in defined:
            raise JaxprTypeError(f"Variable {v} bound twice")
        defined.add(id(v))
    for eqn in jaxpr.eqns:
        in_avals = [use(x) for x in eqn.invars]
        rule = eqn.primitive.abstract_eval
        if rule is not None:
            out = rule(*in_avals, **eqn.params)
            outs = out if eqn.primitive.multiple_results else [out]
            got = [v.aval for v in eqn.outvars]
            if [(a.shape, a.dtype) for a in outs] != [(a.shape, a.dtype) for a in got]:
                raise JaxprTypeError(
                    f"{eqn.primitive.name}: output types {got} do not match abstract evaluation "
                    f"{outs}"
                )
        for v in eqn.outvars:
            if id(v) in defined:
                raise JaxprTypeError(f"Variable {v} bound twice")
            defined.add(id(v))
    for x in jaxpr.outvars:
        use(x)


# ---- printing -----------------------------------------------------------------------------------
class _Names:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def __call__(self, v: Var) -> str:
        n = self.names.get(id(v))
        if n is None:
            n = self.names[id(v)] = _var_name(len(self.names))
        return n


def _var_name(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(97 + r) + s
    return s


def _pp_atom(x: Atom, names: _Names) -> str:
    if isinstance(x, Literal):
        v = x.val
        if hasattr(v, "_literal_value"):
            v = v._literal_value()
        if x.aval.dtype.kind == "f":
            text = repr(float(v)) if v == v and abs(v) != math.inf else str(float(v))
        elif x.aval.dtype.kind == "b":
            text = str(bool(v))
        else:
            text = str(int(v))
        return f"{text}:{x.aval.str_short(True)}"
    return names(x)


def _pp_param(v: Any, names: _Names, indent: int) -> str:
    if isinstance(v, ClosedJaxpr):
        v = v.jaxpr
    if isinstance(v, Jaxpr):
        return _pp_jaxpr(v, names, indent + 2)
    if isinstance(v, tuple) and v and all(isinstance(b, (Jaxpr, ClosedJaxpr)) for b in v):
        pad = " " * (indent + 4)
        inner = "\n".join(pad + _pp_param(b, names, indent + 4) for b in v)
        return "(\n" + inner + "\n" + " " * (indent + 2) + ")"
    if isinstance(v, DType):
        return v.name
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return str(v)


# Params JAX does not print (kept for the interpreters).
_HIDDEN_PARAMS = frozenset({"linear", "_split_transpose", "jvp_jaxpr_fun", "num_res"})


def _pp_jaxpr(jaxpr: Jaxpr, names: _Names, indent: int) -> str:
    pad = " " * (indent + 4)
    consts = " ".join(f"{names(v)}:{v.aval.str_short(True)}" for v in jaxpr.constvars)
    ins = " ".join(f"{names(v)}:{v.aval.str_short(True)}" for v in jaxpr.invars)
    lines = []
    for eqn in jaxpr.eqns:
        lhs = " ".join(
            f"{names(v)}:{v.aval.str_short(True)}"
            if not isinstance(v, _DropVar)
            else f"_:{v.aval.str_short(True)}"
            for v in eqn.outvars
        )
        params = sorted(eqn.params.items(), key=lambda kv: (kv[0] != "name", kv[0]))
        params = [(k, v) for k, v in params if k not in _HIDDEN_PARAMS]
        rhs_args = " ".join(_pp_atom(x, names) for x in eqn.invars)
        if not params:
            lines.append(f"{pad}{lhs} = {eqn.primitive.name} {rhs_args}".rstrip())
            continue
        rendered = [(k, _pp_param(v, names, indent + 4)) for k, v in params]
        if any("\n" in r for _, r in rendered):
            body = "\n".join(f"{pad}  {k}={r}" for k, r in rendered)
            lines.append(f"{pad}{lhs} = {eqn.primitive.name}[\n{body}\n{pad}] {rhs_args}")
        else:
            ps = " ".join(f"{k}={r}" for k, r in rendered)
            lines.append(f"{pad}{lhs} = {eqn.primitive.name}[{ps}] {rhs_args}")
    outs = ", ".join(_pp_atom(x, names) for x in jaxpr.outvars)
    outs = f"({outs},)" if len(jaxpr.outvars) == 1 else f"({outs})"
    head = "{ lambda " + consts + "; " + ins + ". let"
    if not lines:
        return head + f"\n{' ' * (indent + 2)}in {outs} }}"
    if len(lines) == 1 and "\n" not in lines[0]:
        one_line = head + " " + lines[0].strip() + f" in {outs} }}"
        if indent + len(one_line) <= 80:  # JAX's printer width
            return one_line
    return head + "\n" + "\n".join(lines) + f"\n{' ' * (indent + 2)}in {outs} }}"


class _DropVar(Var):
    """An output nobody reads (printed `_`)."""


def pp_jaxpr(jaxpr: Jaxpr) -> str:
    return _pp_jaxpr(jaxpr, _Names(), 0)
