"""Hex grids in axial coordinates (q, r), pointy or flat alike: only adjacency is used here.

Direction k (0..5) is ``HEX_DIRECTIONS[k]``, going round the hex; the opposite of k is
``(k + 3) % 6``. A *window* is a rhombus of axial cells centred on the origin, stored
row-major with index ``(r + radius) * side + (q + radius)``, where ``side = 2*radius + 1``.
"""

from __future__ import annotations

import numpy as np

#: axial offsets of the 6 neighbours, in rotational order
HEX_DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))


def opposite(direction: int) -> int:
    """The direction pointing back."""
    return (direction + 3) % 6


def hex_distance(q: int, r: int) -> int:
    """Steps from the origin to (q, r)."""
    return max(abs(q), abs(r), abs(q + r))


def window_side(radius: int) -> int:
    return 2 * radius + 1


def window_index(q: int, r: int, radius: int) -> int:
    """Flat index of (q, r) in a window of ``radius`` (no bounds check)."""
    side = 2 * radius + 1
    return (r + radius) * side + (q + radius)


def window_coords(index: int, radius: int) -> tuple[int, int]:
    """(q, r) of a flat window index."""
    side = 2 * radius + 1
    r, q = divmod(index, side)
    return q - radius, r - radius


def window_neighbors(radius: int) -> np.ndarray:
    """Neighbour table (N x 6, -1 outside the window) in HEX_DIRECTIONS order."""
    side = 2 * radius + 1
    table = np.full((side * side, 6), -1, dtype=np.int32)
    for idx in range(side * side):
        q, r = window_coords(idx, radius)
        for k, (dq, dr) in enumerate(HEX_DIRECTIONS):
            nq, nr = q + dq, r + dr
            if -radius <= nq <= radius and -radius <= nr <= radius:
                table[idx, k] = window_index(nq, nr, radius)
    return table
