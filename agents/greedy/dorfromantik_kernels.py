"""numba kernels of Dorfromantik's greedy agent: the value of every legal placement, the greedy
choice, and whole greedy games (the compiled greedy rollouts, the searches' playouts and ``simulate``).

The value of a placement is its immediate score change plus look-ahead terms weighted by
:data:`WEIGHT_NAMES` (see :mod:`agents.greedy.dorfromantik`). The board arrays and the rules are
:mod:`envs.dorfromantik.kernels`'.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.greedy.dorfromantik_cells import frontier_values, open_task_term, own_task_term
from envs.core.rng import randint
from envs.dorfromantik.kernels import (
    DIR_OFFSETS,
    M_DRAWN,
    M_FRONT,
    M_MARKER,
    M_MAX_RAIL,
    M_MAX_RIVER,
    M_OVER,
    M_PLACED,
    M_TASKS,
    MAX_FRONTIER,
    MAX_PLACED,
    RAIL,
    RIVER,
    DorfBoard,
    advance,
    group_after,
    legal_moves,
    place,
    uf_root,
)

#: names of the greedy heuristic's weights, in the order of the ``weights`` array
WEIGHT_NAMES = ("points", "fail", "progress", "match", "mismatch", "tight", "line", "new_task")
#: points: immediate score change (tasks completed, flags closed, longest lines grown), per point;
#: fail: per target point of an open task this placement makes fail; progress: per tile an open task
#: gains without overshooting; match / mismatch: per contact of equal area edges / of an area edge
#: meeting another terrain; tight: an unfinished task left with one open edge; line: per tile of the
#: rail or river group joined; new_task: a new task tile's kept open edges minus half its distance
#: tuned by coordinate search with compiled greedy games (seeds 1000-1059, 2000-2099; the held-out
#: check is in docs/search.md)
DEFAULT_WEIGHTS = np.array([1.0, 0.8, 4.8, 0.35, 0.125, 4.0, 0.15, 0.6])


@njit(cache=True)
def _join_info(cells, uf, rot_edges, tile: int, rot: int, cell: int, terr: int, roots) -> int:
    """Store in ``roots[0:k]`` the distinct groups the ``terr`` piece would join; return k."""
    k = 0
    for d in range(6):
        n = cell + DIR_OFFSETS[d]
        nt = cells[n, 0]
        if nt < 0 or rot_edges[tile, rot, d] != terr or rot_edges[nt, cells[n, 1], (d + 3) % 6] != terr:
            continue
        root = uf_root(uf, cells[n, 2] * 5 + terr - 1)
        seen = False
        for j in range(k):
            if roots[j] == root:
                seen = True
        if not seen:
            roots[k] = root
            k += 1
    return k


@njit(cache=True)
def _closures(cells, uf, rot_edges, tile: int, rot: int, cell: int, terr: int, root: int) -> int:
    """How many ``terr`` edges of group ``root`` face ``cell`` (each is closed by any placement)."""
    c = 0
    for d in range(6):
        n = cell + DIR_OFFSETS[d]
        nt = cells[n, 0]
        if nt >= 0 and rot_edges[nt, cells[n, 1], (d + 3) % 6] == terr:
            if uf_root(uf, cells[n, 2] * 5 + terr - 1) == root:
                c += 1
    return c


@njit(cache=True)
def evaluate_placement(board, rot_edges, task_type, flag, weights, flagged, n_flagged: int, cell: int,
                       rot: int, roots, out2) -> float:
    """Greedy value of placing the drawn tile of ``board`` (a :class:`envs.dorfromantik.kernels.DorfBoard`)
    at ``cell`` with ``rot`` (nothing is changed).

    Immediate points (tasks completed exactly, flagged areas closed, longest rail/river grown) plus
    features: task groups brought closer to their targets, failures caused (a lost marker), matching
    and mismatching area edges, open tasks squeezed to one open edge, line tiles joined, and for a new
    task tile its distance to the target and the open edges it keeps. ``flagged[0:n_flagged]`` are
    the placement indices of the flag tiles on the board (see :func:`flagged_placements`)."""
    cells, _, placed, uf, tasks, _, meta = board
    tile = meta[M_DRAWN]
    value = 0.0
    # contacts
    for d in range(6):
        n = cell + DIR_OFFSETS[d]
        nt = cells[n, 0]
        if nt < 0:
            continue
        a = rot_edges[tile, rot, d]
        b = rot_edges[nt, cells[n, 1], (d + 3) % 6]
        if a == b and 1 <= a <= 3:
            value += weights[3]
        elif (1 <= a <= 3) or (1 <= b <= 3):
            value -= weights[4]
    # open tasks on the board
    for k in range(meta[M_TASKS]):
        if tasks[k, 3] != 0:
            continue
        terr = tasks[k, 1]
        target = tasks[k, 2]
        root = uf_root(uf, tasks[k, 0])
        size = uf[1, root]
        open_edges = uf[2, root] - _closures(cells, uf, rot_edges, tile, rot, cell, terr, root)
        joined = False
        has = False
        for d in range(6):
            if rot_edges[tile, rot, d] == terr:
                has = True
        if has:
            nk = _join_info(cells, uf, rot_edges, tile, rot, cell, terr, roots)
            for j in range(nk):
                if roots[j] == root:
                    joined = True
        if joined:
            group_after(cells, uf, rot_edges, tile, rot, cell, terr, out2)
            new_size = out2[0]
            new_open = out2[1]
        else:
            new_size = size
            new_open = open_edges
        value = open_task_term(value, weights[0], weights[1], weights[2], weights[5], size, new_size,
                               new_open, target)
    # the drawn tile's own task
    own = task_type[tile]
    if own > 0:
        group_after(cells, uf, rot_edges, tile, rot, cell, own, out2)
        value = own_task_term(value, weights[0], weights[1], weights[7], out2[0], out2[1], meta[M_MARKER])
    # flags already on the board whose area this placement closes
    for i in range(n_flagged):
        p = flagged[i]
        f = np.int64(flag[placed[p, 1]])
        root = uf_root(uf, p * 5 + f - 1)
        if uf[2, root] == 0:
            continue
        nk = _join_info(cells, uf, rot_edges, tile, rot, cell, f, roots)
        joined = False
        for j in range(nk):
            if roots[j] == root:
                joined = True
        if joined:
            group_after(cells, uf, rot_edges, tile, rot, cell, f, out2)
            if out2[1] == 0:
                value += weights[0] * out2[0]
        elif uf[2, root] - _closures(cells, uf, rot_edges, tile, rot, cell, f, root) == 0:
            value += weights[0] * uf[1, root]
    f = np.int64(flag[tile])
    if f > 0:
        group_after(cells, uf, rot_edges, tile, rot, cell, f, out2)
        if out2[1] == 0:
            value += weights[0] * out2[0]
    # longest rail and river
    for line in (RAIL, RIVER):
        has = False
        for d in range(6):
            if rot_edges[tile, rot, d] == line:
                has = True
        if not has:
            continue
        group_after(cells, uf, rot_edges, tile, rot, cell, line, out2)
        best = meta[M_MAX_RAIL] if line == RAIL else meta[M_MAX_RIVER]
        if out2[0] > best:
            value += weights[0] * (out2[0] - best)
        value += weights[6] * (out2[0] - 1)
    return value


@njit(cache=True)
def flagged_placements(placed, meta, flag, out) -> int:
    """Write the placement indices of the placed flag tiles into ``out``; return how many."""
    k = 0
    for p in range(meta[M_PLACED]):
        if flag[placed[p, 1]] > 0:
            out[k] = p
            k += 1
    return k


@njit(cache=True)
def greedy_values(board, rot_edges, task_type, flag, weights, mask, values) -> int:
    """Fill ``values[slot, rot]`` with the greedy value (:func:`evaluate_placement`'s, computed per
    frontier cell by :func:`agents.greedy.dorfromantik_cells.frontier_values`) of every legal placement
    of the drawn tile of ``board`` (a :class:`envs.dorfromantik.kernels.DorfBoard`; ``mask`` from
    :func:`legal_moves`, -inf elsewhere); return the number of legal placements."""
    cells, frontier, placed, uf, tasks, _, meta = board
    count = legal_moves(cells, frontier, uf, meta, rot_edges, task_type, mask)
    flagged = np.zeros(MAX_PLACED, np.int64)
    n_flagged = flagged_placements(placed, meta, flag, flagged)
    frontier_values(board, rot_edges, task_type, flag, weights, flagged, n_flagged, mask, values)
    return count


@njit(cache=True)
def placement_values(board, rot_edges, task_type, flag, weights, mask, values) -> int:
    """:func:`greedy_values` placement by placement with :func:`evaluate_placement`: the reference
    that the per-cell fast path is tested and benchmarked against."""
    cells, frontier, placed, uf, tasks, _, meta = board
    count = legal_moves(cells, frontier, uf, meta, rot_edges, task_type, mask)
    roots = np.zeros(6, np.int64)
    out2 = np.zeros(2, np.int64)
    flagged = np.zeros(MAX_PLACED, np.int64)
    n_flagged = flagged_placements(placed, meta, flag, flagged)
    for i in range(meta[M_FRONT]):
        for rot in range(6):
            if mask[i, rot]:
                values[i, rot] = evaluate_placement(board, rot_edges, task_type, flag, weights, flagged,
                                                    n_flagged, frontier[i], rot, roots, out2)
            else:
                values[i, rot] = -np.inf
    return count


@njit(cache=True)
def greedy_placement(board, rot_edges, task_type, flag, weights, mask, values, stream) -> int:
    """The best placement ``slot * 6 + rot`` on ``board`` (a :class:`envs.dorfromantik.kernels.DorfBoard`)
    by :func:`evaluate_placement`, ties broken at random."""
    greedy_values(board, rot_edges, task_type, flag, weights, mask, values)
    meta = board.meta
    best = -np.inf
    ties = 0
    choice = -1
    for i in range(meta[M_FRONT]):
        for rot in range(6):
            if not mask[i, rot]:
                continue
            v = values[i, rot]
            if v > best + 1e-9:
                best = v
                ties = 1
                choice = i * 6 + rot
            elif v > best - 1e-9:
                ties += 1
                if np.int64(randint(stream, ties)) == 0:
                    choice = i * 6 + rot
    return choice


@njit(cache=True)
def play_greedy_board(board, rot_edges, task_type, flag, weights, stream, mask) -> int:
    """Play the game on ``board`` (a :class:`envs.dorfromantik.kernels.DorfBoard`) to its end with
    :func:`greedy_placement`; returns the placements made (the playouts' form, see
    :func:`play_greedy`)."""
    cells, frontier, placed, uf, tasks, deck, meta = board
    values = np.zeros((MAX_FRONTIER, 6), np.float64)
    n = 0
    while meta[M_OVER] == 0:
        k = greedy_placement(board, rot_edges, task_type, flag, weights, mask, values, stream)
        place(cells, frontier, placed, uf, tasks, meta, rot_edges, task_type, frontier[k // 6], k % 6)
        advance(cells, frontier, deck, meta, rot_edges, task_type)
        n += 1
    return n


@njit(cache=True)
def play_greedy(cells, frontier, placed, uf, tasks, deck, meta, rot_edges, task_type, flag, weights,
                stream, mask) -> int:
    """:func:`play_greedy_board` with the 7 game arrays spread: the entry point of Python's greedy
    rollouts, which are often a few placements long (a record argument costs about 1.5 us more per
    call from Python)."""
    return play_greedy_board(DorfBoard(cells, frontier, placed, uf, tasks, deck, meta), rot_edges, task_type,
                             flag, weights, stream, mask)


# ---- observation ---------------------------------------------------------------------------------
