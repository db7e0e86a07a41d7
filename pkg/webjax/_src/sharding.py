"""Meshes, partition specs and shardings, for webjax's world of one device per platform.

A `Mesh` is an n-d array of real devices with named axes; webjax has one device per platform, so
every mesh of devices has axes of size 1 (a mesh naming more devices than exist cannot be made
by `make_mesh`, as in JAX). A `NamedSharding(mesh, P(...))` says which mesh axes split which array
dimension; on axes of size 1 every shard is the whole array, so arrays placed with any sharding
hold the same values as unsharded ones, and programs written for a cluster run unchanged. The
mesh context (`set_mesh`, `use_abstract_mesh`) is what `shard_map`, `device_put(x, P(...))`,
`jit(in_shardings=P(...))` and `with_sharding_constraint` read when given bare specs.
"""

from __future__ import annotations

import contextlib
import enum
import math
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

from .runtime import backend as rt
from .runtime.backend import Device


class AxisType(enum.Enum):
    """How a mesh axis is partitioned: by the compiler (Auto), in the types (Explicit), or by
    the user inside shard_map (Manual)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


class _Unconstrained:
    def __repr__(self) -> str:
        return "UNCONSTRAINED"


class DuplicateSpecError(Exception):
    """A spec maps one mesh axis to two array dimensions."""


def _canonical_partition(p: Any) -> Any:
    if isinstance(p, list):
        return tuple(p)
    return p


class PartitionSpec:
    """For each array dimension, the mesh axis (a name, a tuple of names, or None for none)
    that splits it. Dimensions past the spec's length are not split."""

    UNCONSTRAINED = _Unconstrained()
    __slots__ = ("_partitions", "unreduced", "reduced")

    def __init__(
        self, *partitions: Any, unreduced: Any = frozenset(), reduced: Any = frozenset()
    ) -> None:
        self._partitions = tuple(_canonical_partition(p) for p in partitions)
        self.unreduced = frozenset(unreduced)
        self.reduced = frozenset(reduced)

    def __len__(self) -> int:
        return len(self._partitions)

    def __getitem__(self, i: Any) -> Any:
        return self._partitions[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._partitions)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartitionSpec):
            return False
        return (self._partitions, self.unreduced, self.reduced) == (
            other._partitions,
            other.unreduced,
            other.reduced,
        )

    def __hash__(self) -> int:
        return hash((self._partitions, self.unreduced, self.reduced))

    def __add__(self, other: Any) -> PartitionSpec:
        return PartitionSpec(*self._partitions, *tuple(other))

    def __repr__(self) -> str:
        parts = [repr(p) for p in self._partitions]
        body = ", ".join(parts) + ("," if len(parts) == 1 else "")
        if self.unreduced:
            body += f", unreduced={set(self.unreduced)!r}"
        if self.reduced:
            body += f", reduced={set(self.reduced)!r}"
        return f"P({body})"

    __str__ = __repr__

    def _axis_names(self) -> list[Any]:
        """Every mesh axis the spec names, in order (with repeats)."""
        out: list[Any] = []
        for p in self._partitions:
            if p is None or p is PartitionSpec.UNCONSTRAINED:
                continue
            out.extend(p if isinstance(p, tuple) else (p,))
        return out


P = PartitionSpec


# ---- meshes -------------------------------------------------------------------------------------
def _axis_types(names: tuple[Any, ...], types: Any, default: AxisType) -> tuple[AxisType, ...]:
    if types is None:
        return (default,) * len(names)
    if isinstance(types, AxisType):
        types = (types,)
    types = tuple(types)
    if len(types) != len(names):
        raise ValueError(
            "Number of axis names should match the number of axis_types. Got "
            f"axis_names={names} and axis_types={types}"
        )
    return types


def _names(axis_names: Any) -> tuple[Any, ...]:
    return (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)


class BaseMesh:
    axis_names: tuple[Any, ...]
    axis_sizes: tuple[int, ...]
    axis_types: tuple[AxisType, ...]

    @property
    def shape(self) -> OrderedDict[Any, int]:
        return OrderedDict(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def shape_tuple(self) -> tuple[tuple[Any, int], ...]:
        return tuple(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        return not self.axis_names

    def _axes_str(self) -> str:
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple)
        return f"{axes}, axis_types={self.axis_types}"

    def _name_to_type(self) -> dict[Any, AxisType]:
        return dict(zip(self.axis_names, self.axis_types, strict=True))

    @property
    def auto_axes(self) -> tuple[Any, ...]:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is AxisType.Auto)

    @property
    def explicit_axes(self) -> tuple[Any, ...]:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is AxisType.Explicit)

    @property
    def manual_axes(self) -> tuple[Any, ...]:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is AxisType.Manual)


def _device_grid(devices: Any) -> tuple[tuple[int, ...], list[Any]]:
    """The shape and row-major flat list of a NumPy array or nested sequence of devices."""
    shape = getattr(devices, "shape", None)
    if shape is not None and hasattr(devices, "flat"):
        return tuple(int(s) for s in shape), list(devices.flat)
    dims: list[int] = []
    level: Any = devices
    while isinstance(level, (list, tuple)):
        dims.append(len(level))
        if not level:
            break
        level = level[0]
    flat: list[Any] = []

    def walk(x: Any, depth: int) -> None:
        if depth == len(dims):
            flat.append(x)
            return
        if not isinstance(x, (list, tuple)) or len(x) != dims[depth]:
            raise ValueError("Mesh devices must form a rectangular array")
        for y in x:
            walk(y, depth + 1)

    walk(devices, 0)
    return tuple(dims), flat


def _object_array(shape: tuple[int, ...], flat: list[Any]) -> Any:
    """`flat` as an array of `shape`: a NumPy object array where NumPy exists, else nested
    lists."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover (Pyodide without numpy)
        out: Any = list(flat)
        for s in reversed(shape[1:]):
            out = [out[i : i + s] for i in range(0, len(out), s)]
        return out
    arr = np.empty(len(flat), dtype=object)
    for i, d in enumerate(flat):
        arr[i] = d
    return arr.reshape(shape)


class Mesh(BaseMesh, contextlib.ContextDecorator):
    """An n-d array of devices with named axes."""

    def __init__(self, devices: Any, axis_names: Any, axis_types: Any = None) -> None:
        shape, flat = _device_grid(devices)
        names = _names(axis_names)
        if not names and shape == (0,):  # the empty mesh
            shape, flat = (), []
        if len(shape) != len(names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal the length of "
                f"its second argument (`axis_names`), but got devices.ndim == {len(shape)} and "
                f"len(axis_names) == {len(names)}."
            )
        self._flat = tuple(flat)
        self.axis_names = names
        self.axis_sizes = shape
        self.axis_types = _axis_types(names, axis_types, AxisType.Auto)

    @property
    def devices(self) -> Any:
        return _object_array(self.axis_sizes, list(self._flat))

    @property
    def device_ids(self) -> Any:
        return _int_array(self.axis_sizes, [d.id for d in self._flat])

    @property
    def local_devices(self) -> list[Any]:
        return [d for d in self._flat if getattr(d, "process_index", 0) == 0]

    @property
    def local_mesh(self) -> Mesh:
        return self

    @property
    def is_multi_process(self) -> bool:
        return False

    @property
    def abstract_mesh(self) -> AbstractMesh:
        platform = self._flat[0].platform if self._flat else None
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types, _platform=platform)

    def _key(self) -> tuple[Any, ...]:
        return (self._flat, self.axis_names, self.axis_sizes, self.axis_types)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (
            f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
            f"axis_types={self.axis_types})"
        )

    def __str__(self) -> str:
        if self.empty:
            return "Mesh()"
        return f"Mesh({self._axes_str()})"

    # `with mesh:` is the legacy resource context: it names the mesh for bare specs in
    # jit/with_sharding_constraint but does not set `get_mesh()` (JAX's behaviour).
    def __enter__(self) -> Mesh:
        _LEGACY.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _LEGACY.pop()


def _int_array(shape: tuple[int, ...], flat: list[int]) -> Any:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover (Pyodide without numpy)
        return _object_array(shape, flat)
    return np.asarray(flat, dtype=np.int64).reshape(shape)


class AbstractMesh(BaseMesh):
    """A mesh's axis names, sizes and types, without devices."""

    def __init__(
        self,
        axis_sizes: Sequence[int],
        axis_names: Any,
        axis_types: Any = None,
        *,
        _platform: str | None = None,
    ) -> None:
        names = _names(axis_names)
        sizes = tuple(int(s) for s in axis_sizes)
        if len(sizes) != len(names):
            raise ValueError(
                f"Length of axis names and axis sizes must match. Got axis_sizes={sizes} and "
                f"axis_names={names}"
            )
        self.axis_names = names
        self.axis_sizes = sizes
        self.axis_types = _axis_types(names, axis_types, AxisType.Auto)
        self._platform = _platform

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return self

    def _key(self) -> tuple[Any, ...]:
        return (self.axis_names, self.axis_sizes, self.axis_types, self._platform)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        if self.empty:
            return "AbstractMesh((), axis_types=())"
        extra = ""
        if self._platform is not None:
            extra = f", device_kind={self._platform}, num_cores=None, platform={self._platform}"
        return f"AbstractMesh({self._axes_str()}{extra})"

    __str__ = __repr__


def make_mesh(
    axis_shapes: Sequence[int],
    axis_names: Sequence[Any],
    axis_types: Any = None,
    *,
    devices: Sequence[Any] | None = None,
) -> Mesh:
    """A mesh of `axis_shapes` over the first devices of the default backend (or `devices`);
    axes are Explicit unless `axis_types` says otherwise."""
    shape = tuple(int(s) for s in axis_shapes)
    names = _names(axis_names)
    if devices is None:
        devices = [rt.device(rt.default_platform())]
    devices = list(devices)
    n = math.prod(shape)
    if len(devices) < n:
        raise ValueError(
            f"Number of devices {len(devices)} must be >= the product of mesh_shape {shape}"
        )
    if len(shape) != len(names):
        raise ValueError(
            "Mesh requires the ndim of its first argument (`devices`) to equal the length of its "
            f"second argument (`axis_names`), but got devices.ndim == {len(shape)} and "
            f"len(axis_names) == {len(names)}."
        )
    types = _axis_types(names, axis_types, AxisType.Explicit)
    grid: Any = devices[:n]
    for s in reversed(shape[1:]):
        grid = [grid[i : i + s] for i in range(0, len(grid), s)]
    return Mesh(grid, names, types)


# ---- the mesh context ---------------------------------------------------------------------------
_EMPTY_MESH = Mesh([], ())
_EMPTY_ABSTRACT = AbstractMesh((), ())
_CONCRETE: list[Mesh] = []  # set_mesh's stack (the bottom entry is the global setting)
_ABSTRACT: list[AbstractMesh] = []  # use_abstract_mesh's stack
_LEGACY: list[Mesh] = []  # `with mesh:`


def get_mesh() -> Mesh:
    """The mesh set by `set_mesh` (an empty Mesh when none is)."""
    return _CONCRETE[-1] if _CONCRETE else _EMPTY_MESH


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh in context (an empty AbstractMesh when none is)."""
    if _ABSTRACT:
        return _ABSTRACT[-1]
    if _CONCRETE:
        return _CONCRETE[-1].abstract_mesh
    return _EMPTY_ABSTRACT


def context_mesh() -> Mesh | AbstractMesh | None:
    """The mesh bare specs refer to: `set_mesh`'s, else `use_abstract_mesh`'s, else
    `with mesh:`'s; None when there is none."""
    if _CONCRETE and not _CONCRETE[-1].empty:
        return _CONCRETE[-1]
    if _ABSTRACT and not _ABSTRACT[-1].empty:
        return _ABSTRACT[-1]
    if _LEGACY:
        return _LEGACY[-1]
    return None


class set_mesh:
    """Set the mesh for the rest of the program, or, used with `with`, until the block ends."""

    def __init__(self, mesh: Mesh | None) -> None:
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
        self._prev = list(_CONCRETE)
        _CONCRETE[:] = [] if mesh is None else [mesh]

    def __enter__(self) -> set_mesh:
        return self

    def __exit__(self, *exc: Any) -> None:
        _CONCRETE[:] = self._prev


@contextlib.contextmanager
def use_abstract_mesh(mesh: AbstractMesh) -> Iterator[None]:
    if not isinstance(mesh, AbstractMesh):
        raise ValueError(f"Expected mesh of type `jax.sharding.AbstractMesh`. Got {type(mesh)}")
    _ABSTRACT.append(mesh)
    try:
        yield
    finally:
        _ABSTRACT.pop()


# ---- shardings ----------------------------------------------------------------------------------
def _index_all(ndim: int) -> tuple[slice, ...]:
    return (slice(None),) * ndim


class Sharding:
    """How an array's elements are laid out over devices."""

    @property
    def device_set(self) -> set[Any]:
        raise NotImplementedError(f"{type(self).__name__}.device_set")

    @property
    def memory_kind(self) -> str | None:
        return "device"

    @property
    def num_devices(self) -> int:
        return len(self.device_set)

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def addressable_devices(self) -> set[Any]:
        return self.device_set

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        return tuple(self.device_set)

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(global_shape)

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Any, tuple[slice, ...]]:
        index = _index_all(len(global_shape))
        return dict.fromkeys(self._device_assignment, index)

    def addressable_devices_indices_map(
        self, global_shape: Sequence[int]
    ) -> dict[Any, tuple[slice, ...]]:
        return self.devices_indices_map(global_shape)

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """Whether both lay out an array of rank `ndim` the same way: on devices of size-1
        axes, whenever they use the same devices."""
        return isinstance(other, Sharding) and other.device_set == self.device_set

    def with_memory_kind(self, kind: str) -> Sharding:
        return self


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device: Any, *, memory_kind: str | None = None) -> None:
        self._device = device
        self._memory_kind = memory_kind

    @property
    def device_set(self) -> set[Any]:
        return {self._device}

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind or "device"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self) -> int:
        return hash(("single", self._device))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"


def make_single_device_sharding(device: Any) -> SingleDeviceSharding:
    return SingleDeviceSharding(device)


class NamedSharding(Sharding):
    """An array split over a mesh: dimension i along the mesh axes `spec[i]` names."""

    def __init__(
        self, mesh: Mesh | AbstractMesh, spec: PartitionSpec, *, memory_kind: str | None = None
    ) -> None:
        if not isinstance(spec, PartitionSpec):
            raise AttributeError(
                f"{type(spec).__name__!r} object has no attribute 'partitions' (the spec of a "
                "NamedSharding must be a jax.sharding.PartitionSpec)"
            )
        self.mesh = mesh
        self.spec = spec
        self._memory_kind = memory_kind
        _check_spec(mesh, spec)

    @property
    def device_set(self) -> set[Any]:
        if not isinstance(self.mesh, Mesh):
            raise ValueError("device_set is not implemented for `jax.sharding.AbstractMesh`.")
        return set(self.mesh._flat)

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        if not isinstance(self.mesh, Mesh):
            raise ValueError(
                "_device_assignment is not implemented for `jax.sharding.AbstractMesh`."
            )
        return self.mesh._flat

    @property
    def num_devices(self) -> int:
        return self.mesh.size

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind or "device"

    @property
    def is_fully_replicated(self) -> bool:
        sizes = self.mesh.shape
        return all(sizes[n] == 1 for n in self.spec._axis_names())

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        sizes = self.mesh.shape
        out = list(global_shape)
        for i, p in enumerate(self.spec):
            if i >= len(out) or p is None or p is PartitionSpec.UNCONSTRAINED:
                continue
            n = math.prod(sizes[a] for a in (p if isinstance(p, tuple) else (p,)))
            if out[i] % n:
                raise ValueError(
                    f"Sharding {self} implies that array axis {i} is partitioned {n} times, but "
                    f"the dimension size is {out[i]} (full shape: {tuple(global_shape)}, "
                    f"per-dimension tiling factors: {self._tiling(len(out))} should evenly "
                    "divide the shape)"
                )
            out[i] //= n
        return tuple(out)

    def _tiling(self, ndim: int) -> list[int]:
        sizes = self.mesh.shape
        out = []
        for i in range(ndim):
            p = self.spec[i] if i < len(self.spec) else None
            if p is None or p is PartitionSpec.UNCONSTRAINED:
                out.append(1)
            else:
                out.append(math.prod(sizes[a] for a in (p if isinstance(p, tuple) else (p,))))
        return out

    def with_spec(self, spec: PartitionSpec) -> NamedSharding:
        return NamedSharding(self.mesh, spec, memory_kind=self._memory_kind)

    def update(self, **kwargs: Any) -> NamedSharding:
        return NamedSharding(
            kwargs.get("mesh", self.mesh),
            kwargs.get("spec", self.spec),
            memory_kind=kwargs.get("memory_kind", self._memory_kind),
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, NamedSharding)
            and other.mesh == self.mesh
            and other.spec == self.spec
            and other.memory_kind == self.memory_kind
        )

    def __hash__(self) -> int:
        return hash(("named", self.mesh, self.spec))

    def __repr__(self) -> str:
        if isinstance(self.mesh, Mesh):
            return (
                f"NamedSharding(mesh={self.mesh}, spec={self.spec}, memory_kind={self.memory_kind})"
            )
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec})"


def _check_spec(mesh: Mesh | AbstractMesh, spec: PartitionSpec) -> None:
    """JAX's errors for a spec naming an axis the mesh lacks, or one axis twice."""
    names = spec._axis_names()
    for n in names:
        if n not in mesh.axis_names:
            raise ValueError(
                f"Resource axis: {n} of {spec} is not found in mesh: {mesh.axis_names}."
            )
    seen: set[Any] = set()
    for n in names:
        if n in seen:
            raise DuplicateSpecError(
                "A single NamedSharding spec specification can map every mesh axis to at most "
                f"one positional dimension, but {spec} has duplicate entries for `{n}`"
            )
        seen.add(n)


def check_rank(sharding: Sharding, ndim: int, what: str) -> None:
    """A NamedSharding's spec may not be longer than the array's rank."""
    if isinstance(sharding, NamedSharding) and len(sharding.spec) > ndim:
        raise ValueError(
            f"One of {what} is incompatible with its sharding annotation {sharding}: Sharding "
            f"{sharding} is only valid for values of rank at least {len(sharding.spec)}, but "
            f"was applied to a value of rank {ndim}"
        )


def resolve(spec_or_sharding: Any, what: str, error: type[Exception] = RuntimeError) -> Any:
    """A Sharding for `spec_or_sharding`: a PartitionSpec becomes a NamedSharding over the
    context mesh (JAX's error when there is none); Shardings and None pass through."""
    if isinstance(spec_or_sharding, PartitionSpec):
        mesh = context_mesh()
        if mesh is None:
            raise error(what)
        return NamedSharding(mesh, spec_or_sharding)
    return spec_or_sharding


class Shard:
    """One device's piece of an array: here the whole array, on the array's device."""

    def __init__(self, device: Device, sharding: Sharding, global_shape: Sequence[int], data: Any):
        self.device = device
        self.sharding = sharding
        self.index = _index_all(len(global_shape))
        self.replica_id = 0
        self.data = data

    def __repr__(self) -> str:
        return (
            f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, "
            f"data={self.data})"
        )


__all__ = [
    "AbstractMesh",
    "AxisType",
    "DuplicateSpecError",
    "Mesh",
    "NamedSharding",
    "P",
    "PartitionSpec",
    "Shard",
    "Sharding",
    "SingleDeviceSharding",
    "get_abstract_mesh",
    "get_mesh",
    "make_mesh",
    "make_single_device_sharding",
    "set_mesh",
    "use_abstract_mesh",
]
