"""webjax.tree: the `jax.tree` short names."""

from webjax._src.tree import static
from webjax._src.tree import tree_all as all
from webjax._src.tree import tree_broadcast as broadcast
from webjax._src.tree import tree_flatten as flatten
from webjax._src.tree import tree_flatten_with_path as flatten_with_path
from webjax._src.tree import tree_leaves as leaves
from webjax._src.tree import tree_leaves_with_path as leaves_with_path
from webjax._src.tree import tree_map as map
from webjax._src.tree import tree_map_with_path as map_with_path
from webjax._src.tree import tree_reduce as reduce
from webjax._src.tree import tree_reduce_associative as reduce_associative
from webjax._src.tree import tree_structure as structure
from webjax._src.tree import tree_transpose as transpose
from webjax._src.tree_util import tree_unflatten as unflatten

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]
