"""Lost Barony's greedy term of a candidate placement from the decision map's own figures, for the
greedy valuation's fast path (:func:`agents.greedy.cartographers_kernels.fast_value`).

Lost Barony scores 3 x the side of the largest all-filled square, and the progress term reads the
fullest square one larger. Placing cells only fills, so a square larger than the decision map's
largest can only be full if it holds a placed cell, and a square that holds none keeps the decision
map's count. With the decision map's prefix sums of filled cells (:func:`barony_base_into`, once per
decision), a placement is valued on the squares that overlap its bounding box alone
(:func:`barony_terms`): the same integers as the whole-map scan, so the same float bit for bit
(tests compare every candidate of many decisions with the whole-map valuation).
"""

from __future__ import annotations

import numpy as np

from agents.greedy.cartographers_delta import inline_jit
from envs.cartographers.kernels import COLS, EMPTY, ROWS, hot_jit

_W = COLS + 1
#: offsets in the per-decision array (:func:`barony_base_into`): prefix sums of filled cells
#: ((ROWS + 1) x (COLS + 1)), the largest filled square's side, the fullest square one larger
PREFIX, BEST, FULLEST = 0, (ROWS + 1) * _W, (ROWS + 1) * _W + 1
LEN = FULLEST + 1
#: placed cells :func:`barony_terms` reads (a placement row of the tables holds at most five)
MAX_CELLS = 5


@hot_jit
def _filled(sq: np.ndarray, r: int, c: int, k: int) -> int:
    """Filled cells of the decision map in the ``k`` x ``k`` square at row ``r``, column ``c``."""
    return sq[(r + k) * _W + c + k] - sq[r * _W + c + k] - sq[(r + k) * _W + c] + sq[r * _W + c]


@hot_jit
def _fullest(sq: np.ndarray, k: int) -> int:
    """The most filled cells in any ``k`` x ``k`` square of the decision map."""
    best = 0
    for r in range(ROWS - k + 1):
        for c in range(COLS - k + 1):
            best = max(best, _filled(sq, r, c, k))
    return best


@hot_jit
def barony_base_into(grid: np.ndarray, sq: np.ndarray) -> None:
    """The decision map's figures into ``sq`` (int32[LEN]): prefix sums of filled cells, the side of
    the largest all-filled square, and the fullest square one larger (0 past the map's size)."""
    for i in range(BEST):
        sq[i] = 0
    for r in range(ROWS):
        for c in range(COLS):
            here = (r + 1) * _W + c + 1
            sq[here] = int(grid[r * COLS + c] != EMPTY) + sq[here - _W] + sq[here - 1] - sq[here - _W - 1]
    best = 0
    while best < ROWS and _fullest(sq, best + 1) == (best + 1) * (best + 1):
        best += 1
    sq[BEST] = best
    sq[FULLEST] = _fullest(sq, best + 1) if best < ROWS else 0


@inline_jit
def _inside(cell: int, r: int, c: int, k: int) -> int:
    """1 if ``cell`` lies in the ``k`` x ``k`` square at row ``r``, column ``c`` (-1: no cell)."""
    if cell < 0:
        return 0
    cr = cell // COLS
    cc = cell - cr * COLS
    return int(r <= cr < r + k and c <= cc < c + k)


@hot_jit
def _with_cells(sq: np.ndarray, cells: np.ndarray, ncells: int, k: int, rows: tuple[int, int],
                cols: tuple[int, int]) -> int:
    """The most filled cells, the ``ncells`` <= MAX_CELLS placed ones included, in a ``k`` x ``k``
    square that overlaps the rows ``rows`` and the columns ``cols`` (first and last, inclusive)."""
    a0 = cells[0] if ncells > 0 else -1
    a1 = cells[1] if ncells > 1 else -1
    a2 = cells[2] if ncells > 2 else -1
    a3 = cells[3] if ncells > 3 else -1
    a4 = cells[4] if ncells > 4 else -1
    best = 0
    for r in range(max(0, rows[0] - k + 1), min(rows[1], ROWS - k) + 1):
        for c in range(max(0, cols[0] - k + 1), min(cols[1], COLS - k) + 1):
            count = (_filled(sq, r, c, k) + _inside(a0, r, c, k) + _inside(a1, r, c, k) + _inside(a2, r, c, k)
                     + _inside(a3, r, c, k) + _inside(a4, r, c, k))
            best = max(best, count)
    return best


@hot_jit
def barony_terms(cells: np.ndarray, ncells: int, sq: np.ndarray, weight: float) -> float:
    """``card_terms`` of Lost Barony on the decision map plus ``cells[:ncells]`` (empty before),
    from the decision map's ``sq`` (:func:`barony_base_into`); ``weight`` is the ``barony`` progress
    weight (0: no progress term). At most MAX_CELLS cells (callers value larger pieces on the map)."""
    rmin = cmin = ROWS
    rmax = cmax = -1
    for j in range(ncells):
        r = cells[j] // COLS
        c = cells[j] % COLS
        rmin = min(rmin, r)
        rmax = max(rmax, r)
        cmin = min(cmin, c)
        cmax = max(cmax, c)
    rows = (rmin, rmax)
    cols = (cmin, cmax)
    best = sq[BEST]
    grown = False
    most = 0  # the fullest square of side best + 1 among those overlapping the placement
    while best < ROWS:
        k = best + 1
        most = _with_cells(sq, cells, ncells, k, rows, cols)
        if most < k * k:
            break
        best = k
        grown = True
    points = 3 * best
    if weight == 0.0:
        return float(points)
    side = best + 1
    if side > ROWS:
        return points + 3.0 * weight * 0.0
    # squares away from the placement keep the decision map's counts: its fullest one of this size
    # (stored, unless the largest square grew), or the placed cells' best
    fullest = max(_fullest(sq, side) if grown else sq[FULLEST], most)
    f = fullest / (side * side)
    return points + 3.0 * weight * (f * f * f)
