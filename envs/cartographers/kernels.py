"""Cartographers numba kernels: placement tables, legal masks, apply, scoring, and the turn flow.

Everything the rules do happens here, over plain numpy arrays, so the Python engine
(:mod:`envs.cartographers.game`) and the compiled whole-game loop run the same code and give
identical games for the same seed and actions.

Two tuples are passed around:

``st`` (the game state, mutable):
    ``grid`` int8[P, 121], ``coins`` int16[P], ``mtn_done`` bool[P, M] (mountain coin taken),
    ``deck`` int8[17] (deck cards, see data.py), ``amb`` int8[4] (ambush pile order),
    ``edicts`` int8[4] (scoring card under edict A..D), ``meta`` int32[N_META] (scalars, M_*),
    ``rng`` uint64[1] (SplitMix64 chance stream), ``record`` int16[P, 4, 5] (per season:
    edict X, edict Y, coins, monster points lost, total).

``tb`` (static tables, built once by :func:`build_tables`):
    ``ruins`` bool[121], ``mountains`` int16[M], ``cards`` int16[17, 16] (C_* columns),
    ``seasons`` int16[4, 3] (threshold, edict X, edict Y), ``pl_bits`` uint64[N, 2] (footprint
    bitboards: cells 0..63 in word 0, 64..120 in word 1), ``pl_cells`` int16[N, 8] (cells 0..4,
    -1 padded; col 5 orientation, col 6 anchor, col 7 cell count), ``shape_start`` int32[S + 1]
    (placements of shape s are ``shape_start[s]:shape_start[s + 1]``), ``pl_index`` int32[S, 8, 121]
    (placement id of (shape, orientation, anchor) or -1), ``solo_order`` int32[4, L] (solo ambush
    candidates in decision-9 order, -1 padded), ``base`` int8[121] (the printed map).

Turn flow: :func:`setup` deals a game, then ``step(st, tb, -1)`` reveals up to the first
decision. Each decision: :func:`check_action` (0 = legal, else an E_* reason), then :func:`step`:
:func:`apply_action`; while it (or :func:`next_season`) returns True the season's time limit is
reached and :func:`score_season` then :func:`next_season` run (reshuffle and reveal, or the game end).
A seat whose decision map has no empty cell has no legal action and is passed over (nothing drawn);
a card every seat passes resolves without a decision (the project's full-map ruling).
:func:`legal_mask_into` fills the mask, :func:`random_action` picks a uniform legal action
without a mask, :func:`play_random` plays any state to the end (any number of seats), and
:func:`random_solo_games` runs whole solo games for benchmarks.

Action codec (one Discrete(NUM_ACTIONS) space; anchor = top-left cell of the bounding box):
    PLACE      ``((t * 2 + k) * 8 + o) * 121 + anchor``: terrain option t (0..4, index into the
               card's terrains), shape option k (0..1), orientation o (0..7, distinct orientations
               first; duplicates never legal);
    FALLBACK   ``FALLBACK_BASE + t * 121 + cell``: 1x1 of terrain t (0 forest, 1 village, 2 farm,
               3 water, 4 monster), only when no offered option fits;
    AMBUSH     ``AMBUSH_BASE + o * 121 + anchor``: the neighbour draws the ambush shape (multiplayer);
    AMBUSH_1x1 ``AMBUSH_FALLBACK_BASE + cell``: one monster cell when the shape fits nowhere.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from envs.cartographers.data import (
    COLS,
    CORNERS,
    KIND_AMBUSH,
    KIND_EXPLORE,
    KIND_RUINS,
    MONSTER,
    N_AMBUSH_CARDS,
    N_CELLS,
    N_DECK_CARDS,
    N_EXPLORE_CARDS,
    ROWS,
    CartographersData,
    load_cartographers_data,
)
from envs.core.polyomino import all_orientations
from envs.core.rng import randint, shuffle_prefix

#: the scoring helpers a greedy valuation calls for every candidate placement: compiled without
#: numba's reference counting (none of them allocates), so a call with array arguments costs no
#: atomic counter updates; these had taken 20-40% of a greedy decision's time
hot_jit = njit(cache=True, _nrt=False)

# ---- constants ---------------------------------------------------------------------------------

EMPTY, FOREST, VILLAGE, FARM, WATER, MONSTER_T, MOUNTAIN, WASTELAND = range(8)

N_TERRAIN_OPTIONS = 5
N_SHAPE_OPTIONS = 2
N_ORIENT = 8
PLACE_BASE = 0
FALLBACK_BASE = N_TERRAIN_OPTIONS * N_SHAPE_OPTIONS * N_ORIENT * N_CELLS  # 9680
AMBUSH_BASE = FALLBACK_BASE + 5 * N_CELLS  # 10285
AMBUSH_FALLBACK_BASE = AMBUSH_BASE + N_ORIENT * N_CELLS  # 11253
NUM_ACTIONS = AMBUSH_FALLBACK_BASE + N_CELLS  # 11374

# card table columns
C_KIND, C_TIME, C_NTERR, C_TERR, C_NOPT, C_SHAPE, C_COIN, C_ARROW, C_CORNER = 0, 1, 2, 3, 8, 9, 11, 13, 14
N_CARD_COLS = 16

# meta fields
M_PLAYERS, M_SEASON, M_TIME, M_POS, M_LEN, M_AMB_POS, M_CARD, M_PHASE, M_ACTOR = range(9)
M_TARGET, M_RUINS, M_CAP, M_AMBUSHES, M_TURNS, M_LAST_AMBUSH, M_LAST_SEASON_END = range(9, 16)
N_META = 16

PHASE_EXPLORE, PHASE_AMBUSH, PHASE_OVER = 0, 1, 2

# record columns
R_EDICT_X, R_EDICT_Y, R_COINS, R_MONSTERS, R_TOTAL = range(5)

# reason codes of check_action
OK = 0
E_OVER, E_RANGE, E_PHASE, E_TERRAIN, E_SHAPE, E_ORIENT, E_OFFMAP, E_FILLED = 1, 2, 3, 4, 5, 6, 7, 8
E_RUINS, E_FALLBACK_WHILE_FITS, E_CELL_FILLED = 9, 10, 11


# ---- tables ------------------------------------------------------------------------------------


class Tables(NamedTuple):
    """Static tables of one map side (see the module docstring)."""

    ruins: np.ndarray
    mountains: np.ndarray
    cards: np.ndarray
    seasons: np.ndarray
    pl_bits: np.ndarray
    pl_cells: np.ndarray
    shape_start: np.ndarray
    pl_index: np.ndarray
    solo_order: np.ndarray
    base: np.ndarray


def ring_walk(k: int, corner: int, arrow: int) -> list[int]:
    """Cells of ring k (min(r, c, 10-r, 10-c) == k) in walk order from ``corner`` (index into
    CORNERS) in the arrow's direction (+1 clockwise, -1 counterclockwise); decision 9."""
    lo, hi = k, ROWS - 1 - k
    if lo == hi:
        return [lo * COLS + lo]
    cw = [lo * COLS + c for c in range(lo, hi)]  # top edge, eastwards
    cw += [r * COLS + hi for r in range(lo, hi)]  # right edge, southwards
    cw += [hi * COLS + c for c in range(hi, lo, -1)]  # bottom edge, westwards
    cw += [r * COLS + lo for r in range(hi, lo, -1)]  # left edge, northwards
    side = hi - lo
    start = {0: 0, 1: side, 2: 2 * side, 3: 3 * side}[corner]
    n = len(cw)
    return [cw[(start + arrow * i) % n] for i in range(n)]


def _solo_candidates(shape: tuple, shape_id: int, corner: int, arrow: int,
                     pl_index: np.ndarray, pl_cells: np.ndarray) -> list[int]:
    """Placement ids of the unrotated shape in decision-9 order (rings 0..5 concatenated)."""
    order: list[int] = []
    for k in range(6):
        walk = {cell: i for i, cell in enumerate(ring_walk(k, corner, arrow))}
        keyed = []
        for anchor in range(N_CELLS):
            pid = int(pl_index[shape_id, 0, anchor])
            if pid < 0:
                continue
            cells = [int(c) for c in pl_cells[pid, : pl_cells[pid, 7]]]
            on_ring = sorted(walk[c] for c in cells if c in walk)
            if on_ring:
                keyed.append((tuple(on_ring), anchor, pid))
        keyed.sort()
        order.extend(pid for _, _, pid in keyed)
    return order


def build_tables(data: CartographersData, side: str = "A") -> Tables:
    """Precompute every footprint and the card tables for map ``side``."""
    sheet = data.maps[side]
    shapes: list[tuple] = []
    cards = np.zeros((N_DECK_CARDS, N_CARD_COLS), dtype=np.int16)
    for c in range(N_DECK_CARDS):
        cards[c, C_KIND] = data.card_kind[c]
        cards[c, C_TIME] = data.card_time[c]
        cards[c, C_NTERR] = data.card_n_terrains[c]
        cards[c, C_TERR:C_TERR + 5] = data.card_terrains[c]
        cards[c, C_NOPT] = len(data.card_shapes[c])
        cards[c, C_SHAPE:C_SHAPE + 2] = -1
        for k, shape in enumerate(data.card_shapes[c]):
            cards[c, C_SHAPE + k] = len(shapes)
            shapes.append(shape)
            cards[c, C_COIN + k] = int(data.card_coin[c, k])
        if c >= N_EXPLORE_CARDS:
            cards[c, C_ARROW] = data.ambush_arrow[c - N_EXPLORE_CARDS]
            cards[c, C_CORNER] = data.ambush_corner[c - N_EXPLORE_CARDS]
    n_shapes = len(shapes)
    pl_index = np.full((n_shapes, N_ORIENT, N_CELLS), -1, dtype=np.int32)
    bits: list[tuple[int, int]] = []
    cells_rows: list[list[int]] = []
    shape_start = np.zeros(n_shapes + 1, dtype=np.int32)
    for s, shape in enumerate(shapes):
        shape_start[s] = len(bits)
        for o, orient in enumerate(all_orientations(shape)):
            h = max(r for r, _ in orient) + 1
            w = max(c for _, c in orient) + 1
            for top in range(ROWS - h + 1):
                for left in range(COLS - w + 1):
                    flat = [(top + r) * COLS + left + c for r, c in orient]
                    lo = sum(1 << f for f in flat if f < 64)
                    hi = sum(1 << (f - 64) for f in flat if f >= 64)
                    pl_index[s, o, top * COLS + left] = len(bits)
                    bits.append((lo, hi))
                    cells_rows.append(flat + [-1] * (5 - len(flat)) + [o, top * COLS + left, len(flat)])
    shape_start[n_shapes] = len(bits)
    pl_bits = np.array(bits, dtype=np.uint64)
    pl_cells = np.array(cells_rows, dtype=np.int16)

    solo_lists = []
    for j in range(N_AMBUSH_CARDS):
        c = N_EXPLORE_CARDS + j
        solo_lists.append(_solo_candidates(data.card_shapes[c][0], int(cards[c, C_SHAPE]),
                                           int(cards[c, C_CORNER]), int(cards[c, C_ARROW]),
                                           pl_index, pl_cells))
    width = max(len(x) for x in solo_lists)
    solo_order = np.full((N_AMBUSH_CARDS, width), -1, dtype=np.int32)
    for j, lst in enumerate(solo_lists):
        solo_order[j, : len(lst)] = lst

    seasons = np.zeros((4, 3), dtype=np.int16)
    seasons[:, 0] = data.season_threshold
    seasons[:, 1:] = data.season_edicts
    return Tables(np.array(sheet.ruins), np.array(sheet.mountains), cards, seasons, pl_bits, pl_cells,
                  shape_start, pl_index, solo_order, np.array(sheet.terrain))


assert CORNERS == ("top_left", "top_right", "bottom_right", "bottom_left")
assert MONSTER == MONSTER_T and KIND_EXPLORE == 0


# ---- bitboards ---------------------------------------------------------------------------------


@njit(cache=True)
def filled_bits(grid: np.ndarray) -> tuple:
    """(lo, hi) bitboards of the filled cells (terrain != EMPTY) of one map."""
    lo = np.uint64(0)
    hi = np.uint64(0)
    one = np.uint64(1)
    for c in range(64):
        if grid[c] != EMPTY:
            lo |= one << np.uint64(c)
    for c in range(64, N_CELLS):
        if grid[c] != EMPTY:
            hi |= one << np.uint64(c - 64)
    return lo, hi


@njit(cache=True)
def empty_ruins_bits(grid: np.ndarray, ruins: np.ndarray) -> tuple:
    """(lo, hi) bitboards of ruins cells nothing has been drawn on."""
    lo = np.uint64(0)
    hi = np.uint64(0)
    one = np.uint64(1)
    for c in range(N_CELLS):
        if ruins[c] and grid[c] == EMPTY:
            if c < 64:
                lo |= one << np.uint64(c)
            else:
                hi |= one << np.uint64(c - 64)
    return lo, hi


@njit(cache=True)
def placement_mask(grid: np.ndarray, ruins: np.ndarray, pl_bits: np.ndarray, start: int, end: int,
                   require_ruins: bool, out: np.ndarray) -> int:
    """Mark ``out[i - start]`` True for every legal placement id i in ``start:end`` of one shape
    (all its orientations x anchors) on ``grid``: no filled cell covered, and with
    ``require_ruins`` at least one empty ruins cell covered. Returns the number of legal ones."""
    f_lo, f_hi = filled_bits(grid)
    r_lo, r_hi = empty_ruins_bits(grid, ruins)
    zero = np.uint64(0)
    count = 0
    for i in range(start, end):
        lo = pl_bits[i, 0]
        hi = pl_bits[i, 1]
        ok = (lo & f_lo) == zero and (hi & f_hi) == zero
        if ok and require_ruins:
            ok = (lo & r_lo) != zero or (hi & r_hi) != zero
        out[i - start] = ok
        if ok:
            count += 1
    return count


SCRATCH = 8 * N_CELLS
_LAB, _SIZ, _STK, _AUX = 0, N_CELLS, 2 * N_CELLS, 3 * N_CELLS


# ---- neighbourhood helpers ---------------------------------------------------------------------


@hot_jit
def _neighbor(cell: int, k: int) -> int:
    """The k-th orthogonal neighbour (N, E, S, W) of ``cell`` or -1 off the map."""
    r = cell // COLS
    c = cell % COLS
    if k == 0:
        return cell - COLS if r > 0 else -1
    if k == 1:
        return cell + 1 if c < COLS - 1 else -1
    if k == 2:
        return cell + COLS if r < ROWS - 1 else -1
    return cell - 1 if c > 0 else -1


@hot_jit
def _has_neighbor(grid: np.ndarray, cell: int, terrain: int) -> bool:
    for k in range(4):
        nb = _neighbor(cell, k)
        if nb >= 0 and grid[nb] == terrain:
            return True
    return False


@hot_jit
def _enclosed(grid: np.ndarray, cell: int) -> bool:
    """All 4 neighbours filled or off the map."""
    for k in range(4):
        nb = _neighbor(cell, k)
        if nb >= 0 and grid[nb] == EMPTY:
            return False
    return True


@hot_jit
def _on_edge(cell: int) -> bool:
    r = cell // COLS
    c = cell % COLS
    return r == 0 or c == 0 or r == ROWS - 1 or c == COLS - 1


@hot_jit
def label_terrain(grid: np.ndarray, terrain: int, scratch: np.ndarray) -> int:
    """Label the orthogonal clusters of ``terrain`` in ``scratch`` (int32[SCRATCH]):
    ``scratch[_LAB + cell]`` = cluster id or -1, ``scratch[_SIZ + id]`` = its cell count
    (``scratch[_STK:]`` is the flood-fill stack). Returns the number of clusters."""
    for i in range(N_CELLS):
        scratch[_LAB + i] = -1
    n = 0
    for start in range(N_CELLS):
        if grid[start] != terrain or scratch[_LAB + start] >= 0:
            continue
        scratch[_LAB + start] = n
        scratch[_SIZ + n] = 0
        top = 1
        scratch[_STK] = start
        while top > 0:
            top -= 1
            cell = scratch[_STK + top]
            scratch[_SIZ + n] += 1
            for k in range(4):
                nb = _neighbor(cell, k)
                if nb >= 0 and scratch[_LAB + nb] < 0 and grid[nb] == terrain:
                    scratch[_LAB + nb] = n
                    scratch[_STK + top] = nb
                    top += 1
        n += 1
    return n


# ---- scoring cards -----------------------------------------------------------------------------
# Card functions take a ``scratch`` int32[SCRATCH] buffer (labels, sizes, stack, aux) instead of
# allocating, and index it with offsets (no views): faster and several times faster to compile.


@hot_jit
def _stoneside_forest(grid, scratch):
    return stoneside_from_labels(grid, label_terrain(grid, FOREST, scratch), scratch)


@hot_jit
def stoneside_from_labels(grid, n, scratch):
    """Stoneside Forest once :func:`label_terrain` found the ``n`` forest clusters in ``scratch``
    (the labels are kept; ``scratch[_AUX:]`` is overwritten)."""
    if n == 0:
        return 0
    for i in range(n):  # distinct mountains touching each forest cluster
        scratch[_AUX + i] = 0
    for cell in range(N_CELLS):
        if grid[cell] != MOUNTAIN:
            continue
        for k in range(4):
            nb = _neighbor(cell, k)
            if nb < 0 or scratch[_LAB + nb] < 0:
                continue
            lab = scratch[_LAB + nb]
            dup = False
            for j in range(k):
                other = _neighbor(cell, j)
                if other >= 0 and scratch[_LAB + other] == lab:
                    dup = True
            if not dup:
                scratch[_AUX + lab] += 1
    total = 0
    for cell in range(N_CELLS):
        if grid[cell] != MOUNTAIN:
            continue
        for k in range(4):
            nb = _neighbor(cell, k)
            if nb >= 0 and scratch[_LAB + nb] >= 0 and scratch[_AUX + scratch[_LAB + nb]] >= 2:
                total += 3
                break
    return total


@hot_jit
def _isolated_clusters(grid, terrain, other, scratch):
    """Clusters of ``terrain`` touching neither ``other`` nor the map edge."""
    n = label_terrain(grid, terrain, scratch)
    for i in range(n):
        scratch[_AUX + i] = 0
    for cell in range(N_CELLS):
        lab = scratch[_LAB + cell]
        if lab >= 0 and (_on_edge(cell) or _has_neighbor(grid, cell, other)):
            scratch[_AUX + lab] = 1
    count = 0
    for i in range(n):
        if scratch[_AUX + i] == 0:
            count += 1
    return count


@hot_jit
def cluster_neighbour_kinds(grid, n, scratch) -> int:
    """After :func:`label_terrain` found ``n`` clusters: ``scratch[_AUX + i]`` = how many of forest,
    farm, water, monster and mountain cluster i touches (Greengold Plains). Returns ``n``."""
    flags = _AUX + n  # 8 flags per cluster after the n counts
    for i in range(8 * n):
        scratch[flags + i] = 0
    for cell in range(N_CELLS):
        lab = scratch[_LAB + cell]
        if lab < 0:
            continue
        for k in range(4):
            nb = _neighbor(cell, k)
            if nb >= 0:
                scratch[flags + lab * 8 + grid[nb]] = 1
    for i in range(n):
        base = flags + i * 8
        scratch[_AUX + i] = scratch[base + FOREST] + scratch[base + FARM] + scratch[base + WATER] \
            + scratch[base + MONSTER_T] + scratch[base + MOUNTAIN]
    return n


@hot_jit
def _village_card(grid, card, scratch):
    return village_from_labels(grid, card, label_terrain(grid, VILLAGE, scratch), scratch)


@hot_jit
def village_from_labels(grid, card, n, scratch):
    """Village card ``card`` (8..11) once :func:`label_terrain` found the ``n`` village clusters
    in ``scratch`` (the labels are kept; Greengold Plains leaves each cluster's neighbouring kinds
    at ``scratch[_AUX + i]``, as :func:`cluster_neighbour_kinds` writes them)."""
    if n == 0:
        return 0
    if card == 8:  # Wildholds: 8 per cluster of 6 or more
        total = 0
        for i in range(n):
            if scratch[_SIZ + i] >= 6:
                total += 8
        return total
    if card == 11:  # Shieldgate: 2 per cell of the second largest (ties count)
        if n < 2:
            return 0
        first = 0
        second = 0
        for i in range(n):
            size = scratch[_SIZ + i]
            if size > first:
                second = first
                first = size
            elif size > second:
                second = size
        return 2 * second
    if card == 9:  # Great City: largest cluster not adjacent to a mountain
        for i in range(n):
            scratch[_AUX + i] = 0
        for cell in range(N_CELLS):
            if scratch[_LAB + cell] >= 0 and _has_neighbor(grid, cell, MOUNTAIN):
                scratch[_AUX + scratch[_LAB + cell]] = 1
        best = 0
        for i in range(n):
            if scratch[_AUX + i] == 0 and scratch[_SIZ + i] > best:
                best = scratch[_SIZ + i]
        return best
    # card 10, Greengold Plains: clusters touching >= 3 of forest, farm, water, monster, mountain
    total = 0
    for i in range(cluster_neighbour_kinds(grid, n, scratch)):
        if scratch[_AUX + i] >= 3:
            total += 3
    return total


@hot_jit
def _lost_barony(grid, scratch):
    """3 x the side of the largest all-filled square (dynamic programming on a 12 x 12 table)."""
    w = COLS + 1
    for i in range((ROWS + 1) * w):
        scratch[_AUX + i] = 0
    best = 0
    for r in range(ROWS):
        for c in range(COLS):
            if grid[r * COLS + c] != EMPTY:
                v = min(scratch[_AUX + r * w + c + 1], scratch[_AUX + (r + 1) * w + c],
                        scratch[_AUX + r * w + c]) + 1
                scratch[_AUX + (r + 1) * w + c + 1] = v
                if v > best:
                    best = v
    return 3 * best


@hot_jit
def _full_lines(grid: np.ndarray, step_row: int, step_col: int) -> int:
    """Number of completely filled rows (step_row=1, step_col=0 walks each row) or columns."""
    count = 0
    for a in range(ROWS):
        full = True
        for b in range(COLS):
            cell = a * COLS + b if step_row == 1 else b * COLS + a
            if grid[cell] == EMPTY:
                full = False
                break
        if full:
            count += 1
    return count


@njit(cache=True, _nrt=False, inline="always")
def cell_points(card: int, grid: np.ndarray, cell: int, ruins: np.ndarray) -> int:
    """What ``cell`` alone scores on a per-cell card: Sentinel Wood (0), Treetower (2), Canal Lake
    (4), Mages Valley (5), The Golden Granary (6) or The Cauldrons (15); a card's points are the
    sum over the map's cells."""
    t = grid[cell]
    if card == 0:  # Sentinel Wood: forest on the map edge
        return 1 if t == FOREST and _on_edge(cell) else 0
    if card == 2:  # Treetower: forest with 4 filled / off-map neighbours
        return 1 if t == FOREST and _enclosed(grid, cell) else 0
    if card == 4:  # Canal Lake: water next to farm, farm next to water
        if t == WATER:
            return 1 if _has_neighbor(grid, cell, FARM) else 0
        if t == FARM:
            return 1 if _has_neighbor(grid, cell, WATER) else 0
        return 0
    if card == 5:  # Mages Valley: water (2) and farm (1) next to a mountain
        if t == WATER:
            return 2 if _has_neighbor(grid, cell, MOUNTAIN) else 0
        if t == FARM:
            return 1 if _has_neighbor(grid, cell, MOUNTAIN) else 0
        return 0
    if card == 6:  # The Golden Granary: water next to a printed ruins (1), farm on one (3)
        if t == WATER:
            for k in range(4):
                nb = _neighbor(cell, k)
                if nb >= 0 and ruins[nb]:
                    return 1
            return 0
        return 3 if t == FARM and ruins[cell] else 0
    # The Cauldrons: empty cell with 4 filled / off-map neighbours
    return 1 if t == EMPTY and _enclosed(grid, cell) else 0


@hot_jit
def score_card_into(card: int, grid: np.ndarray, ruins: np.ndarray, scratch: np.ndarray) -> int:
    """:func:`score_card` with a caller-owned ``scratch`` int32[SCRATCH] (no allocation).

    The cluster-based cards have their own functions; the per-cell and per-line cards are
    written inline here (one function compiles much faster than nine small ones)."""
    if card == 3:
        return _stoneside_forest(grid, scratch)
    if card == 7:  # Shoreside Expanse
        return 3 * (_isolated_clusters(grid, FARM, WATER, scratch)
                    + _isolated_clusters(grid, WATER, FARM, scratch))
    if 8 <= card <= 11:
        return _village_card(grid, card, scratch)
    if card == 13:
        return _lost_barony(grid, scratch)
    if card == 12:  # Borderlands: 6 per complete row or column
        return 6 * (_full_lines(grid, 1, 0) + _full_lines(grid, 0, 1))
    if card == 1:  # Greenbough: rows and columns with a forest
        total = 0
        for a in range(ROWS):
            in_row = False
            in_col = False
            for b in range(COLS):
                in_row = in_row or grid[a * COLS + b] == FOREST
                in_col = in_col or grid[b * COLS + a] == FOREST
            total += int(in_row) + int(in_col)
        return total
    if card == 14:  # The Broken Road: complete diagonals (d+i, i) from the left to the bottom edge
        total = 0
        for d in range(ROWS):
            full = True
            for i in range(ROWS - d):
                if grid[(d + i) * COLS + i] == EMPTY:
                    full = False
                    break
            if full:
                total += 3
        return total
    if card <= 2 or 4 <= card <= 6 or card == 15:  # the per-cell cards (Greenbough scored above)
        total = 0
        for cell in range(N_CELLS):
            total += cell_points(card, grid, cell, ruins)
        return total
    raise ValueError("scoring card index outside 0..15")


@njit(cache=True)
def score_card(card: int, grid: np.ndarray, ruins: np.ndarray) -> int:
    """Points of scoring card ``card`` (0..15 = ids 26..41) for one map ``grid`` int8[121]."""
    scratch = np.empty(SCRATCH, np.int32)
    return score_card_into(card, grid, ruins, scratch)


@hot_jit
def monster_penalty(grid: np.ndarray) -> int:
    """Points lost to monsters: empty cells orthogonally touching at least one monster."""
    total = 0
    for cell in range(N_CELLS):
        if grid[cell] == EMPTY and _has_neighbor(grid, cell, MONSTER_T):
            total += 1
    return total


@njit(cache=True)
def surrounded_mountains(grid: np.ndarray, out: np.ndarray) -> int:
    """Mark in ``out`` (bool[121]) the mountains whose 4 orthogonal neighbours are all filled
    (off the map never counts as filled); returns their number."""
    count = 0
    for cell in range(N_CELLS):
        out[cell] = False
        if grid[cell] != MOUNTAIN:
            continue
        ok = True
        for k in range(4):
            nb = _neighbor(cell, k)
            if nb < 0 or grid[nb] == EMPTY:
                ok = False
                break
        if ok:
            out[cell] = True
            count += 1
    return count


# ---- drawing -----------------------------------------------------------------------------------


@njit(cache=True)
def _gain_coin(coins: np.ndarray, p: int, cap: int) -> None:
    if cap < 0 or coins[p] < cap:
        coins[p] += 1


@njit(cache=True)
def draw(grid: np.ndarray, coins: np.ndarray, mtn_done: np.ndarray, cap: int, mountains: np.ndarray,
         pl_cells: np.ndarray, p: int, pid: int, cell: int, terrain: int, coin: bool) -> None:
    """Draw ``terrain`` on map ``p`` (``grid`` is int8[P, 121]): placement ``pid``, or the single
    ``cell`` when ``pid`` < 0. Then the shape coin (``coin``) and a coin for every mountain whose
    4th orthogonal neighbour is now filled (once per mountain), capped at ``cap`` (-1: no cap)."""
    g = grid[p]
    if pid >= 0:
        for j in range(pl_cells[pid, 7]):
            g[pl_cells[pid, j]] = terrain
    else:
        g[cell] = terrain
    if coin:
        _gain_coin(coins, p, cap)
    for m in range(mountains.shape[0]):
        if mtn_done[p, m]:
            continue
        mc = mountains[m]
        ok = True
        for k in range(4):
            nb = _neighbor(mc, k)
            if nb < 0 or g[nb] == EMPTY:
                ok = False
                break
        if ok:
            mtn_done[p, m] = True
            _gain_coin(coins, p, cap)


# ---- solo ambush -------------------------------------------------------------------------------


@njit(cache=True)
def solo_ambush_pid(grid: np.ndarray, amb_index: int, order: np.ndarray, bits: np.ndarray) -> int:
    """Placement id of the solo ambush ``amb_index`` (0..3) on ``grid`` per decision 9, or -1
    when it fits nowhere (the ambush is then ignored). ``order`` = ``tb.solo_order``."""
    f_lo, f_hi = filled_bits(grid)
    zero = np.uint64(0)
    for i in range(order.shape[1]):
        pid = order[amb_index, i]
        if pid < 0:
            break
        if (bits[pid, 0] & f_lo) == zero and (bits[pid, 1] & f_hi) == zero:
            return pid
    return -1


@njit(cache=True)
def solo_ambush_placement(grid: np.ndarray, amb_index: int, tb) -> int:
    """:func:`solo_ambush_pid` with the tables tuple."""
    return solo_ambush_pid(grid, amb_index, tb[8], tb[4])


# ---- the turn flow -----------------------------------------------------------------------------


@njit(cache=True)
def ambush_target(drawer: int, arrow: int, players: int) -> int:
    """The map that seat ``drawer`` draws the monster on: maps pass in the arrow's direction
    (clockwise = to seat + 1), so a drawer holds the map of seat - 1 (clockwise) or seat + 1."""
    if arrow > 0:
        return (drawer - 1 + players) % players
    return (drawer + 1) % players


@njit(cache=True, inline='always')
def score_season(st, tb) -> None:
    """Record the current season's score for every map: edicts, coins, monster points lost."""
    grid, coins, record, edicts, meta = st[0], st[1], st[8], st[5], st[6]
    ruins, seasons = tb[0], tb[3]
    s = meta[M_SEASON]
    scratch = np.empty(SCRATCH, np.int32)
    for p in range(meta[M_PLAYERS]):
        a = score_card_into(edicts[seasons[s, 1]], grid[p], ruins, scratch)
        b = score_card_into(edicts[seasons[s, 2]], grid[p], ruins, scratch)
        m = monster_penalty(grid[p])
        record[p, s, R_EDICT_X] = a
        record[p, s, R_EDICT_Y] = b
        record[p, s, R_COINS] = coins[p]
        record[p, s, R_MONSTERS] = m
        record[p, s, R_TOTAL] = a + b + coins[p] - m


@njit(cache=True)
def reshuffle(st) -> None:
    """Between seasons: all 13 explore cards, the unrevealed ambushes and one new ambush."""
    deck, amb, meta, rng = st[3], st[4], st[6], st[7]
    pos = meta[M_POS]
    n = N_EXPLORE_CARDS
    keep = np.empty(N_AMBUSH_CARDS, np.int8)
    k = 0
    for i in range(pos, meta[M_LEN]):
        if deck[i] >= N_EXPLORE_CARDS:
            keep[k] = deck[i]
            k += 1
    for i in range(N_EXPLORE_CARDS):
        deck[i] = i
    for i in range(k):
        deck[n] = keep[i]
        n += 1
    if meta[M_AMBUSHES] != 0 and meta[M_AMB_POS] < N_AMBUSH_CARDS:
        deck[n] = amb[meta[M_AMB_POS]]
        meta[M_AMB_POS] += 1
        n += 1
    for i in range(n, N_DECK_CARDS):
        deck[i] = -1
    shuffle_prefix(deck, n, rng)
    meta[M_POS] = 0
    meta[M_LEN] = n


@njit(cache=True, inline='always')
def next_season(st, tb) -> bool:
    """After :func:`score_season`: end the game (after winter) or reshuffle for the next season
    and reveal up to its first decision. The season end is ``score_season`` then ``next_season``,
    called when :func:`apply_action` returns True; they are kept apart (and apart from
    apply_action) so the large scoring code is linked into as few kernels as possible, which
    keeps the cold compile time down. Returns True when the new season ends at once (every
    seat passed its cards, see :func:`advance`)."""
    meta = st[6]
    s = meta[M_SEASON]
    meta[M_LAST_SEASON_END] = meta[M_TURNS]
    meta[M_SEASON] = s + 1
    meta[M_TIME] = 0
    if s + 1 >= 4:
        meta[M_PHASE] = PHASE_OVER
        meta[M_ACTOR] = -1
        meta[M_CARD] = -1
        return False
    reshuffle(st)
    return advance(st, tb)


@njit(cache=True)
def has_room(grid_row: np.ndarray) -> bool:
    """True when the map has an empty cell, i.e. some action is legal on it (a shape, or the 1x1
    fallback on any empty cell); a full map has none and its seat passes."""
    for c in range(N_CELLS):
        if grid_row[c] == EMPTY:
            return True
    return False


@njit(cache=True)
def next_seat_with_room(grid: np.ndarray, first: int, players: int, explore: bool, arrow: int) -> int:
    """The first seat from ``first`` whose decision map (its own when exploring, the ambush target
    otherwise) has room; ``players`` when every later seat passes."""
    for d in range(first, players):
        target = d if explore else ambush_target(d, arrow, players)
        if has_room(grid[target]):
            return d
    return players


@njit(cache=True)
def advance(st, tb) -> bool:
    """Reveal cards until a decision is needed (or the game ends): ruins set the constraint and
    reveal again; a solo ambush is drawn by decision 9; multiplayer ambushes and explore cards
    hand the decision to the first seat whose decision map has room. A card that every seat must
    pass (full maps) resolves here; when it brings the season's time to its limit this returns
    True and the caller scores the season (as after :func:`apply_action`)."""
    grid, deck, meta, cards = st[0], st[3], st[6], tb[2]
    players = meta[M_PLAYERS]
    while meta[M_PHASE] != PHASE_OVER:
        if meta[M_POS] >= meta[M_LEN]:
            raise ValueError("explore deck exhausted")
        card = deck[meta[M_POS]]
        meta[M_POS] += 1
        meta[M_CARD] = card
        meta[M_TIME] += cards[card, C_TIME]
        kind = cards[card, C_KIND]
        if kind == KIND_RUINS:
            meta[M_RUINS] = 1
            continue
        if kind == KIND_AMBUSH:
            meta[M_LAST_AMBUSH] = card
            if meta[M_PLAYERS] == 1:
                pid = solo_ambush_pid(grid[0], card - N_EXPLORE_CARDS, tb[8], tb[4])
                if pid >= 0:
                    draw(grid, st[1], st[2], meta[M_CAP], tb[1], tb[5], 0, pid, 0, MONSTER_T, False)
                continue  # time 0: an ambush never ends a season
            d = next_seat_with_room(grid, 0, players, False, cards[card, C_ARROW])
            if d == players:
                continue  # every target map is full: nothing to draw (time 0)
            meta[M_PHASE] = PHASE_AMBUSH
            meta[M_ACTOR] = d
            meta[M_TARGET] = ambush_target(d, cards[card, C_ARROW], players)
            return False
        d = next_seat_with_room(grid, 0, players, True, 0)
        if d < players:
            meta[M_PHASE] = PHASE_EXPLORE
            meta[M_ACTOR] = d
            meta[M_TARGET] = d
            return False
        meta[M_RUINS] = 0  # every map is full: the card is passed with nothing drawn
        if meta[M_TIME] >= tb[3][meta[M_SEASON], 0]:
            meta[M_PHASE] = PHASE_EXPLORE
            return True
    return False


@njit(cache=True)
def setup(st, tb, forced: np.ndarray, random_order: bool) -> None:
    """Start a game on fresh arrays: scoring cards (``forced`` int8[4] card per edict, or -1 to
    draw one per stack; shuffled onto the edicts when ``random_order``), the ambush pile, the
    explore deck (13 cards + 1 ambush). Follow with ``step(st, tb, -1)`` to reveal up to
    the first decision."""
    grid, coins, mtn_done, deck, amb, edicts, meta, rng, record = st
    for p in range(meta[M_PLAYERS]):
        for c in range(N_CELLS):
            grid[p, c] = tb[9][c]
        coins[p] = 0
        for m in range(mtn_done.shape[1]):
            mtn_done[p, m] = False
    record[:] = 0
    if forced[0] >= 0:
        for i in range(4):
            edicts[i] = forced[i]
    else:
        for i in range(4):
            edicts[i] = 4 * i + randint(rng, 4)
        if random_order:
            shuffle_prefix(edicts, 4, rng)
    for j in range(N_AMBUSH_CARDS):
        amb[j] = N_EXPLORE_CARDS + j
    shuffle_prefix(amb, N_AMBUSH_CARDS, rng)
    meta[M_SEASON] = 0
    meta[M_TIME] = 0
    meta[M_POS] = 0
    meta[M_AMB_POS] = 0
    meta[M_PHASE] = PHASE_EXPLORE
    meta[M_RUINS] = 0
    meta[M_TURNS] = 0
    meta[M_CARD] = -1
    meta[M_LAST_AMBUSH] = -1
    meta[M_LAST_SEASON_END] = -1
    for i in range(N_DECK_CARDS):
        deck[i] = -1
    n = N_EXPLORE_CARDS
    for i in range(N_EXPLORE_CARDS):
        deck[i] = i
    if meta[M_AMBUSHES] != 0:
        deck[n] = amb[0]
        meta[M_AMB_POS] = 1
        n += 1
    shuffle_prefix(deck, n, rng)
    meta[M_LEN] = n


# ---- decisions: masks, checks, actions ---------------------------------------------------------


@njit(cache=True)
def _legal_pid(bits, pid, f_lo, f_hi, r_lo, r_hi, require) -> bool:
    zero = np.uint64(0)
    lo = bits[pid, 0]
    hi = bits[pid, 1]
    if (lo & f_lo) != zero or (hi & f_hi) != zero:
        return False
    if require:
        return (lo & r_lo) != zero or (hi & r_hi) != zero
    return True


@njit(cache=True)
def decision_map(meta: np.ndarray) -> int:
    """The map the acting seat draws on (its own when exploring, the target's in an ambush)."""
    if meta[M_PHASE] == PHASE_AMBUSH:
        return meta[M_TARGET]
    return meta[M_ACTOR]


@njit(cache=True)
def enumerate_legal(grid: np.ndarray, ruins: np.ndarray, cards: np.ndarray, bits: np.ndarray,
                    start: np.ndarray, card: int, require: bool, buf: np.ndarray, first_only: bool) -> int:
    """Write the legal (shape option, placement id) pairs of ``card``'s shapes on one map
    ``grid`` into ``buf`` (int32[n, 2]) and return n; 0 means only the 1x1 fallback is legal.
    ``require``: the ruins constraint. ``first_only``: stop at the first legal one."""
    f_lo, f_hi = filled_bits(grid)
    r_lo, r_hi = empty_ruins_bits(grid, ruins)
    zero = np.uint64(0)
    if require and r_lo == zero and r_hi == zero:
        return 0
    n = 0
    for k in range(cards[card, C_NOPT]):
        s = cards[card, C_SHAPE + k]
        for pid in range(start[s], start[s + 1]):
            if _legal_pid(bits, pid, f_lo, f_hi, r_lo, r_hi, require):
                buf[n, 0] = k
                buf[n, 1] = pid
                n += 1
                if first_only:
                    return n
    return n


@njit(cache=True)
def _enumerate_current(st, tb, buf: np.ndarray, first_only: bool) -> int:
    """:func:`enumerate_legal` for the current decision of state ``st``."""
    meta = st[6]
    require = meta[M_PHASE] == PHASE_EXPLORE and meta[M_RUINS] != 0
    return enumerate_legal(st[0][decision_map(meta)], tb[0], tb[2], tb[4], tb[6], meta[M_CARD], require,
                           buf, first_only)


@njit(cache=True)
def _place_action(t: int, k: int, o: int, anchor: int) -> int:
    return PLACE_BASE + ((t * N_SHAPE_OPTIONS + k) * N_ORIENT + o) * N_CELLS + anchor


@njit(cache=True, inline='always')
def decode_place(action: int) -> tuple[int, int, int, int]:
    """The ``(terrain option, shape option, orientation, anchor)`` of a placing action (the inverse of
    the action numbering)."""
    rel = action - PLACE_BASE
    anchor = rel % N_CELLS
    rest = rel // N_CELLS
    o = rest % N_ORIENT
    rest //= N_ORIENT
    return rest // N_SHAPE_OPTIONS, rest % N_SHAPE_OPTIONS, o, anchor


@njit(cache=True)
def legal_mask_into(st, tb, buf: np.ndarray, mask: np.ndarray) -> int:
    """Fill ``mask`` (bool[NUM_ACTIONS]) for the current decision; ``buf`` is int32[>=2000, 2]
    scratch. Returns the number of legal actions."""
    meta, cards, pl_cells = st[6], tb[2], tb[5]
    mask[:] = False
    if meta[M_PHASE] == PHASE_OVER:
        return 0
    n = _enumerate_current(st, tb, buf, False)
    card = meta[M_CARD]
    grid = st[0][decision_map(meta)]
    count = 0
    if meta[M_PHASE] == PHASE_EXPLORE:
        if n > 0:
            nterr = cards[card, C_NTERR]
            for i in range(n):
                pid = buf[i, 1]
                for t in range(nterr):
                    mask[_place_action(t, buf[i, 0], pl_cells[pid, 5], pl_cells[pid, 6])] = True
                    count += 1
        else:
            for cell in range(N_CELLS):
                if grid[cell] == EMPTY:
                    for t in range(5):
                        mask[FALLBACK_BASE + t * N_CELLS + cell] = True
                        count += 1
        return count
    if n > 0:
        for i in range(n):
            pid = buf[i, 1]
            mask[AMBUSH_BASE + pl_cells[pid, 5] * N_CELLS + pl_cells[pid, 6]] = True
            count += 1
    else:
        for cell in range(N_CELLS):
            if grid[cell] == EMPTY:
                mask[AMBUSH_FALLBACK_BASE + cell] = True
                count += 1
    return count


@njit(cache=True)
def check_action(st, tb, action: int) -> int:
    """0 when ``action`` is legal now, else a reason code (E_*)."""
    meta, cards, pl_index, bits, pl_cells = st[6], tb[2], tb[7], tb[4], tb[5]
    if meta[M_PHASE] == PHASE_OVER:
        return E_OVER
    if action < 0 or action >= NUM_ACTIONS:
        return E_RANGE
    card = meta[M_CARD]
    grid = st[0][decision_map(meta)]
    explore = meta[M_PHASE] == PHASE_EXPLORE
    if action < FALLBACK_BASE or (AMBUSH_BASE <= action < AMBUSH_FALLBACK_BASE):
        if explore != (action < FALLBACK_BASE):
            return E_PHASE
        if explore:
            anchor = action % N_CELLS
            rest = action // N_CELLS
            o = rest % N_ORIENT
            rest //= N_ORIENT
            k = rest % N_SHAPE_OPTIONS
            t = rest // N_SHAPE_OPTIONS
            if t >= cards[card, C_NTERR]:
                return E_TERRAIN
            if k >= cards[card, C_NOPT]:
                return E_SHAPE
        else:
            anchor = (action - AMBUSH_BASE) % N_CELLS
            o = (action - AMBUSH_BASE) // N_CELLS
            k = 0
        s = cards[card, C_SHAPE + k]
        pid = pl_index[s, o, anchor]
        if pid < 0:
            # does orientation o exist at all?
            exists = False
            for a in range(N_CELLS):
                if pl_index[s, o, a] >= 0:
                    exists = True
                    break
            return E_OFFMAP if exists else E_ORIENT
        for j in range(pl_cells[pid, 7]):
            if grid[pl_cells[pid, j]] != EMPTY:
                return E_FILLED
        if explore and meta[M_RUINS] != 0:
            r_lo, r_hi = empty_ruins_bits(grid, tb[0])
            zero = np.uint64(0)
            if (bits[pid, 0] & r_lo) == zero and (bits[pid, 1] & r_hi) == zero:
                return E_RUINS
        return OK
    # the 1x1 fallbacks
    if explore != (action < AMBUSH_BASE):
        return E_PHASE
    cell = (action - FALLBACK_BASE) % N_CELLS if explore else action - AMBUSH_FALLBACK_BASE
    if grid[cell] != EMPTY:
        return E_CELL_FILLED
    if _enumerate_current(st, tb, np.empty((1, 2), np.int32), True) > 0:
        return E_FALLBACK_WHILE_FITS
    return OK


@njit(cache=True)
def apply_decision(st, tb, action: int) -> bool:
    """Draw ``action`` for the acting seat and pass the decision on; True once every seat has
    acted on the current card (the card is then resolved)."""
    meta, cards, pl_index = st[6], tb[2], tb[7]
    card = meta[M_CARD]
    players = meta[M_PLAYERS]
    meta[M_TURNS] += 1
    explore = meta[M_PHASE] == PHASE_EXPLORE
    p = meta[M_ACTOR] if explore else meta[M_TARGET]
    pid = -1
    cell = 0
    coin = False
    terrain = MONSTER_T
    if action < FALLBACK_BASE:
        t, k, o, anchor = decode_place(action)
        pid = pl_index[cards[card, C_SHAPE + k], o, anchor]
        terrain = cards[card, C_TERR + t]
        coin = cards[card, C_COIN + k] != 0
    elif action < AMBUSH_BASE:
        rel = action - FALLBACK_BASE
        cell = rel % N_CELLS
        terrain = FOREST + rel // N_CELLS
    elif action < AMBUSH_FALLBACK_BASE:
        rel = action - AMBUSH_BASE
        pid = pl_index[cards[card, C_SHAPE], rel // N_CELLS, rel % N_CELLS]
    else:
        cell = action - AMBUSH_FALLBACK_BASE
    draw(st[0], st[1], st[2], meta[M_CAP], tb[1], tb[5], p, pid, cell, terrain, coin)
    d = next_seat_with_room(st[0], meta[M_ACTOR] + 1, players, explore, cards[card, C_ARROW])
    if d < players:
        meta[M_ACTOR] = d
        meta[M_TARGET] = d if explore else ambush_target(d, cards[card, C_ARROW], players)
        return False
    if explore:
        meta[M_RUINS] = 0
    return True


@njit(cache=True)
def apply_action(st, tb, action: int) -> bool:
    """Apply a legal ``action`` for the acting seat, then reveal cards up to the next decision.
    Returns True instead when a card resolved brings the season's time to its limit: the caller
    must then call :func:`score_season` and :func:`next_season` (as :func:`step` does). Does not
    validate: call :func:`check_action` first. ``action`` = -1 only reveals (right after
    :func:`setup`)."""
    if action >= 0:
        if not apply_decision(st, tb, action):
            return False
        if st[6][M_TIME] >= tb[3][st[6][M_SEASON], 0]:
            return True
    return advance(st, tb)


# ---- random policy and whole-game loops --------------------------------------------------------

REJECTION_TRIES = 24


@njit(cache=True)
def _rejection_sample(grid: np.ndarray, cards: np.ndarray, bits: np.ndarray, start: np.ndarray, card: int,
                      policy_rng: np.ndarray) -> tuple:
    """(placement id, shape option) drawn uniformly among the legal placements of ``card``'s
    shapes on ``grid`` by rejection (no ruins constraint), or (-1, -1) after REJECTION_TRIES
    misses."""
    f_lo, f_hi = filled_bits(grid)
    s0 = cards[card, C_SHAPE]
    n0 = start[s0 + 1] - start[s0]
    total = n0
    s1 = -1
    if cards[card, C_NOPT] > 1:
        s1 = cards[card, C_SHAPE + 1]
        total += start[s1 + 1] - start[s1]
    zero = np.uint64(0)
    for _ in range(REJECTION_TRIES):
        r = randint(policy_rng, total)
        if r < n0:
            pid = start[s0] + r
            k = 0
        else:
            pid = start[s1] + r - n0
            k = 1
        if (bits[pid, 0] & f_lo) == zero and (bits[pid, 1] & f_hi) == zero:
            return pid, k
    return -1, -1


@njit(cache=True)
def random_action(st, tb, policy_rng: np.ndarray, buf: np.ndarray) -> int:
    """A uniformly random legal action of the current decision (no mask is built).

    Without a ruins constraint it first tries rejection sampling: up to REJECTION_TRIES uniform
    draws over all placements of the offered shapes; then it enumerates the legal ones. Both
    stages are uniform over the legal placements, so the mixture is too; the terrain option is
    drawn uniformly on top (every placement offers the same terrains)."""
    meta, cards, pl_cells = st[6], tb[2], tb[5]
    card = meta[M_CARD]
    grid = st[0][decision_map(meta)]
    if meta[M_PHASE] == PHASE_AMBUSH or meta[M_RUINS] == 0:
        pid, k = _rejection_sample(grid, cards, tb[4], tb[6], card, policy_rng)
        if pid >= 0:
            if meta[M_PHASE] == PHASE_AMBUSH:
                return AMBUSH_BASE + pl_cells[pid, 5] * N_CELLS + pl_cells[pid, 6]
            t = randint(policy_rng, cards[card, C_NTERR])
            return _place_action(t, k, pl_cells[pid, 5], pl_cells[pid, 6])
    n = _enumerate_current(st, tb, buf, False)
    if meta[M_PHASE] == PHASE_EXPLORE:
        if n > 0:
            nterr = cards[card, C_NTERR]
            r = randint(policy_rng, n * nterr)
            i = r // nterr
            pid = buf[i, 1]
            return _place_action(r % nterr, buf[i, 0], pl_cells[pid, 5], pl_cells[pid, 6])
    elif n > 0:
        pid = buf[randint(policy_rng, n), 1]
        return AMBUSH_BASE + pl_cells[pid, 5] * N_CELLS + pl_cells[pid, 6]
    empties = 0
    for cell in range(N_CELLS):
        if grid[cell] == EMPTY:
            empties += 1
    if empties == 0:
        raise ValueError("no empty cell left for the 1x1 fallback")
    per_cell = 5 if meta[M_PHASE] == PHASE_EXPLORE else 1
    r = randint(policy_rng, empties * per_cell)
    k = r // per_cell
    for cell in range(N_CELLS):
        if grid[cell] == EMPTY:
            if k == 0:
                if per_cell == 5:
                    return FALLBACK_BASE + (r % 5) * N_CELLS + cell
                return AMBUSH_FALLBACK_BASE + cell
            k -= 1
    return -1


@njit(cache=True)
def step(st, tb, action: int) -> None:
    """Apply a legal ``action`` (-1: only reveal, after :func:`setup`) and, when it ends the
    season, score the season and turn to the next one, again while seasons pass without a decision
    (full maps): the whole engine step (the Python engine, the env and every compiled loop use it)."""
    season_over = apply_action(st, tb, action)
    while season_over:
        score_season(st, tb)
        season_over = next_season(st, tb)


@njit(cache=True)
def play_random(st, tb, policy_rng: np.ndarray, actions_out: np.ndarray) -> int:
    """Play the game in ``st`` to the end with the uniform random policy (any number of seats,
    from any state). Actions are written to ``actions_out`` while it has room; returns the number
    of actions taken."""
    buf = np.empty((4096, 2), np.int32)
    n = 0
    meta = st[6]
    while meta[M_PHASE] != PHASE_OVER:
        a = random_action(st, tb, policy_rng, buf)
        if n < actions_out.shape[0]:
            actions_out[n] = a
        n += 1
        step(st, tb, a)
    return n


@njit(cache=True)
def totals(record: np.ndarray) -> np.ndarray:
    """Final (or running) score per seat: the sum of the recorded season totals."""
    out = np.zeros(record.shape[0], np.int64)
    for p in range(record.shape[0]):
        for s in range(4):
            out[p] += record[p, s, R_TOTAL]
    return out


@njit(cache=True)
def new_solo_arrays(tb):
    """Empty state arrays (the ``st`` tuple) of one solo game, for compiled many-game loops."""
    return (np.zeros((1, N_CELLS), np.int8), np.zeros(1, np.int16), np.zeros((1, tb[1].shape[0]), np.bool_),
            np.full(N_DECK_CARDS, -1, np.int8), np.zeros(N_AMBUSH_CARDS, np.int8), np.zeros(4, np.int8),
            np.zeros(N_META, np.int32), np.zeros(1, np.uint64), np.zeros((1, 4, 5), np.int16))


@njit(cache=True)
def start_solo_game(st, tb, game_seed: int, cap: int, ambushes: bool, random_order: bool) -> None:
    """Reset ``st`` to a new solo game whose chance stream starts from ``game_seed``, dealt and
    revealed up to the first decision (the start every compiled many-game loop shares)."""
    meta, rng = st[6], st[7]
    meta[:] = 0
    meta[M_PLAYERS] = 1
    meta[M_CAP] = cap
    meta[M_AMBUSHES] = 1 if ambushes else 0
    rng[0] = np.uint64(game_seed) * np.uint64(0x9E3779B97F4A7C15)
    setup(st, tb, np.full(4, -1, np.int8), random_order)
    step(st, tb, -1)


@njit(cache=True)
def random_solo_games(tb, n_games: int, seed: int, cap: int, ambushes: bool, random_order: bool,
                      out_totals: np.ndarray) -> None:
    """Benchmark/simulation loop: ``n_games`` solo games with random play entirely in numba.
    The game chance stream starts from ``seed`` + game index; ``out_totals[g]`` = final score."""
    st = new_solo_arrays(tb)
    meta, record = st[6], st[8]
    policy = np.zeros(1, np.uint64)
    buf = np.empty((4096, 2), np.int32)
    for g in range(n_games):
        start_solo_game(st, tb, seed + g, cap, ambushes, random_order)
        # the policy stream derives from the game seed's first chance word, as before setup used it
        policy[0] = (np.uint64(seed + g) * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(0xD1B54A32D192ED03)
        while meta[M_PHASE] != PHASE_OVER:
            step(st, tb, random_action(st, tb, policy, buf))
        out_totals[g] = record[0, 0, R_TOTAL] + record[0, 1, R_TOTAL] + record[0, 2, R_TOTAL] \
            + record[0, 3, R_TOTAL]


@njit(cache=True)
def env_step(st, tb, action: int, player: int, buf: np.ndarray, mask: np.ndarray, obs: np.ndarray) -> int:
    """One env step in a single call (the solo env's fast path): check ``action`` (on an illegal
    one return its E_* code and touch nothing), apply it, score and turn the season when it ends,
    then write the new legal ``mask`` (bool) and ``player``'s observation ``obs``. Returns OK."""
    code = check_action(st, tb, action)
    if code != OK:
        return code
    step(st, tb, action)
    legal_mask_into(st, tb, buf, mask)
    observation_into(st, tb, player, obs)
    return OK


@njit(cache=True)
def observation_into(st, tb, player: int, out: np.ndarray) -> None:
    """Fill ``out`` (float32[OBS_SIZE]) for ``player``; layout in OBS_LAYOUT."""
    grid, coins, edicts, meta = st[0], st[1], st[5], st[6]
    out[:] = 0.0
    g = grid[player]
    for c in range(N_CELLS):
        out[g[c] * N_CELLS + c] = 1.0
        if tb[0][c]:
            out[8 * N_CELLS + c] = 1.0
    off = 9 * N_CELLS
    if meta[M_PHASE] == PHASE_AMBUSH and meta[M_ACTOR] == player:
        tg = grid[meta[M_TARGET]]
        for c in range(N_CELLS):
            out[off + tg[c] * N_CELLS + c] = 1.0
    off += 8 * N_CELLS
    card = meta[M_CARD]
    if card >= 0 and meta[M_PHASE] != PHASE_OVER:
        out[off + card] = 1.0
    off += N_DECK_CARDS
    s = meta[M_SEASON]
    if s < 4:
        out[off + s] = 1.0
        out[off + 4] = meta[M_TIME] / 8.0
        out[off + 5] = tb[3][s, 0] / 8.0
        out[off + 6 + tb[3][s, 1]] = 1.0
        out[off + 6 + tb[3][s, 2]] = 1.0
    off += 10
    out[off] = coins[player] / 14.0
    out[off + 1] = 1.0 if meta[M_RUINS] != 0 else 0.0
    if meta[M_PHASE] == PHASE_EXPLORE:
        out[off + 2] = 1.0
    elif meta[M_PHASE] == PHASE_AMBUSH:
        out[off + 3] = 1.0
    off += 4
    for e in range(4):
        out[off + e * 16 + edicts[e]] = 1.0


#: observation layout (name, start, length)
OBS_LAYOUT = (
    ("own_map_terrain_onehot_8x121", 0, 8 * N_CELLS),
    ("ruins_121", 8 * N_CELLS, N_CELLS),
    ("ambush_target_map_onehot_8x121", 9 * N_CELLS, 8 * N_CELLS),
    ("current_card_onehot_17", 17 * N_CELLS, N_DECK_CARDS),
    ("season_onehot_4_time_threshold_active_edicts_4", 17 * N_CELLS + N_DECK_CARDS, 10),
    ("coins_ruins_pending_phase_explore_ambush", 17 * N_CELLS + N_DECK_CARDS + 10, 4),
    ("edict_cards_onehot_4x16", 17 * N_CELLS + N_DECK_CARDS + 14, 64),
)
OBS_SIZE = 17 * N_CELLS + N_DECK_CARDS + 14 + 64


_DEFAULT_TABLES: list[Tables] = []


def default_tables() -> Tables:
    """Tables of map side A from the default data file (ambush and explore shapes do not depend
    on the side), built once per process."""
    if not _DEFAULT_TABLES:
        _DEFAULT_TABLES.append(build_tables(load_cartographers_data(), "A"))
    return _DEFAULT_TABLES[0]


def solo_ambush_cells(grid: np.ndarray, ambush_index: int, tb: Tables | None = None) -> np.ndarray:
    """Flat cells (int16) where solo ambush ``ambush_index`` (0..3 = ids 1..4: Goblin Attack,
    Bugbear Assault, Kobold Onslaught, Gnoll Raid) is drawn on ``grid`` by decision 9: unrotated,
    ring by ring from the card's corner in its arrow's direction; empty when it is ignored.
    A thin Python wrapper over the njit :func:`solo_ambush_placement`."""
    if not 0 <= int(ambush_index) < N_AMBUSH_CARDS:
        raise ValueError(f"ambush_index must be 0..{N_AMBUSH_CARDS - 1}, got {ambush_index}")
    tb = tb if tb is not None else default_tables()
    pid = solo_ambush_placement(np.ascontiguousarray(grid, dtype=np.int8).reshape(N_CELLS),
                                int(ambush_index), tb)
    if pid < 0:
        return np.zeros(0, dtype=np.int16)
    return tb.pl_cells[pid, : tb.pl_cells[pid, 7]].copy()
