"""Compiled evaluation of every legal Cartographers decision in one call (no Python loop per
candidate), for the greedy agent, MCTS priors and greedy rollouts.

A candidate (terrain option x shape option x orientation x anchor, or a 1x1 fallback cell) is
drawn on a scratch copy of the decision map and valued by :func:`map_value`:

``value = sum_e  w_e * (edict_e(map) + progress_e(map))``
                                            edict points; ``w_e`` = 1 if edict e scores this season,
                                            plus ``FUTURE * DECAY ** (d - 1)`` for the later
                                            season d seasons ahead that scores it; ``progress_e``
                                            (:func:`progress_value`, 0 with the default weights)
                                            credits shapes on their way to scoring
        ``+ COIN    * seasons_left * coins gained``   (shape coin + newly surrounded mountains;
                                                        a coin scores at every remaining season end)
        ``- MONSTER * seasons_left * empty cells touching a monster``
        ``- HOLE    * empty cells in empty regions of <= HOLE_SIZE cells`` (room for big shapes)
        ``- RUIN    * empty ruins cells covered when no ruins card asks for it`` (keeps ruins
                                                        available for later ruins cards)

``seasons_left`` counts the current season. In a multiplayer ambush the drawer (a neighbour)
instead maximises the monster exposure it creates on the target's map (seed 001's hint).
Weights live in a float64 array indexed by the ``W_*`` constants; :data:`DEFAULT_WEIGHTS` were
tuned by paired solo runs (see agents/greedy/cartographers.py); :data:`PROGRESS_WEIGHTS` add the
progress terms (``greedy:preset=progress``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from agents.greedy import cartographers_barony as B
from agents.greedy import cartographers_clusters as C
from agents.greedy import cartographers_delta as D
from envs.cartographers.kernels import (
    _AUX,
    _LAB,
    _SIZ,
    AMBUSH_BASE,
    AMBUSH_FALLBACK_BASE,
    C_COIN,
    C_NTERR,
    C_TERR,
    COLS,
    EMPTY,
    FALLBACK_BASE,
    FARM,
    FOREST,
    M_CAP,
    M_CARD,
    M_PHASE,
    M_RUINS,
    M_SEASON,
    MONSTER_T,
    N_CELLS,
    PHASE_AMBUSH,
    PHASE_EXPLORE,
    PHASE_OVER,
    ROWS,
    SCRATCH,
    VILLAGE,
    WATER,
    _has_neighbor,
    _lost_barony,
    _neighbor,
    _place_action,
    cluster_neighbour_kinds,
    decision_map,
    enumerate_legal,
    hot_jit,
    label_terrain,
    monster_penalty,
    new_solo_arrays,
    random_action,
    score_card_into,
    start_solo_game,
    step,
    stoneside_from_labels,
    village_from_labels,
)
from envs.core.rng import next_u64

(W_FUTURE, W_COIN, W_MONSTER, W_HOLE, W_RUIN, W_HOLE_SIZE, W_DECAY,
 W_LINES, W_BARONY, W_CLUSTERS, W_STONESIDE, W_CONTACT) = range(12)
N_WEIGHTS = 12
WEIGHT_NAMES = ("future", "coin", "monster", "hole", "ruin", "hole_size", "decay", "lines", "barony",
                "clusters", "stoneside", "contact")
DEFAULT_WEIGHTS = np.array([0.5, 1.0, 1.0, 0.5, 0.5, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], dtype=np.float64)
#: the defaults plus progress toward the cards that score only once a shape is complete (lines,
#: squares, village clusters, forest links), then ``future`` and ``monster`` retuned with them
#: (tuned on paired compiled solo games of seeds 0-1999, checked on seeds 2000-3999)
PROGRESS_WEIGHTS = DEFAULT_WEIGHTS.copy()
PROGRESS_WEIGHTS[[W_LINES, W_BARONY, W_CLUSTERS, W_STONESIDE]] = (0.6, 0.5, 0.5, 1.0)
PROGRESS_WEIGHTS[[W_FUTURE, W_MONSTER]] = (0.8, 0.7)
#: the progress weights without the small-hole term, whose flood is about a quarter of a decision's time
QUICK_WEIGHTS = PROGRESS_WEIGHTS.copy()
QUICK_WEIGHTS[W_HOLE] = 0.0
#: named weight sets (``greedy:preset=progress``; options override single weights on top)
PRESETS = {"default": DEFAULT_WEIGHTS, "progress": PROGRESS_WEIGHTS, "quick": QUICK_WEIGHTS}

#: most candidates one decision can have: 2 options x 8 orientations x 121 anchors x 5 terrains,
#: or 121 fallback cells x 5 terrains
MAX_CANDIDATES = 2 * 8 * N_CELLS * 5


class Decision(NamedTuple):
    """The arrays of one greedy decision that every candidate's valuation reads (:func:`fast_value`,
    :func:`_terms_after`), in this order: ``drawn`` int8[121] (the decision map with the candidate
    drawn on it), ``grid`` int8[121] (the decision map), ``ruins`` bool[121] and ``mountains``
    int16[M] (``tb``), ``edicts`` int8[4], ``ew`` float64[4] (:func:`edict_weights`), ``w``
    float64[N_WEIGHTS], ``scratch`` int32[SCRATCH] (the engine's scoring), ``base_terms`` float64[4]
    (each edict's :func:`card_terms` on ``grid``), ``shape_cards`` float64[4] (per shape position the
    edicts that read only filled cells, NaN until valued), ``lines`` int32[LINES_LEN] and ``seen``
    int64[122] (:func:`agents.greedy.cartographers_delta.local_points`), ``clusters`` int32[LEN]
    (:func:`agents.greedy.cartographers_clusters.cluster_base_into`), ``squares`` int32[LEN]
    (:func:`agents.greedy.cartographers_barony.barony_base_into`). :func:`score_all` builds it once
    per decision; a ``typing.NamedTuple`` compiles like a tuple, so ``dec.grid`` costs nothing."""

    drawn: np.ndarray
    grid: np.ndarray
    ruins: np.ndarray
    mountains: np.ndarray
    edicts: np.ndarray
    ew: np.ndarray
    w: np.ndarray
    scratch: np.ndarray
    base_terms: np.ndarray
    shape_cards: np.ndarray
    lines: np.ndarray
    seen: np.ndarray
    clusters: np.ndarray
    squares: np.ndarray


@njit(cache=True)
def edict_weights(edicts_season: np.ndarray, season: int, future: float, decay: float) -> np.ndarray:
    """Weight of each edict letter A..D: 1 for this season's two, plus ``future * decay ** (d - 1)``
    for the season d seasons ahead that scores it."""
    out = np.zeros(4, np.float64)
    for s in range(season, 4):
        wt = 1.0 if s == season else future * decay ** (s - season - 1)
        out[edicts_season[s, 1]] += wt
        out[edicts_season[s, 2]] += wt
    return out


@njit(cache=True, _nrt=False, inline="always")
def ruins_covered(ruins: np.ndarray, cells: np.ndarray, ncells: int) -> int:
    """How many of ``cells[:ncells]`` are ruins cells."""
    covered = 0
    for j in range(ncells):
        if ruins[cells[j]]:
            covered += 1
    return covered


@hot_jit
def small_hole_cells(grid: np.ndarray, max_size: int, scratch: np.ndarray) -> int:
    """Empty cells lying in empty regions of at most ``max_size`` cells; ``scratch`` int32[SCRATCH]
    is left holding the regions as :func:`label_terrain` writes them (labels at ``_LAB``, sizes at
    ``_SIZ``)."""
    total = 0
    for i in range(label_terrain(grid, EMPTY, scratch)):
        if scratch[_SIZ + i] <= max_size:
            total += scratch[_SIZ + i]
    return total


@hot_jit
def new_mountain_coins(grid: np.ndarray, mountains: np.ndarray, done: np.ndarray) -> int:
    """Mountains not yet paid whose 4 neighbours are all filled on ``grid``."""
    count = 0
    for m in range(mountains.shape[0]):
        if done[m]:
            continue
        ok = True
        for k in range(4):
            nb = _neighbor(mountains[m], k)
            if nb < 0 or grid[nb] == EMPTY:
                ok = False
                break
        if ok:
            count += 1
    return count


@njit(cache=True, _nrt=False, inline="always")
def _line_progress(grid: np.ndarray, start: int, stride: int, length: int) -> float:
    """Progress of one unfinished line: ``(filled / length) ** 3`` (0 when complete: it scores)."""
    filled = 0
    for i in range(length):
        if grid[start + i * stride] != EMPTY:
            filled += 1
    return D.line_progress(filled, length)


@hot_jit
def _next_square_progress(grid: np.ndarray, barony_points: int, scratch: np.ndarray) -> float:
    """Lost Barony: cubed fill of the fullest square one larger than the largest filled one
    (``barony_points`` = the card's score, 3 x that square's side)."""
    side = barony_points // 3 + 1
    if side > ROWS:
        return 0.0
    w = COLS + 1
    for i in range((ROWS + 1) * w):
        scratch[_AUX + i] = 0
    for r in range(ROWS):
        for c in range(COLS):
            here = _AUX + (r + 1) * w + c + 1  # filled cells in rows < r + 1, columns < c + 1
            scratch[here] = (int(grid[r * COLS + c] != EMPTY) + scratch[here - w] + scratch[here - 1]
                             - scratch[here - w - 1])
    best = 0
    for r in range(ROWS - side + 1):
        for c in range(COLS - side + 1):
            filled = (scratch[_AUX + (r + side) * w + c + side] - scratch[_AUX + r * w + c + side]
                      - scratch[_AUX + (r + side) * w + c] + scratch[_AUX + r * w + c])
            best = max(best, filled)
    f = best / (side * side)
    return f * f * f


@hot_jit
def _village_progress(grid: np.ndarray, card: int, n: int, kinds_ready: bool, scratch: np.ndarray) -> float:
    """Village clusters not yet scoring: Wildholds 8 x (size / 6) ** 3 below 6 cells; Greengold
    Plains 3 x (kinds / 3) ** 3 below 3 neighbouring kinds. ``scratch`` holds the ``n`` village
    clusters (:func:`label_terrain`), with their kinds when ``kinds_ready``."""
    value = 0.0
    if card == 8:
        for i in range(n):
            value += C.wildholds_progress(scratch[_SIZ + i])  # 0.0 from 6 cells on
        return value
    if not kinds_ready:
        cluster_neighbour_kinds(grid, n, scratch)
    for i in range(n):
        kinds = scratch[_AUX + i]
        if kinds < 3:
            value += C.greengold_progress(kinds)
    return value


@hot_jit
def _stoneside_progress(grid: np.ndarray, mountains: np.ndarray, n: int, scratch: np.ndarray) -> float:
    """Stoneside Forest: for each mountain not yet linked, the best forest cluster touching it
    (and no other mountain) by ``(1 - d / 6) ** 2``, d = cells still missing to reach another one.
    ``scratch`` holds the ``n`` forest clusters (:func:`label_terrain`)."""
    nm = mountains.shape[0]
    for i in range(n):
        scratch[_AUX + i] = 0  # bitmask of touched mountains
        scratch[_AUX + N_CELLS + i] = 99  # cells missing to another mountain
    for m in range(nm):
        for k in range(4):
            nb = _neighbor(mountains[m], k)
            if nb >= 0 and scratch[_LAB + nb] >= 0:
                scratch[_AUX + scratch[_LAB + nb]] |= 1 << m
    for cell in range(N_CELLS):
        lab = scratch[_LAB + cell]
        if lab < 0:
            continue
        touched = scratch[_AUX + lab]
        for m in range(nm):
            if touched & (1 << m):
                continue
            d = C.distance(cell, mountains[m])
            if d < scratch[_AUX + N_CELLS + lab]:
                scratch[_AUX + N_CELLS + lab] = d
    value = 0.0
    for m in range(nm):
        best = 0.0
        linked = False
        for i in range(n):
            mask = scratch[_AUX + i]
            if not mask & (1 << m):
                continue
            if mask != (1 << m):
                linked = True
                break
            best = max(best, C.link_progress(scratch[_AUX + N_CELLS + i]))
        if not linked:
            value += best
    return value


@hot_jit
def progress_value(card: int, grid: np.ndarray, mountains: np.ndarray, w: np.ndarray,
                   scratch: np.ndarray) -> float:
    """Points a scoring card is on its way to: unfinished rows and columns (Borderlands, 6
    each) and diagonals (The Broken Road, 3 each) by their cubed fill, times ``lines``; empty
    cells closed on 3 of 4 sides (The Cauldrons, 1 each when closed) times ``cauldron``."""
    value = 0.0
    if card == 12 and w[W_LINES] != 0.0:
        for a in range(ROWS):
            value += 6.0 * (_line_progress(grid, a * COLS, 1, COLS) + _line_progress(grid, a, COLS, ROWS))
        value *= w[W_LINES]
    elif card == 14 and w[W_LINES] != 0.0:
        for d in range(ROWS):
            value += 3.0 * _line_progress(grid, d * COLS, COLS + 1, ROWS - d)
        value *= w[W_LINES]
    elif card == 13 and w[W_BARONY] != 0.0:
        value = 3.0 * w[W_BARONY] * _next_square_progress(grid, _lost_barony(grid, scratch), scratch)
    elif (card == 8 or card == 10) and w[W_CLUSTERS] != 0.0:
        n = label_terrain(grid, VILLAGE, scratch)
        value = w[W_CLUSTERS] * _village_progress(grid, card, n, False, scratch)
    elif card == 3 and w[W_STONESIDE] != 0.0:
        n = label_terrain(grid, FOREST, scratch)
        value = 3.0 * w[W_STONESIDE] * _stoneside_progress(grid, mountains, n, scratch)
    return value


@hot_jit
def card_terms(card: int, grid: np.ndarray, ruins: np.ndarray, mountains: np.ndarray, w: np.ndarray,
               scratch: np.ndarray) -> float:
    """``score_card_into(card, grid) + progress_value(card, grid)``, the same number, with the
    clusters (or Lost Barony's square) found once for both where a progress term reads them."""
    if card == 13 and w[W_BARONY] != 0.0:
        points = _lost_barony(grid, scratch)
        return points + 3.0 * w[W_BARONY] * _next_square_progress(grid, points, scratch)
    if (card == 8 or card == 10) and w[W_CLUSTERS] != 0.0:
        n = label_terrain(grid, VILLAGE, scratch)
        points = village_from_labels(grid, card, n, scratch)
        return points + w[W_CLUSTERS] * _village_progress(grid, card, n, True, scratch)
    if card == 3 and w[W_STONESIDE] != 0.0:
        n = label_terrain(grid, FOREST, scratch)
        points = stoneside_from_labels(grid, n, scratch)
        return points + 3.0 * w[W_STONESIDE] * _stoneside_progress(grid, mountains, n, scratch)
    points = score_card_into(card, grid, ruins, scratch)
    if (card == 12 or card == 14) and w[W_LINES] != 0.0:
        return points + progress_value(card, grid, mountains, w, scratch)
    return float(points)  # progress_value is 0.0 for every other card


@hot_jit
def map_value(grid: np.ndarray, ruins: np.ndarray, mountains: np.ndarray, edicts: np.ndarray, ew: np.ndarray,
              coin_gain: int, seasons_left: int, covered_ruins: int, w: np.ndarray,
              scratch: np.ndarray) -> float:
    """The greedy value of one map after a candidate (see the module docstring); ``scratch`` is
    int32[SCRATCH] for the engine's scoring and :func:`small_hole_cells`."""
    value = 0.0
    for e in range(4):
        if ew[e] > 0.0:
            value += ew[e] * (score_card_into(edicts[e], grid, ruins, scratch)
                              + progress_value(edicts[e], grid, mountains, w, scratch))
    value += w[W_COIN] * seasons_left * coin_gain
    value -= w[W_MONSTER] * seasons_left * monster_penalty(grid)
    if w[W_HOLE] != 0.0:
        value -= w[W_HOLE] * small_hole_cells(grid, int(w[W_HOLE_SIZE]), scratch)
    value -= w[W_RUIN] * covered_ruins
    return value


@hot_jit
def card_sees(card: int, terrain: int) -> bool:
    """Whether drawing ``terrain`` can change scoring card ``card`` (with its progress term):
    forest cards read forest only, farm-and-water cards farm and water, three village cards
    villages only; Treetower, Greengold Plains and the arrangement cards read every filled cell."""
    if card == 0 or card == 1 or card == 3:
        return terrain == FOREST
    if 4 <= card <= 7:
        return terrain == FARM or terrain == WATER
    if card == 8 or card == 9 or card == 11:
        return terrain == VILLAGE
    return True


@hot_jit
def reads_only_filled(card: int) -> bool:
    """Whether scoring card ``card`` (with its progress term) reads only which cells are filled,
    not their terrain: Borderlands, Lost Barony, The Broken Road, The Cauldrons."""
    return card >= 12


@hot_jit
def _empty_neighbours(drawn: np.ndarray, cell: int) -> int:
    """How many of ``cell``'s orthogonal neighbours are empty, plus 8 x (the last one found + 1):
    ``count = v & 7``, ``last = (v >> 3) - 1``."""
    count = 0
    last = -1
    for k in range(4):
        nb = _neighbor(cell, k)
        if nb >= 0 and drawn[nb] == EMPTY:
            count += 1
            last = nb
    return count + 8 * (last + 1)


@hot_jit
def _tiny_pieces(drawn: np.ndarray, cells: np.ndarray, ncells: int, max_size: int, marks: np.ndarray,
                 candidate: int) -> int:
    """Cells in the empty pieces of at most ``max_size`` <= 2 cells that touch ``cells`` on
    ``drawn``: a cell with no empty neighbour is a piece of 1; a cell whose one empty neighbour has
    no other is a piece of 2 (cells already seen carry the stamp ``candidate`` in ``marks``)."""
    found = 0
    for j in range(ncells):
        for k in range(4):
            x = _neighbor(cells[j], k)
            if x < 0 or drawn[x] != EMPTY or marks[N_CELLS + x] == candidate:
                continue
            marks[N_CELLS + x] = candidate
            v = _empty_neighbours(drawn, x)
            if v & 7 == 0:
                if max_size >= 1:
                    found += 1
            elif v & 7 == 1 and max_size >= 2:
                y = (v >> 3) - 1
                if _empty_neighbours(drawn, y) & 7 == 1:
                    marks[N_CELLS + y] = candidate
                    found += 2
    return found


@hot_jit
def small_holes_after(drawn: np.ndarray, cells: np.ndarray, ncells: int, max_size: int, base_small: int,
                      holes: np.ndarray, marks: np.ndarray, stack: np.ndarray) -> int:
    """:func:`small_hole_cells` of ``drawn`` = the decision map plus ``cells`` (a placement on
    empty cells; Forgotten Forest's two cells touch only diagonally, so they may lie in two empty
    regions): the base count without the regions the cells lie in, plus the small pieces those
    split into, found by floods that stop past ``max_size`` cells. ``holes`` holds the decision
    map's empty regions as :func:`small_hole_cells` left them; ``marks`` int64[2 * N_CELLS + 1]
    keeps flood stamps, counted-cell stamps and the stamp counter. Pieces of at most 2 cells
    (the presets' ``hole_size``) are recognised from neighbour counts alone, without a flood."""
    small = base_small
    for j in range(ncells):
        r = holes[_LAB + cells[j]]
        first = True
        for q in range(j):
            if holes[_LAB + cells[q]] == r:
                first = False
        if first and holes[_SIZ + r] <= max_size:
            small -= holes[_SIZ + r]
    marks[2 * N_CELLS] += 1
    candidate = marks[2 * N_CELLS]
    if max_size <= 2:
        return small + _tiny_pieces(drawn, cells, ncells, max_size, marks, candidate)
    for j in range(ncells):
        for k in range(4):
            start = _neighbor(cells[j], k)
            if start < 0 or drawn[start] != EMPTY or marks[N_CELLS + start] == candidate:
                continue
            marks[2 * N_CELLS] += 1
            flood = marks[2 * N_CELLS]
            marks[start] = flood
            stack[0] = start
            top = 1
            size = 0
            while top > 0 and size <= max_size:
                top -= 1
                cell = stack[N_CELLS + size] = stack[top]
                size += 1
                for kk in range(4):
                    nb = _neighbor(cell, kk)
                    if nb >= 0 and drawn[nb] == EMPTY and marks[nb] != flood:
                        marks[nb] = flood
                        stack[top] = nb
                        top += 1
            if size <= max_size and top == 0:
                small += size
                for q in range(size):
                    marks[N_CELLS + stack[N_CELLS + q]] = candidate
    return small


@hot_jit
def shape_terms(drawn: np.ndarray, cells: np.ndarray, ncells: int, w: np.ndarray, base_monster: int,
                base_small: int, holes: np.ndarray, marks: np.ndarray, stack: np.ndarray) -> tuple[int, int]:
    """The terms of a placement that read only which cells it fills, not its terrain (never a
    monster): monster exposure (the decision's ``base_monster`` less the placed cells that touch a
    monster) and small-hole cells (:func:`small_holes_after`; 0 when ``hole`` is off). Computed
    once per shape position and shared by its terrain options."""
    touched = 0
    for j in range(ncells):
        if _has_neighbor(drawn, cells[j], MONSTER_T):
            touched += 1
    small = 0
    if w[W_HOLE] != 0.0:
        small = small_holes_after(drawn, cells, ncells, int(w[W_HOLE_SIZE]), base_small, holes, marks, stack)
    return base_monster - touched, small


@njit(cache=True, _nrt=False, inline="always")
def _terms_after(dec: Decision, card: int, cells: np.ndarray, ncells: int, base: float) -> float:
    """``card_terms(card, dec.drawn)`` for ``drawn`` = ``grid`` plus ``cells[:ncells]``: from the
    decision map's ``base`` terms, ``lines`` or ``clusters`` where the card allows it
    (:mod:`agents.greedy.cartographers_delta`, :mod:`agents.greedy.cartographers_clusters`), else
    on the whole drawn map."""
    w = dec.w
    if D.is_local(card):
        return float(D.local_points(card, int(base), dec.grid, dec.drawn, cells, ncells, dec.ruins, dec.lines,
                                    dec.seen))
    if D.is_line(card):
        return D.line_card_terms(card, cells, ncells, dec.lines, w[W_LINES])
    if card == 13 and ncells <= B.MAX_CELLS:
        return B.barony_terms(cells, ncells, dec.squares, w[W_BARONY])
    if C.is_cluster(card) and C.can_value(card, cells, ncells, dec.clusters):
        weight = w[W_STONESIDE] if card == 3 else w[W_CLUSTERS]
        return C.cluster_terms(card, dec.drawn, cells, ncells, dec.mountains, weight, dec.clusters)
    return card_terms(card, dec.drawn, dec.ruins, dec.mountains, w, dec.scratch)


@hot_jit
def fast_value(dec: Decision, terrain: int, cells: np.ndarray, ncells: int, coin_gain: int, seasons_left: int,
               covered_ruins: int, monster: int, small: int) -> float:
    """:func:`map_value` of ``dec.drawn`` (the decision map ``dec.grid`` plus a placement of
    ``cells[:ncells]`` in ``terrain``, never a monster), bit for bit, from the decision's own values
    (:class:`Decision`): an edict that cannot see the terrain keeps its ``base_terms`` entry; an edict
    that reads only filled cells is valued once per shape position (``shape_cards``, NaN until
    then); local, line and cluster cards are valued from the decision map's figures
    (:func:`_terms_after`); ``monster`` and ``small`` come from :func:`shape_terms` (tests compare
    every candidate of many decisions with :func:`map_value`)."""
    ew, w, edicts, base_terms, shape_cards = dec.ew, dec.w, dec.edicts, dec.base_terms, dec.shape_cards
    value = 0.0
    for e in range(4):
        if ew[e] > 0.0:
            card = edicts[e]
            if reads_only_filled(card):
                if np.isnan(shape_cards[e]):
                    shape_cards[e] = _terms_after(dec, card, cells, ncells, base_terms[e])
                value += ew[e] * shape_cards[e]
            elif card_sees(card, terrain):
                value += ew[e] * _terms_after(dec, card, cells, ncells, base_terms[e])
            else:
                value += ew[e] * base_terms[e]
    value += w[W_COIN] * seasons_left * coin_gain
    value -= w[W_MONSTER] * seasons_left * monster
    if w[W_HOLE] != 0.0:
        value -= w[W_HOLE] * small
    value -= w[W_RUIN] * covered_ruins
    return value


@hot_jit
def placement_contacts(grid: np.ndarray, cells: np.ndarray, ncells: int) -> int:
    """Sides of the placement ``cells[:ncells]`` that touch a filled cell of ``grid`` or the map's edge
    (a side shared by two of its cells does not count: both are empty on ``grid``)."""
    contacts = 0
    for j in range(ncells):
        for k in range(4):
            nb = _neighbor(cells[j], k)
            if nb < 0 or grid[nb] != EMPTY:
                contacts += 1
    return contacts


@hot_jit
def keep_contact_placements(grid: np.ndarray, pl_cells: np.ndarray, buf: np.ndarray, n: int,
                            least: int) -> int:
    """The ``contact`` weight: keep in ``buf[:n]`` (in order) only the placements with at least
    ``least`` contacts (:func:`placement_contacts`), or when none has that many, those with the most;
    returns how many are kept."""
    kept = 0
    most = 0
    for i in range(n):
        c = placement_contacts(grid, pl_cells[buf[i, 1]], pl_cells[buf[i, 1], 7])
        most = max(most, c)
        if c >= least:
            buf[kept, 0] = buf[i, 0]
            buf[kept, 1] = buf[i, 1]
            kept += 1
    if kept > 0:
        return kept
    for i in range(n):
        if placement_contacts(grid, pl_cells[buf[i, 1]], pl_cells[buf[i, 1], 7]) == most:
            buf[kept, 0] = buf[i, 0]
            buf[kept, 1] = buf[i, 1]
            kept += 1
    return kept


@njit(cache=True)
def score_candidates(st, tb, w: np.ndarray, buf: np.ndarray, actions: np.ndarray,
                     values: np.ndarray) -> int:
    """Write every legal action of the current decision (with a ``contact`` weight: the placements it
    keeps, :func:`keep_contact_placements`) and its greedy value into ``actions`` / ``values`` (length >=
    MAX_CANDIDATES); ``buf`` is int32[>= 2000, 2] scratch. Returns the count."""
    return score_all(st, tb, w, buf, actions, values, True)


@njit(cache=True)
def score_all(st, tb, w: np.ndarray, buf: np.ndarray, actions: np.ndarray, values: np.ndarray,
              fast: bool) -> int:
    """:func:`score_candidates`; ``fast=False`` values every candidate with :func:`map_value` on
    the whole map (the definition), ``fast=True`` with :func:`fast_value` (the same numbers)."""
    meta, cards, pl_cells = st[6], tb[2], tb[5]
    if meta[M_PHASE] == PHASE_OVER:
        return 0
    p = decision_map(meta)
    grid = st[0][p]
    ruins = tb[0]
    mountains = tb[1]
    done = st[2][p]
    edicts = st[5]
    season = meta[M_SEASON]
    seasons_left = 4 - season
    ew = edict_weights(tb[3], season, w[W_FUTURE], w[W_DECAY])
    cap = meta[M_CAP]
    room = cap < 0 or st[1][p] < cap
    card = meta[M_CARD]
    ruins_required = meta[M_RUINS] != 0
    ambush = meta[M_PHASE] == PHASE_AMBUSH
    drawn = grid.copy()  # each candidate is drawn on it and erased again
    work = np.empty(SCRATCH, np.int32)
    require = meta[M_PHASE] == PHASE_EXPLORE and ruins_required
    n = enumerate_legal(grid, ruins, cards, tb[4], tb[6], card, require, buf, False)
    if w[W_CONTACT] > 0.0 and not ambush:
        n = keep_contact_placements(grid, pl_cells, buf, n, int(w[W_CONTACT]))
    base_terms = np.zeros(4)
    shape_cards = np.empty(4)  # per shape position: the edicts that read only filled cells
    holes = np.empty(SCRATCH, np.int32)  # the decision map's empty regions (fast path)
    marks = np.zeros(2 * N_CELLS + 1, np.int64)
    stack = np.empty(2 * N_CELLS, np.int32)
    base_monster = 0
    base_small = 0
    lines = np.empty(D.LINES_LEN, np.int32)  # the decision map's line figures (fast path)
    seen = np.zeros(N_CELLS + 1, np.int64)  # cell stamps of the local cards' fast path
    clusters = np.empty(C.LEN, np.int32)  # the decision map's cluster figures (fast path)
    squares = np.empty(B.LEN, np.int32)  # the decision map's Lost Barony figures (fast path)
    if fast and not ambush:
        D.line_counts_into(grid, lines)
        C.cluster_base_into(edicts, ew, grid, mountains, clusters, work)
        for e in range(4):
            if ew[e] > 0.0:
                base_terms[e] = card_terms(edicts[e], grid, ruins, mountains, w, work)
                if edicts[e] == 13:
                    B.barony_base_into(grid, squares)
        base_monster = monster_penalty(grid)
        if w[W_HOLE] != 0.0:
            base_small = small_hole_cells(grid, int(w[W_HOLE_SIZE]), holes)
    dec = Decision(drawn, grid, ruins, mountains, edicts, ew, w, work, base_terms, shape_cards, lines, seen,
                   clusters, squares)
    count = 0
    if n > 0:
        nterr = 1 if ambush else cards[card, C_NTERR]
        for i in range(n):
            k = buf[i, 0]
            pid = buf[i, 1]
            ncells = pl_cells[pid, 7]
            covered = 0 if ruins_required else ruins_covered(ruins, pl_cells[pid], ncells)
            coins = -1  # terrain-blind terms, found at the first terrain that needs them
            monster = small = -1
            shape_cards[:] = np.nan
            for t in range(nterr):
                terrain = MONSTER_T if ambush else cards[card, C_TERR + t]
                for j in range(ncells):
                    drawn[pl_cells[pid, j]] = terrain
                if ambush:
                    actions[count] = AMBUSH_BASE + pl_cells[pid, 5] * N_CELLS + pl_cells[pid, 6]
                    values[count] = monster_penalty(drawn)
                else:
                    if coins < 0:
                        coins = new_mountain_coins(drawn, mountains, done)
                    gain = coins
                    if cards[card, C_COIN + k] != 0:
                        gain += 1
                    if not room:
                        gain = 0
                    actions[count] = _place_action(t, k, pl_cells[pid, 5], pl_cells[pid, 6])
                    if fast and terrain != MONSTER_T:  # a drawn monster (Rift Lands) is valued in full
                        if monster < 0:
                            monster, small = shape_terms(drawn, pl_cells[pid], ncells, w, base_monster,
                                                         base_small, holes, marks, stack)
                        values[count] = fast_value(dec, terrain, pl_cells[pid], ncells, gain, seasons_left,
                                                   covered, monster, small)
                    else:
                        values[count] = map_value(drawn, ruins, mountains, edicts, ew, gain, seasons_left,
                                                  covered, w, work)
                for j in range(ncells):
                    drawn[pl_cells[pid, j]] = grid[pl_cells[pid, j]]
                count += 1
        return count
    # 1x1 fallback: any empty cell, forest/village/farm/water/monster (monster only in an ambush).
    # Its valuation repeats the shape loop's on purpose: one shared helper for both (24 arguments,
    # the per-position terms in a small array) made greedy games 13% slower, inlined or not.
    one = np.zeros(1, np.int16)
    for cell in range(N_CELLS):
        if grid[cell] != EMPTY:
            continue
        coins = -1
        monster = small = -1
        shape_cards[:] = np.nan
        one[0] = cell
        for t in range(1 if ambush else 5):
            terrain = MONSTER_T if ambush else 1 + t
            drawn[cell] = terrain
            if ambush:
                actions[count] = AMBUSH_FALLBACK_BASE + cell
                values[count] = monster_penalty(drawn)
            else:
                if coins < 0:
                    coins = new_mountain_coins(drawn, mountains, done)
                gain = coins if room else 0
                covered = 1 if ruins[cell] else 0
                actions[count] = FALLBACK_BASE + t * N_CELLS + cell
                if fast and terrain != MONSTER_T:
                    if monster < 0:
                        monster, small = shape_terms(drawn, one, 1, w, base_monster, base_small, holes, marks,
                                                     stack)
                    values[count] = fast_value(dec, terrain, one, 1, gain, seasons_left, covered, monster,
                                               small)
                else:
                    values[count] = map_value(drawn, ruins, mountains, edicts, ew, gain, seasons_left,
                                              covered, w, work)
            drawn[cell] = grid[cell]
            count += 1
    return count


@njit(cache=True)
def greedy_action(st, tb, w: np.ndarray, buf: np.ndarray, actions: np.ndarray, values: np.ndarray) -> int:
    """The best-valued legal action (first on ties), or -1 when the game is over."""
    n = score_candidates(st, tb, w, buf, actions, values)
    best = -1
    best_value = -np.inf
    for i in range(n):
        if values[i] > best_value:
            best_value = values[i]
            best = actions[i]
    return best


@njit(cache=True)
def greedy_solo_games(tb, n_games: int, seed: int, cap: int, ambushes: bool, random_order: bool,
                      w: np.ndarray, solo_values: np.ndarray, out_eval: np.ndarray) -> None:
    """Tuning loop: ``n_games`` solo games played by the greedy policy entirely in numba, with the
    same chance streams as ``kernels.random_solo_games`` (game g uses seed + g). ``out_eval[g]`` =
    solo evaluation points (final score minus the four cards' solo values)."""
    st = new_solo_arrays(tb)
    edicts, meta, record = st[5], st[6], st[8]
    buf = np.empty((4096, 2), np.int32)
    actions = np.empty(MAX_CANDIDATES, np.int64)
    values = np.empty(MAX_CANDIDATES, np.float64)
    for g in range(n_games):
        start_solo_game(st, tb, seed + g, cap, ambushes, random_order)
        while meta[M_PHASE] != PHASE_OVER:
            step(st, tb, greedy_action(st, tb, w, buf, actions, values))
        total = 0
        for s in range(4):
            total += record[0, s, 4]
        for e in range(4):
            total -= solo_values[edicts[e]]
        out_eval[g] = total


@njit(cache=True)
def greedy_playout(st, tb, w: np.ndarray, epsilon: float, policy_rng: np.ndarray, stop_season: int) -> None:
    """Play ``st`` to the end, or until season ``stop_season`` begins (4: the end): the greedy
    action (first on ties), or with probability ``epsilon`` a uniformly random legal one (drawn
    from ``policy_rng``). Used for MCTS rollouts and the flat search's (possibly cut) playouts."""
    buf = np.empty((4096, 2), np.int32)
    actions = np.empty(MAX_CANDIDATES, np.int64)
    values = np.empty(MAX_CANDIDATES, np.float64)
    meta = st[6]
    while meta[M_PHASE] != PHASE_OVER and meta[M_SEASON] < stop_season:
        if epsilon > 0.0 and (next_u64(policy_rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0) < epsilon:
            a = random_action(st, tb, policy_rng, buf)
        else:
            a = greedy_action(st, tb, w, buf, actions, values)
        step(st, tb, a)
