"""What the element kinds share: an array column's element domain, and its
elements with the row each sits in.

The element kinds (``element_bloom``, ``element_bitmap``) index the elements of
an array column (``array<string>``, ``array<int>``...), to answer
``array_contains``, ``arrays_overlap`` with literal values and ``exists(a, x ->
x = v)`` (:class:`~skipindex.expressions.nodes.BoundHasElement`). A NULL element
equals nothing, so it is left out; a NULL or empty array holds no element.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex._types import Domain, domain_of, spark_type_name, to_physical
from skipindex.errors import UnsupportedTypeError
from skipindex.expressions.bound_elements import ELEMENT_DOMAINS

__all__ = ["element_domain", "elements_of"]


def element_domain(kind: str, column: str, arrow_type: pa.DataType) -> Domain:
    """The domain of ``column``'s elements, or an error naming the column."""
    listed = pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)
    domain = domain_of(arrow_type.value_type) if listed else None
    if domain is None or domain not in ELEMENT_DOMAINS:
        accepted = ", ".join(sorted(f"array<{d.value}>" for d in ELEMENT_DOMAINS))
        raise UnsupportedTypeError(
            f"index kind '{kind}' cannot index column '{column}' of type "
            f"{spark_type_name(arrow_type)}; it takes {accepted} columns"
        )
    return domain


def elements_of(values: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """The non-NULL elements of an array column (physical form), and per element
    the row position of its array."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    flat = pc.list_flatten(values)
    rows = pc.list_parent_indices(values)
    present = flat.is_valid()
    elements = to_physical(flat.filter(present))
    positions = np.asarray(rows.filter(present).to_numpy(zero_copy_only=False), dtype=np.int64)
    return elements, positions
