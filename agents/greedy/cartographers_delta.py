"""Scoring-card terms of a candidate placement from the decision map's own, for the greedy
valuation's fast path (:func:`agents.greedy.cartographers_kernels.fast_value`).

A placement changes a cell-by-cell card only on its cells and their neighbours, and a line card
only on the lines its cells lie on. So instead of scoring the whole drawn map again:

* **local cards** (Sentinel Wood, Greenbough, Treetower, Canal Lake, Mages Valley, The Golden
  Granary, The Cauldrons): the decision map's points plus the change on the cells that can
  change (:func:`local_points`; integers, so exactly the whole-map score);
* **line cards** (Borderlands, The Broken Road): each row, column or diagonal's filled count is
  the decision map's count (:func:`line_counts_into`, once per decision) plus the placed cells on
  it; full lines score and unfinished ones add their progress term in the same order and with
  the same arithmetic as :func:`agents.greedy.cartographers_kernels.progress_value`, so the
  float is bit for bit the same (:func:`line_card_terms`).

Stoneside Forest, Shoreside Expanse and the village cards are valued from the decision map's
clusters (:mod:`agents.greedy.cartographers_clusters`), Lost Barony from the decision map's squares
(:mod:`agents.greedy.cartographers_barony`). Tests compare every candidate of many decisions, every card
included, with the whole-map valuation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from envs.cartographers.kernels import (
    COLS,
    EMPTY,
    FOREST,
    N_CELLS,
    ROWS,
    _neighbor,
    cell_points,
    hot_jit,
)

#: like the engine's scoring helpers (``hot_jit``), compiled without reference counting: a call
#: with array arguments then costs no atomic counter updates, which outweighed the work saved
inline_jit = njit(cache=True, _nrt=False, inline="always")

#: offsets in the per-decision line array (:func:`line_counts_into`): filled cells per row,
#: column and diagonal (d + i, i), then whether a row or column holds a forest (Greenbough)
ROW, COL, DIAG, FOREST_ROW, FOREST_COL = 0, ROWS, 2 * ROWS, 3 * ROWS, 4 * ROWS
LINES_LEN = 5 * ROWS


@inline_jit
def is_local(card: int) -> bool:
    """Whether :func:`local_points` values scoring card ``card``."""
    return card <= 2 or 4 <= card <= 6 or card == 15


@inline_jit
def is_line(card: int) -> bool:
    """Whether :func:`line_card_terms` values scoring card ``card`` (Borderlands, The Broken Road)."""
    return card == 12 or card == 14


@hot_jit
def line_counts_into(grid: np.ndarray, out: np.ndarray) -> None:
    """The decision map's line figures into ``out`` (int32[LINES_LEN]), laid out as the module's
    ``ROW``/``COL``/``DIAG``/``FOREST_ROW``/``FOREST_COL`` offsets say."""
    out[:] = 0
    for cell in range(N_CELLS):
        r = cell // COLS
        c = cell % COLS
        if grid[cell] != EMPTY:
            out[ROW + r] += 1
            out[COL + c] += 1
            if r >= c:
                out[DIAG + r - c] += 1
        if grid[cell] == FOREST:
            out[FOREST_ROW + r] = 1
            out[FOREST_COL + c] = 1


@hot_jit
def local_points(card: int, base_points: int, grid: np.ndarray, drawn: np.ndarray, cells: np.ndarray,
                 ncells: int, ruins: np.ndarray, lines: np.ndarray, seen: np.ndarray) -> int:
    """Points of local card ``card`` on ``drawn`` (= ``grid`` plus ``cells[:ncells]``, which were
    empty), from its ``base_points`` on ``grid``. ``lines``: :func:`line_counts_into` of ``grid``;
    ``seen`` int64[N_CELLS + 1]: cell stamps, the counter last."""
    if card == 1:  # Greenbough: a row or column scores once it holds a forest
        if drawn[cells[0]] != FOREST:
            return base_points
        rows = 0
        cols = 0
        for j in range(ncells):
            r = cells[j] // COLS
            c = cells[j] % COLS
            if lines[FOREST_ROW + r] == 0:
                rows |= 1 << r
            if lines[FOREST_COL + c] == 0:
                cols |= 1 << c
        gained = 0
        for a in range(ROWS):
            gained += ((rows >> a) & 1) + ((cols >> a) & 1)
        return base_points + gained
    points = base_points
    for j in range(ncells):  # a placed cell scored nothing while it was empty, but for The Cauldrons
        points += cell_points(card, drawn, cells[j], ruins) - cell_points(card, grid, cells[j], ruins)
    if card == 0 or card == 5 or card == 6:  # a cell's points read only its own terrain
        return points
    seen[N_CELLS] += 1
    stamp = seen[N_CELLS]
    for j in range(ncells):
        seen[cells[j]] = stamp
    for j in range(ncells):
        for k in range(4):
            nb = _neighbor(cells[j], k)
            if nb >= 0 and seen[nb] != stamp:
                seen[nb] = stamp
                points += cell_points(card, drawn, nb, ruins) - cell_points(card, grid, nb, ruins)
    return points


@inline_jit
def line_progress(filled: int, length: int) -> float:
    """Progress of one line with ``filled`` of its ``length`` cells filled: ``(filled / length) ** 3``,
    0 when complete (it scores); :func:`agents.greedy.cartographers_kernels._line_progress`
    counts a line of the map and calls this."""
    if filled == length:
        return 0.0
    f = filled / length
    return f * f * f


@hot_jit
def line_card_terms(card: int, cells: np.ndarray, ncells: int, lines: np.ndarray, weight: float) -> float:
    """``card_terms`` of Borderlands (12) or The Broken Road (14) on the decision map plus
    ``cells[:ncells]`` (empty before), from the decision map's ``lines``; ``weight`` is the
    ``lines`` progress weight (0: no progress term)."""
    points = 0
    value = 0.0
    if card == 12:
        for a in range(ROWS):
            in_row = lines[ROW + a]
            in_col = lines[COL + a]
            for j in range(ncells):
                if cells[j] // COLS == a:
                    in_row += 1
                if cells[j] % COLS == a:
                    in_col += 1
            if in_row == COLS:
                points += 1
            if in_col == ROWS:
                points += 1
            if weight != 0.0:
                value += 6.0 * (line_progress(in_row, COLS) + line_progress(in_col, ROWS))
        points *= 6
    else:
        for d in range(ROWS):
            on = lines[DIAG + d]
            for j in range(ncells):
                if cells[j] // COLS - cells[j] % COLS == d:
                    on += 1
            if on == ROWS - d:
                points += 3
            if weight != 0.0:
                value += 3.0 * line_progress(on, ROWS - d)
    if weight == 0.0:
        return float(points)
    value *= weight
    return points + value
