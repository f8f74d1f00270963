"""Connected components over any graph given as a neighbour table (square or hex grids).

``neighbors[i, k]`` is the k-th neighbour of cell i or -1. Kernels are njit and allocation-light;
they run as plain Python under ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def square_neighbors(rows: int, cols: int) -> np.ndarray:
    """Neighbour table (N, E, S, W; -1 off-grid) of a rows x cols square grid, row-major cells."""
    table = np.full((rows * cols, 4), -1, dtype=np.int32)
    for r in range(rows):
        for c in range(cols):
            i = r * cols + c
            if r > 0:
                table[i, 0] = i - cols
            if c < cols - 1:
                table[i, 1] = i + 1
            if r < rows - 1:
                table[i, 2] = i + cols
            if c > 0:
                table[i, 3] = i - 1
    return table


@njit(cache=True)
def label_components(values: np.ndarray, neighbors: np.ndarray, labels: np.ndarray,
                     stack: np.ndarray) -> int:
    """Label the same-value connected groups of cells whose value is >= 0.

    ``labels`` (int32, len N) receives a component id per cell (-1 for cells with value < 0);
    ``stack`` is scratch of length N. Returns the number of components.
    """
    n = values.shape[0]
    for i in range(n):
        labels[i] = -1
    count = 0
    for start in range(n):
        if values[start] < 0 or labels[start] >= 0:
            continue
        v = values[start]
        labels[start] = count
        top = 0
        stack[top] = start
        top += 1
        while top > 0:
            top -= 1
            cell = stack[top]
            for k in range(neighbors.shape[1]):
                nb = neighbors[cell, k]
                if nb >= 0 and labels[nb] < 0 and values[nb] == v:
                    labels[nb] = count
                    stack[top] = nb
                    top += 1
        count += 1
    return count


@njit(cache=True)
def uf_find(parent: np.ndarray, x: int) -> int:
    """Union-find root of x with path halving."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@njit(cache=True)
def uf_union(parent: np.ndarray, size: np.ndarray, a: int, b: int) -> int:
    """Union by size; returns the new root."""
    ra = uf_find(parent, a)
    rb = uf_find(parent, b)
    if ra == rb:
        return ra
    if size[ra] < size[rb]:
        ra, rb = rb, ra
    parent[rb] = ra
    size[ra] += size[rb]
    return ra
