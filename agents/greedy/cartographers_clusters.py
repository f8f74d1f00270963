"""Cluster-card terms of a candidate placement from the decision map's clusters, for the greedy
valuation's fast path (:func:`agents.greedy.cartographers_kernels.fast_value`).

A placement of one connected shape in terrain ``T`` changes the clusters of ``T`` only by merging
the placed cells with the ``T`` clusters they touch; every other cluster keeps its cells. So the
decision map's clusters are labelled once per decision (:func:`cluster_base_into`) with what the
cards read of each, and a candidate is valued from the few clusters its cells touch:

* **Stoneside Forest** (card 3): each forest cluster's set of touched mountains (a bit mask) and
  its distance to every mountain; the merged cluster's are the union and the minimum. The
  progress term (:func:`agents.greedy.cartographers_kernels._stoneside_progress`) takes a
  maximum per mountain, which does not depend on the clusters' order.
* **Shoreside Expanse** (card 7): which farm and water clusters touch neither the other terrain
  nor the edge.
* **Greengold Plains** (card 10): each village cluster's set of neighbouring kinds. Its progress
  term is a float sum in label order, and a label's order is its first cell's, so the merged
  cluster is summed where its first cell puts it: the same additions in the same order, bit for
  bit.
* **Wildholds, Great City, Shieldgate** (cards 8, 9, 11): each village cluster's size and whether
  it touches a mountain; the merged cluster's size is the sum and it touches one if a part does.
  Wildholds' progress term is summed in label order as Greengold's is.

A placement whose cells are not connected (never a shape of the game) is valued on the whole
map, as is everything when the decision map has more than ``MAX_MOUNTAINS`` mountains. Tests
compare every candidate of many decisions, with these cards in play, with the whole-map value.
"""

from __future__ import annotations

import numpy as np

from envs.cartographers.kernels import (
    _LAB,
    _SIZ,
    COLS,
    FARM,
    FOREST,
    MONSTER_T,
    MOUNTAIN,
    N_CELLS,
    VILLAGE,
    WATER,
    _has_neighbor,
    _neighbor,
    _on_edge,
    hot_jit,
    label_terrain,
)

#: mountains a forest cluster's bit mask can name; more and the cards are valued on the whole map
MAX_MOUNTAINS = 8
#: offsets in the per-decision cluster array (int32[LEN]): labels per cell for forest, farm,
#: water and village; per forest cluster its mountain mask, its distance to the untouched
#: mountains (as the progress term measures it) and to each mountain; per farm / water cluster
#: whether it is isolated; per village cluster its kinds mask and first cell; label stamps (the
#: placed terrain's clusters, and for Shoreside the other terrain's)
LAB_FOREST, LAB_FARM, LAB_WATER, LAB_VILLAGE = 0, N_CELLS, 2 * N_CELLS, 3 * N_CELLS
FOREST_MASK, FOREST_D, FOREST_DIST = 4 * N_CELLS, 5 * N_CELLS, 6 * N_CELLS
FARM_ISO, WATER_ISO = (6 + MAX_MOUNTAINS) * N_CELLS, (7 + MAX_MOUNTAINS) * N_CELLS
VIL_KINDS, VIL_FIRST = (8 + MAX_MOUNTAINS) * N_CELLS, (9 + MAX_MOUNTAINS) * N_CELLS
STAMP, STAMP_OTHER = (10 + MAX_MOUNTAINS) * N_CELLS, (11 + MAX_MOUNTAINS) * N_CELLS
#: per village cluster its size and whether it touches a mountain
VIL_SIZE, VIL_MOUNTAIN = (12 + MAX_MOUNTAINS) * N_CELLS, (13 + MAX_MOUNTAINS) * N_CELLS
#: header: cluster counts, Shoreside's isolated count, Stoneside's linked mountains, Greengold's
#: scoring clusters, the stamp counter, and whether each card's figures are ready
HEAD = (14 + MAX_MOUNTAINS) * N_CELLS
N_FOREST, N_FARM, N_WATER, N_VILLAGE, ISOLATED, LINKED, GREENGOLD, STAMP_NOW, READY = range(HEAD, HEAD + 9)
LEN = HEAD + 9
#: the kinds Greengold Plains counts around a village cluster
KINDS = (1 << FOREST) | (1 << FARM) | (1 << WATER) | (1 << MONSTER_T) | (1 << MOUNTAIN)
#: no distance yet (as the progress term initialises it)
FAR = 99


@hot_jit
def is_cluster(card: int) -> bool:
    """Whether :func:`cluster_terms` values scoring card ``card``."""
    return card == 3 or card == 7 or 8 <= card <= 11


@hot_jit
def _popcount(x: int) -> int:
    count = 0
    while x:
        x &= x - 1
        count += 1
    return count


@hot_jit
def distance(cell: int, mountain: int) -> int:
    """Cells still missing between ``cell`` and ``mountain`` (Manhattan distance - 1)."""
    return abs(cell // COLS - mountain // COLS) + abs(cell % COLS - mountain % COLS) - 1


@hot_jit
def _copy_labels(scratch: np.ndarray, cl: np.ndarray, at: int) -> None:
    for cell in range(N_CELLS):
        cl[at + cell] = scratch[_LAB + cell]


@hot_jit
def _ready_bit(card: int) -> int:
    return 1 if card == 3 else (2 if card == 7 else 4)


@hot_jit
def cluster_base_into(edicts: np.ndarray, ew: np.ndarray, grid: np.ndarray, mountains: np.ndarray,
                      cl: np.ndarray, scratch: np.ndarray) -> None:
    """The decision map's cluster figures into ``cl`` (int32[LEN]) for the cluster cards among
    the ``edicts`` with weight (``scratch``: int32[SCRATCH])."""
    cl[READY] = 0
    cl[STAMP_NOW] = 0
    for i in range(N_CELLS):
        cl[STAMP + i] = 0
        cl[STAMP_OTHER + i] = 0
    for e in range(4):
        card = edicts[e]
        if ew[e] <= 0.0 or not is_cluster(card) or cl[READY] & _ready_bit(card):
            continue
        if card == 3:
            if mountains.shape[0] > MAX_MOUNTAINS:
                continue
            _forest_base(grid, mountains, cl, scratch)
        elif card == 7:
            cl[ISOLATED] = (_isolated_base(grid, FARM, WATER, cl, LAB_FARM, FARM_ISO, N_FARM, scratch)
                            + _isolated_base(grid, WATER, FARM, cl, LAB_WATER, WATER_ISO, N_WATER, scratch))
        else:
            _village_base(grid, cl, scratch)
        cl[READY] |= _ready_bit(card)


@hot_jit
def _forest_base(grid: np.ndarray, mountains: np.ndarray, cl: np.ndarray, scratch: np.ndarray) -> None:
    n = label_terrain(grid, FOREST, scratch)
    _copy_labels(scratch, cl, LAB_FOREST)
    cl[N_FOREST] = n
    nm = mountains.shape[0]
    for i in range(n):
        cl[FOREST_MASK + i] = 0
        for m in range(nm):
            cl[FOREST_DIST + i * MAX_MOUNTAINS + m] = FAR
    for m in range(nm):
        for k in range(4):
            nb = _neighbor(mountains[m], k)
            if nb >= 0 and cl[LAB_FOREST + nb] >= 0:
                cl[FOREST_MASK + cl[LAB_FOREST + nb]] |= 1 << m
    for cell in range(N_CELLS):
        lab = cl[LAB_FOREST + cell]
        if lab < 0:
            continue
        for m in range(nm):
            d = distance(cell, mountains[m])
            if d < cl[FOREST_DIST + lab * MAX_MOUNTAINS + m]:
                cl[FOREST_DIST + lab * MAX_MOUNTAINS + m] = d
    linked = 0
    for i in range(n):
        mask = cl[FOREST_MASK + i]
        if _popcount(mask) >= 2:
            linked |= mask
        d = FAR
        for m in range(nm):
            if not mask & (1 << m):
                d = min(d, cl[FOREST_DIST + i * MAX_MOUNTAINS + m])
        cl[FOREST_D + i] = d
    cl[LINKED] = linked


@hot_jit
def _isolated_base(grid: np.ndarray, terrain: int, other: int, cl: np.ndarray, lab_at: int, iso_at: int,
                   n_at: int, scratch: np.ndarray) -> int:
    n = label_terrain(grid, terrain, scratch)
    _copy_labels(scratch, cl, lab_at)
    cl[n_at] = n
    for i in range(n):
        cl[iso_at + i] = 1
    for cell in range(N_CELLS):
        lab = cl[lab_at + cell]
        if lab >= 0 and cl[iso_at + lab] and (_on_edge(cell) or _has_neighbor(grid, cell, other)):
            cl[iso_at + lab] = 0
    count = 0
    for i in range(n):
        count += cl[iso_at + i]
    return count


@hot_jit
def _kinds_around(grid: np.ndarray, cell: int) -> int:
    kinds = 0
    for k in range(4):
        nb = _neighbor(cell, k)
        if nb >= 0:
            kinds |= 1 << grid[nb]
    return kinds & KINDS


@hot_jit
def _village_base(grid: np.ndarray, cl: np.ndarray, scratch: np.ndarray) -> None:
    n = label_terrain(grid, VILLAGE, scratch)
    _copy_labels(scratch, cl, LAB_VILLAGE)
    cl[N_VILLAGE] = n
    for i in range(n):
        cl[VIL_KINDS + i] = 0
        cl[VIL_FIRST + i] = -1
        cl[VIL_SIZE + i] = scratch[_SIZ + i]
        cl[VIL_MOUNTAIN + i] = 0
    for cell in range(N_CELLS):
        lab = cl[LAB_VILLAGE + cell]
        if lab < 0:
            continue
        if cl[VIL_FIRST + lab] < 0:
            cl[VIL_FIRST + lab] = cell
        cl[VIL_KINDS + lab] |= _kinds_around(grid, cell)
        if _has_neighbor(grid, cell, MOUNTAIN):
            cl[VIL_MOUNTAIN + lab] = 1
    scoring = 0
    for i in range(n):
        if _popcount(cl[VIL_KINDS + i]) >= 3:
            scoring += 1
    cl[GREENGOLD] = scoring


@hot_jit
def _connected(cells: np.ndarray, ncells: int) -> bool:
    """Whether the placed cells form one orthogonally connected piece."""
    reached = 1
    grew = True
    while grew:
        grew = False
        for j in range(ncells):
            if reached & (1 << j):
                continue
            for i in range(ncells):
                if reached & (1 << i) and _adjacent(cells[i], cells[j]):
                    reached |= 1 << j
                    grew = True
                    break
    return reached == (1 << ncells) - 1


@hot_jit
def _adjacent(a: int, b: int) -> bool:
    for k in range(4):
        if _neighbor(a, k) == b:
            return True
    return False


@hot_jit
def _next_stamp(cl: np.ndarray) -> int:
    cl[STAMP_NOW] += 1
    return cl[STAMP_NOW]


@hot_jit
def can_value(card: int, cells: np.ndarray, ncells: int, cl: np.ndarray) -> bool:
    """Whether :func:`cluster_terms` can value ``card`` for this placement (else: whole map)."""
    return bool(cl[READY] & _ready_bit(card)) and ncells <= 30 and _connected(cells, ncells)


@hot_jit
def cluster_terms(card: int, drawn: np.ndarray, cells: np.ndarray, ncells: int, mountains: np.ndarray,
                  weight: float, cl: np.ndarray) -> float:
    """``card_terms`` of cluster card ``card`` on ``drawn`` (the decision map plus the connected
    ``cells[:ncells]``, empty before, in one terrain) from the decision map's figures in ``cl``;
    ``weight``: the card's progress weight (``stoneside`` for card 3, ``clusters`` for cards 8 and 10)."""
    terrain = drawn[cells[0]]
    if card == 7:
        return float(3 * _shoreside(drawn, terrain, cells, ncells, cl))
    if card == 3:
        return _stoneside(cells, ncells, mountains, weight, cl)
    if card == 10:
        return _greengold(drawn, terrain, cells, ncells, weight, cl)
    return _village_sizes(card, drawn, terrain, cells, ncells, weight, cl)


@hot_jit
def _shoreside(drawn: np.ndarray, terrain: int, cells: np.ndarray, ncells: int, cl: np.ndarray) -> int:
    """Shoreside Expanse's isolated farm and water clusters after a placement (any terrain)."""
    if terrain != FARM and terrain != WATER:
        return cl[ISOLATED]
    other = WATER if terrain == FARM else FARM
    lab_at, iso_at = (LAB_FARM, FARM_ISO) if terrain == FARM else (LAB_WATER, WATER_ISO)
    other_lab, other_iso = (LAB_WATER, WATER_ISO) if terrain == FARM else (LAB_FARM, FARM_ISO)
    count = cl[ISOLATED]
    merged_isolated = True
    stamp = _next_stamp(cl)
    for j in range(ncells):
        cell = cells[j]
        if _on_edge(cell):
            merged_isolated = False
        for k in range(4):
            nb = _neighbor(cell, k)
            if nb < 0:
                continue
            if drawn[nb] == other:
                merged_isolated = False
                lab = cl[other_lab + nb]
                if cl[STAMP_OTHER + lab] != stamp:  # a cluster of the other terrain: not isolated now
                    cl[STAMP_OTHER + lab] = stamp
                    count -= cl[other_iso + lab]
            elif drawn[nb] == terrain:
                lab = cl[lab_at + nb]
                if lab >= 0 and cl[STAMP + lab] != stamp:  # merged into the placed piece
                    cl[STAMP + lab] = stamp
                    count -= cl[iso_at + lab]
                    if not cl[iso_at + lab]:
                        merged_isolated = False
    if merged_isolated:
        count += 1
    return count


@hot_jit
def _stoneside(cells: np.ndarray, ncells: int, mountains: np.ndarray, weight: float, cl: np.ndarray) -> float:
    """Stoneside Forest's points (and progress term) after a forest placement."""
    nm = mountains.shape[0]
    stamp = _next_stamp(cl)
    mask = 0
    for j in range(ncells):  # the merged cluster: the placed cells and the forest clusters they touch
        for k in range(4):
            nb = _neighbor(cells[j], k)
            if nb < 0:
                continue
            lab = cl[LAB_FOREST + nb]
            if lab >= 0 and cl[STAMP + lab] != stamp:
                cl[STAMP + lab] = stamp
                mask |= cl[FOREST_MASK + lab]
            for m in range(nm):
                if mountains[m] == nb:
                    mask |= 1 << m
    linked = cl[LINKED]
    if _popcount(mask) >= 2:
        linked |= mask
    points = 3 * _popcount(linked)
    if weight == 0.0:
        return float(points)
    d_merged = FAR
    for m in range(nm):
        if mask & (1 << m):
            continue
        for j in range(ncells):
            d_merged = min(d_merged, distance(cells[j], mountains[m]))
        for i in range(cl[N_FOREST]):
            if cl[STAMP + i] == stamp:
                d_merged = min(d_merged, cl[FOREST_DIST + i * MAX_MOUNTAINS + m])
    value = 0.0
    for m in range(nm):
        bit = 1 << m
        if linked & bit:
            continue
        best = 0.0
        for i in range(cl[N_FOREST]):
            if cl[STAMP + i] != stamp and cl[FOREST_MASK + i] == bit:
                best = max(best, link_progress(cl[FOREST_D + i]))
        if mask == bit:
            best = max(best, link_progress(d_merged))
        value += best
    return points + 3.0 * weight * value


@hot_jit
def greengold_progress(kinds: int) -> float:
    """One village cluster's Greengold Plains progress: ``3 x (kinds / 3) ** 3`` below 3 kinds
    (the greedy progress term's rule; its whole-map form calls this too)."""
    if kinds >= 3:
        return 0.0
    return 3.0 * (kinds / 3.0) ** 3


@hot_jit
def link_progress(missing: int) -> float:
    """Stoneside Forest progress of a forest cluster ``missing`` cells short of another mountain:
    ``(1 - missing / 6) ** 2``, 0 from 6 on (its whole-map form calls this too)."""
    f = max(0.0, 1.0 - missing / 6.0)
    return f * f


@hot_jit
def _greengold(drawn: np.ndarray, terrain: int, cells: np.ndarray, ncells: int, weight: float,
               cl: np.ndarray) -> float:
    """Greengold Plains' points (and progress term) after a placement in ``terrain``."""
    n = cl[N_VILLAGE]
    stamp = _next_stamp(cl)
    bit = (1 << terrain) & KINDS
    merged_kinds = 0
    merged_first = N_CELLS
    for j in range(ncells):  # the clusters the placed cells touch
        if terrain == VILLAGE:
            merged_kinds |= _kinds_around(drawn, cells[j])
            merged_first = min(merged_first, cells[j])
        for k in range(4):
            nb = _neighbor(cells[j], k)
            if nb >= 0 and cl[LAB_VILLAGE + nb] >= 0:
                cl[STAMP + cl[LAB_VILLAGE + nb]] = stamp
    points = cl[GREENGOLD]
    for i in range(n):
        if cl[STAMP + i] != stamp:
            continue
        kinds = cl[VIL_KINDS + i]
        scored = _popcount(kinds) >= 3
        if terrain == VILLAGE:  # merged into the placed piece
            points -= int(scored)
            merged_kinds |= kinds
            merged_first = min(merged_first, cl[VIL_FIRST + i])
        else:  # gains the placed terrain as a neighbour
            points += int(_popcount(kinds | bit) >= 3) - int(scored)
    if terrain == VILLAGE:
        points += int(_popcount(merged_kinds) >= 3)
    points *= 3
    if weight == 0.0:
        return float(points)
    value = 0.0
    pending = terrain == VILLAGE
    for i in range(n):
        if pending and merged_first < cl[VIL_FIRST + i]:
            value += greengold_progress(_popcount(merged_kinds))
            pending = False
        if cl[STAMP + i] != stamp:
            value += greengold_progress(_popcount(cl[VIL_KINDS + i]))
        elif terrain != VILLAGE:
            value += greengold_progress(_popcount(cl[VIL_KINDS + i] | bit))
    if pending:
        value += greengold_progress(_popcount(merged_kinds))
    return points + weight * value



@hot_jit
def wildholds_progress(size: int) -> float:
    """One village cluster's Wildholds progress: ``8 x (size / 6) ** 3`` below 6 cells (the greedy
    progress term's rule; its whole-map form calls this too)."""
    if size >= 6:
        return 0.0
    return 8.0 * (size / 6.0) ** 3


@hot_jit
def _village_sizes(card: int, drawn: np.ndarray, terrain: int, cells: np.ndarray, ncells: int, weight: float,
                   cl: np.ndarray) -> float:
    """Wildholds (8, with its progress term), Great City (9) or Shieldgate (11) after a placement in
    ``terrain``: only a village placement changes them (it merges the village clusters it touches
    into one)."""
    n = cl[N_VILLAGE]
    stamp = _next_stamp(cl)
    size = N_CELLS + 1  # no merged cluster (another terrain changes none of these cards)
    first = N_CELLS
    mountain = False
    if terrain == VILLAGE:  # the merged cluster: the placed cells and the village clusters they touch
        size = ncells
        for j in range(ncells):
            first = min(first, cells[j])
            mountain = mountain or _has_neighbor(drawn, cells[j], MOUNTAIN)
            for k in range(4):
                nb = _neighbor(cells[j], k)
                if nb < 0:
                    continue
                lab = cl[LAB_VILLAGE + nb]
                if lab >= 0 and cl[STAMP + lab] != stamp:
                    cl[STAMP + lab] = stamp
                    size += cl[VIL_SIZE + lab]
                    first = min(first, cl[VIL_FIRST + lab])
                    mountain = mountain or cl[VIL_MOUNTAIN + lab] != 0
    points = _sizes_points(card, n, size, mountain, cl, stamp)
    if card != 8 or weight == 0.0:
        return float(points)
    value = 0.0  # in label order, which is first-cell order: the merged cluster where its first cell is
    pending = terrain == VILLAGE
    for i in range(n):  # a cluster of 6 or more adds 0.0, which leaves the sum as it was
        if pending and first < cl[VIL_FIRST + i]:
            value += wildholds_progress(size)
            pending = False
        if cl[STAMP + i] != stamp:
            value += wildholds_progress(cl[VIL_SIZE + i])
    if pending:
        value += wildholds_progress(size)
    return points + weight * value


@hot_jit
def _sizes_points(card: int, n: int, size: int, mountain: bool, cl: np.ndarray, stamp: int) -> int:
    """Points of card 8, 9 or 11 over the village clusters not stamped ``stamp`` plus one of ``size``
    cells (touching a mountain if ``mountain``; none when ``size`` > N_CELLS)."""
    points = first = second = 0
    if size <= N_CELLS:
        first = size
        if card == 8 and size >= 6:
            points = 8
        if card == 9 and not mountain:
            points = size
    for i in range(n):
        if cl[STAMP + i] == stamp:
            continue
        other = cl[VIL_SIZE + i]
        if card == 8 and other >= 6:
            points += 8
        elif card == 9 and cl[VIL_MOUNTAIN + i] == 0:
            points = max(points, other)
        elif card == 11:
            if other > first:
                second = first
                first = other
            elif other > second:
                second = other
    return 2 * second if card == 11 else points
