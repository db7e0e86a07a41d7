"""Wrapped functions: a callable plus a stack of transformations, each of which may leave an
auxiliary output in a store (the `jax.extend.linear_util` API libraries build tracers with).

`wrap_init(f)` wraps `f`; `transformation2(gen, fun, *static)` pushes `gen(inner, *static,
*args)` on top (it calls the inner function itself); `transformation_with_aux2` also hands `gen`
a `Store` to fill, read back through the returned thunk after the call. The generator-based
`transformation` / `transformation_with_aux` (a generator that yields the inner call's
arguments and receives its result) are the older spelling of the same thing.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple

from . import tree_util


class StoreException(Exception):
    pass


class _Empty:
    pass


_EMPTY = _Empty()


class Store:
    """A one-shot box for a transformation's auxiliary output."""

    __slots__ = ("_val",)

    def __init__(self) -> None:
        self._val: Any = _EMPTY

    def store(self, val: Any) -> None:
        if self._val is not _EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self) -> None:
        self._val = _EMPTY

    @property
    def val(self) -> Any:
        if self._val is _EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __bool__(self) -> bool:
        return self._val is not _EMPTY


class EqualStore(Store):
    """A store that may be filled again with an equal value (re-tracing stores the same)."""

    __slots__ = ()

    def store(self, val: Any) -> None:
        if self._val is not _EMPTY and self._val != val:
            raise StoreException(f"Store occupied with not-equal value: {self._val} vs {val}")
        self._val = val


class DebugInfo(NamedTuple):
    """What a traced function is, for error messages: what traced it, its name and source
    location, its flattened argument names and result paths (None when unknown)."""

    traced_for: str
    func_src_info: str
    arg_names: tuple[str, ...] | None
    result_paths: Any

    @property
    def func_name(self) -> str:
        return self.func_src_info.split(" ")[0] if self.func_src_info else "<unknown>"

    def replace_func_name(self, name: str) -> DebugInfo:
        rest = self.func_src_info.split(" ", 1)
        return self._replace(func_src_info=" ".join([name, *rest[1:]]))

    def safe_arg_names(self, expected_count: int) -> tuple[str, ...]:
        if self.arg_names is not None and len(self.arg_names) == expected_count:
            return self.arg_names
        return ("",) * expected_count

    def safe_result_paths(self, expected_count: int) -> tuple[str, ...]:
        paths = self.result_paths
        if isinstance(paths, tuple) and len(paths) == expected_count:
            return paths
        return ("",) * expected_count

    def with_unknown_names(self) -> DebugInfo:
        return self._replace(arg_names=None, result_paths=None)


def fun_name(f: Any, default: str = "<unnamed function>") -> str:
    while isinstance(f, functools.partial):
        f = f.func
    return getattr(f, "__name__", default)


def debug_info(
    traced_for: str,
    fun: Callable[..., Any],
    args: Any,
    kwargs: Any,
    *,
    static_argnums: Any = (),
    static_argnames: Any = (),
    result_paths_thunk: Any = None,
    sourceinfo: str | None = None,
    signature: Any = None,
) -> DebugInfo:
    """The DebugInfo of `fun` traced for `traced_for` (name and source location)."""
    del args, kwargs, static_argnums, static_argnames, signature
    if sourceinfo is None:
        code = getattr(getattr(fun, "__wrapped__", fun), "__code__", None)
        name = fun_name(fun)
        sourceinfo = f"{name} at {code.co_filename}:{code.co_firstlineno}" if code else name
    return DebugInfo(traced_for, sourceinfo, None, result_paths_thunk)


class WrappedFun:
    """A function `f` with transformations applied (`f_transformed` calls them, outermost
    first), the stores they fill, and keyword parameters bound by `wrap_init`."""

    __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "in_type", "debug_info")

    def __init__(
        self,
        f: Callable[..., Any],
        f_transformed: Callable[..., Any],
        transforms: tuple[tuple[Callable[..., Any], tuple[Hashable, ...]], ...],
        stores: tuple[Store | None, ...],
        params: tuple[tuple[str, Any], ...],
        in_type: Any,
        debug_info: DebugInfo | None,
    ) -> None:
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self) -> str:
        return fun_name(self.f, "<unnamed wrapped function>")

    def wrap(self, gen: Callable[..., Any], gen_static_args: tuple, out_store: Any) -> WrappedFun:
        """This function with one more transformation (`gen`) on top, filling `out_store`."""
        inner = self.f_transformed
        if out_store is None:
            outer = functools.partial(gen, inner, *gen_static_args)
        else:
            outer = functools.partial(gen, inner, out_store, *gen_static_args)
        return WrappedFun(
            self.f,
            outer,
            ((gen, gen_static_args), *self.transforms),
            (out_store, *self.stores),
            self.params,
            None,
            self.debug_info,
        )

    def populate_stores(self, stores: Any) -> None:
        for mine, theirs in zip(self.stores, stores, strict=True):
            if mine is not None:
                mine.store(theirs.val)

    def call_wrapped(self, *args: Any, **kwargs: Any) -> Any:
        return self.f_transformed(*args, **kwargs)

    def replace_debug_info(self, dbg: DebugInfo) -> WrappedFun:
        return WrappedFun(
            self.f,
            self.f_transformed,
            self.transforms,
            self.stores,
            self.params,
            self.in_type,
            dbg,
        )

    def with_unknown_names(self) -> WrappedFun:
        dbg = self.debug_info
        return self if dbg is None else self.replace_debug_info(dbg.with_unknown_names())

    def __repr__(self) -> str:
        stack = "\n".join(
            f"{i}   : {fun_name(g)}   {a}" for i, (g, a) in enumerate(self.transforms)
        )
        return f"Wrapped function:\n{stack}\nCore: {fun_name(self.f)}\n"

    def __hash__(self) -> int:
        return hash((self.f, self.transforms, self.params, self.in_type, self.debug_info))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, WrappedFun)
            and self.f == other.f
            and self.transforms == other.transforms
            and self.params == other.params
            and self.in_type == other.in_type
            and self.debug_info == other.debug_info
        )


def wrap_init(
    f: Callable[..., Any], params: dict[str, Any] | None = None, *, debug_info: Any = None
) -> WrappedFun:
    """`f` as a WrappedFun, called with the keyword `params` bound."""
    bound = {} if params is None else dict(params)
    if isinstance(debug_info, DebugInfo):
        debug_info = debug_info._replace(result_paths=None)
    return WrappedFun(
        f, functools.partial(f, **bound), (), (), tuple(sorted(bound.items())), None, debug_info
    )


def _curry(transform: Callable[..., Any]) -> Callable[..., Any]:
    """`transform(gen, fun, *static)`, also usable as a decorator of `gen`."""

    @functools.wraps(transform)
    def curried(gen: Callable[..., Any], *rest: Any, **kw: Any) -> Any:
        if rest:
            return transform(gen, *rest, **kw)
        return functools.partial(transform, gen)

    return curried


@_curry
def transformation2(gen: Callable[..., Any], fun: WrappedFun, *gen_static_args: Any) -> WrappedFun:
    return fun.wrap(gen, gen_static_args, None)


@_curry
def transformation_with_aux2(
    gen: Callable[..., Any],
    fun: WrappedFun,
    *gen_static_args: Any,
    use_eq_store: bool = False,
    unk_names: bool = False,
) -> tuple[WrappedFun, Callable[[], Any]]:
    store = EqualStore() if use_eq_store else Store()
    out = fun.wrap(gen, gen_static_args, store)
    return (out.with_unknown_names() if unk_names else out), (lambda: store.val)


def _run_generator(
    gen: Callable[..., Any], inner: Callable[..., Any], *args: Any, **kw: Any
) -> Any:
    coroutine = gen(*args, **kw)
    inner_args, inner_kwargs = next(coroutine)
    return coroutine.send(inner(*inner_args, **inner_kwargs))


@_curry
def transformation(gen: Callable[..., Any], fun: WrappedFun, *gen_static_args: Any) -> WrappedFun:
    """The generator spelling: `gen(*static, *args)` yields `(args, kwargs)` for the inner
    function and receives its result, then yields its own."""

    def step(inner: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        return _run_generator(gen, inner, *args, **kw)

    step.__name__ = fun_name(gen)
    return fun.wrap(step, gen_static_args, None)


@_curry
def transformation_with_aux(
    gen: Callable[..., Any], fun: WrappedFun, *gen_static_args: Any
) -> tuple[WrappedFun, Callable[[], Any]]:
    """The generator spelling with an auxiliary output: `gen` yields `(result, aux)`."""

    def step(inner: Callable[..., Any], store: Store, *args: Any, **kw: Any) -> Any:
        ans, aux = _run_generator(gen, inner, *args, **kw)
        store.store(aux)
        return ans

    step.__name__ = fun_name(gen)
    return transformation_with_aux2(step, fun, *gen_static_args)


def cache(call: Callable[..., Any], *, explain: Any = None) -> Callable[..., Any]:
    """Memoize `call(fun: WrappedFun, *args)` on the function, its transformations, params and
    the hashable `args`; a hit refills the stores the first call filled."""
    del explain
    caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def memoized(fun: WrappedFun, *args: Any) -> Any:
        table = caches.setdefault(fun.f, {})
        key = (fun.transforms, fun.params, fun.in_type, args)
        hit = table.get(key)
        if hit is not None:
            ans, stores = hit
            fun.populate_stores(stores)
            return ans
        ans = call(fun, *args)
        table[key] = (ans, fun.stores)
        return ans

    memoized.cache_clear = caches.clear  # type: ignore[attr-defined]
    memoized.evict_function = lambda f: caches.pop(f, None)  # type: ignore[attr-defined]
    return memoized


def merge_linear_aux(aux1: Callable[[], Any], aux2: Callable[[], Any]) -> tuple[bool, Any]:
    """Of two stores exactly one was filled: (True, its value) for the first, (False, ...)
    for the second."""
    try:
        out = aux1()
    except StoreException:
        try:
            return False, aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
    try:
        aux2()
    except StoreException:
        return True, out
    raise StoreException("both stores occupied")


# ---- flattening transformations (jax.api_util) ---------------------------------------------------
@transformation_with_aux2
def flatten_fun(f: Callable[..., Any], store: Store, in_tree: Any, *args_flat: Any) -> Any:
    """Call `f` on the (args, kwargs) pytree `in_tree` of the flat arguments; flatten its
    result, storing the output structure."""
    args, kwargs = tree_util.tree_unflatten(in_tree, args_flat)
    leaves, out_tree = tree_util.tree_flatten(f(*args, **kwargs))
    store.store(out_tree)
    return leaves


@transformation_with_aux2
def flatten_fun_nokwargs(f: Callable[..., Any], store: Store, in_tree: Any, *args_flat: Any) -> Any:
    """As `flatten_fun` for an `in_tree` of the positional arguments only."""
    leaves, out_tree = tree_util.tree_flatten(f(*tree_util.tree_unflatten(in_tree, args_flat)))
    store.store(out_tree)
    return leaves


def safe_map(f: Callable[..., Any], *args: Any) -> list[Any]:
    """`map` that insists every argument has the same length (JAX's ValueError otherwise)."""
    lists = [list(a) for a in args]
    n = len(lists[0])
    for i, xs in enumerate(lists[1:], start=2):
        if len(xs) != n:
            rel = "longer" if len(xs) > n else "shorter"
            raise ValueError(f"safe_map() argument {i} is {rel} than argument 1")
    return list(map(f, *lists))


def flatten_axes(
    name: str, treedef: Any, axis_tree: Any, *, kws: bool = False, tupled_args: bool = False
) -> list[Any]:
    """One axis spec per leaf of `treedef`, from `axis_tree`, a tree prefix of it (None is a
    leaf there: no axis)."""
    del tupled_args
    if kws:  # the positional args and keyword args of an (args, kwargs) tree
        axis_tree = (axis_tree, {})
    proxy = object()
    full = tree_util.tree_unflatten(treedef, [proxy] * treedef.num_leaves)
    out: list[Any] = []

    def add(ax: Any, sub: Any) -> Any:
        out.extend([ax] * tree_util.tree_structure(sub).num_leaves)
        return ax

    try:
        tree_util.tree_map(add, axis_tree, full, is_leaf=lambda x: x is None)
    except ValueError as e:
        raise ValueError(
            f"{name} specification must be a tree prefix of the corresponding value, got "
            f"specification {axis_tree} for value tree {treedef}. ({e})"
        ) from None
    return out


def argnums_partial(
    f: WrappedFun, dyn_argnums: int | Any, args: Any, require_static_args_hashable: bool = True
) -> tuple[WrappedFun, tuple[Any, ...]]:
    """`f` with the arguments not in `dyn_argnums` fixed to their values in `args`, and the
    dynamic arguments."""
    dyn = (dyn_argnums,) if isinstance(dyn_argnums, int) else tuple(dyn_argnums)
    dyn = tuple(sorted(d % len(args) for d in dyn))
    fixed = tuple((i, a) for i, a in enumerate(args) if i not in dyn)
    if require_static_args_hashable:
        for _, a in fixed:
            try:
                hash(a)
            except TypeError:
                raise ValueError(
                    f"Non-hashable static arguments are not supported. An error occurred while "
                    f"trying to hash an object of type {type(a)}, {a}."
                ) from None

    @transformation2
    def with_static(inner: Callable[..., Any], *dyn_args: Any) -> Any:
        full = dict(fixed)
        full.update(zip(dyn, dyn_args, strict=True))
        return inner(*(full[i] for i in range(len(args))))

    return with_static(f), tuple(args[i] for i in dyn)
