"""Polyomino shapes on a square grid: normalisation, the 8 orientations, placement footprints.

A shape is a tuple of ``(row, col)`` cells. Shapes are normalised so that the smallest row and
the smallest column are 0 and the cells are sorted; two shapes are the same orientation when
their normalised cell tuples are equal.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

Cells = tuple[tuple[int, int], ...]


def normalize(cells: Iterable[tuple[int, int]]) -> Cells:
    """Translate cells so the bounding box starts at (0, 0); sorted, duplicates rejected."""
    cells = [(int(r), int(c)) for r, c in cells]
    if not cells:
        raise ValueError("a shape needs at least one cell")
    if len(set(cells)) != len(cells):
        raise ValueError(f"shape has duplicate cells: {cells}")
    r0 = min(r for r, _ in cells)
    c0 = min(c for _, c in cells)
    return tuple(sorted((r - r0, c - c0) for r, c in cells))


def rotate90(cells: Cells) -> Cells:
    """Rotate a quarter turn clockwise: (r, c) -> (c, -r)."""
    return normalize((c, -r) for r, c in cells)


def flip(cells: Cells) -> Cells:
    """Mirror left-right: (r, c) -> (r, -c)."""
    return normalize((r, -c) for r, c in cells)


def all_orientations(cells: Iterable[tuple[int, int]]) -> list[Cells]:
    """The distinct orientations among the 4 rotations x 2 mirrorings, in a fixed order:
    rotations 0-3 of the shape, then rotations 0-3 of its mirror, duplicates dropped."""
    base = normalize(cells)
    seen: list[Cells] = []
    for start in (base, flip(base)):
        shape = start
        for _ in range(4):
            if shape not in seen:
                seen.append(shape)
            shape = rotate90(shape)
    return seen


def dims(cells: Cells) -> tuple[int, int]:
    """Bounding-box height and width."""
    return max(r for r, _ in cells) + 1, max(c for _, c in cells) + 1


def footprint(cells: Cells, top: int, left: int, rows: int, cols: int) -> np.ndarray | None:
    """Flat cell indices of ``cells`` placed with bounding box at (top, left), or None if any cell
    falls off a ``rows x cols`` grid."""
    out = []
    for r, c in cells:
        rr, cc = top + r, left + c
        if not (0 <= rr < rows and 0 <= cc < cols):
            return None
        out.append(rr * cols + cc)
    return np.array(out, dtype=np.int16)


def to_ascii(cells: Cells) -> str:
    """X/. picture of a shape."""
    h, w = dims(cells)
    grid = [["."] * w for _ in range(h)]
    for r, c in cells:
        grid[r][c] = "X"
    return "\n".join("".join(row) for row in grid)
