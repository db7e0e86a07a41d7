"""webjax.sharding: meshes, partition specs and shardings (`jax.sharding`)."""

from webjax._src.shard_map import auto_axes, explicit_axes, reshard
from webjax._src.sharding import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    get_abstract_mesh,
    get_mesh,
    make_single_device_sharding,
    set_mesh,
    use_abstract_mesh,
)

__all__ = [
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
    "use_abstract_mesh",
]
