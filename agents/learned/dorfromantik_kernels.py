"""numba kernels of Dorfromantik's candidate view (:mod:`agents.learned.dorfromantik`).

* :func:`candidate_features_by_placement` fills one feature row per legal placement of the drawn tile:
  the greedy valuation's terms (:func:`agents.greedy.dorfromantik_kernels.evaluate_placement` run with
  each unit weight vector, so the columns are exactly the terms the greedy weights multiply), then
  descriptors of the position after the placement (the tile is placed on the real arrays and the
  touched entries are restored afterwards). It is the reference of the by-cell
  :func:`agents.learned.dorfromantik_after.candidate_features`, which the agent and the labelling use.
* :func:`label_playouts` values chosen placements on paired sampled futures with the compiled
  search's playout (:func:`agents.search.placement_kernels.playout`, greedy to the end).
* :func:`linear_placement` and :func:`play_linear` are the linear candidate policy in numba (the
  search's learned playouts): the first placement whose ``features @ theta[phase]`` is within 1e-9
  of the best, as :class:`agents.learned.dorfromantik.LinearPolicy` plays it (without the action
  window, as greedy playouts play). The values come by frontier cell
  (:func:`agents.learned.dorfromantik_after.linear_values`); :func:`linear_values_by_placement` is
  their reference.

Column order is :data:`agents.learned.dorfromantik.FEATURES`; the ``C_*`` constants of
:mod:`agents.learned.dorfromantik_columns` name the columns.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.greedy import dorfromantik_kernels as GK
from agents.learned.dorfromantik_after import folded_weights, linear_values, phase_of
from agents.learned.dorfromantik_columns import (
    C_AREA_FREE,
    C_AREA_FREE_X_LEFT,
    C_AREAS_CLOSED,
    C_COMPLETED,
    C_FAILED,
    C_FLAG_OPEN,
    C_FRAC_LEFT,
    C_FRONTIER,
    C_GROUP_OPEN,
    C_LAND_LEFT,
    C_LARGEST_AREA,
    C_LINE_FREE,
    C_MATCH_X_LEFT,
    C_MEADOW_FREE,
    C_MISMATCH_X_LEFT,
    C_MISSING,
    C_MISSING_X_LEFT,
    C_NEIGHBOURS,
    C_NEW_FRONTIER,
    C_NEW_TASK_X_LEFT,
    C_OPEN_TASKS,
    C_PROGRESS_X_LEFT,
    C_RAIL_LEN,
    C_RIVER_LEN,
    C_TASK_OPEN_EDGES,
    C_TASK_TILE,
    C_TASKS_LEFT,
    C_TIGHT_TASKS,
    MATCH,
    MISMATCH,
    N_COLUMNS,
    N_GREEDY,
    NEW_TASK,
    PROGRESS,
)
from agents.search import placement_kernels as DK
from envs.dorfromantik import kernels as K


@njit(cache=True)
def _after_features(uf, tasks, meta, rot_edges, flag, rot: int, tile: int, done0: int, failed0: int,
                    front0: int, row) -> None:
    """Descriptors of the position just after the placement of ``tile`` with ``rot`` (``place`` already
    run; the three game arrays it reads): columns ``C_FRONTIER`` to ``C_FAILED``."""
    p = meta[K.M_PLACED] - 1
    row[C_FRONTIER] = meta[K.M_FRONT]
    row[C_NEW_FRONTIER] = meta[K.M_FRONT] - front0 + 1
    group_open = 0
    largest = 0
    closed = 0
    for t in range(1, 6):
        has = False
        for d in range(6):
            if rot_edges[tile, rot, d] == t:
                has = True
        if not has:
            continue
        root = K.uf_root(uf, p * 5 + t - 1)
        group_open += uf[2, root]
        if t <= 3:
            largest = max(largest, np.int64(uf[1, root]))
            if uf[2, root] == 0:
                closed += 1
        elif t == K.RAIL:
            row[C_RAIL_LEN] = uf[1, root]
        else:
            row[C_RIVER_LEN] = uf[1, root]
    row[C_GROUP_OPEN] = group_open
    row[C_LARGEST_AREA] = largest
    row[C_AREAS_CLOSED] = closed
    f = np.int64(flag[tile])
    if f > 0:
        root = K.uf_root(uf, p * 5 + f - 1)
        if uf[2, root] > 0:
            row[C_FLAG_OPEN] = uf[1, root]
    missing = 0
    open_edges = 0
    tight = 0
    for k in range(meta[K.M_TASKS]):
        if tasks[k, 3] != 0:
            continue
        root = K.uf_root(uf, tasks[k, 0])
        missing += tasks[k, 2] - uf[1, root]
        open_edges += uf[2, root]
        if uf[2, root] == 1:
            tight += 1
    row[C_OPEN_TASKS] = meta[K.M_OPEN_TASKS]
    row[C_MISSING] = missing
    row[C_TASK_OPEN_EDGES] = open_edges
    row[C_TIGHT_TASKS] = tight
    row[C_COMPLETED] = meta[K.M_DONE] - done0
    row[C_FAILED] = meta[K.M_FAILED] - failed0


@njit(cache=True, inline="always")
def _describe(board, rot_edges, task_type, flag, i: int, rot: int, tile: int, undo, row) -> None:
    """Columns ``C_LAND_LEFT`` onwards of placing the drawn ``tile`` at frontier slot ``i``/``rot`` of
    ``board`` (a :class:`envs.dorfromantik.kernels.DorfBoard`), except the four that multiply greedy
    terms (``C_PROGRESS_X_LEFT``, ``C_MATCH_X_LEFT``, ``C_MISMATCH_X_LEFT``, ``C_NEW_TASK_X_LEFT``).
    The tile is placed on the real arrays and every touched entry restored; ``undo`` is
    :func:`_undo_arrays`' (copies of frontier, uf, tasks, meta as they are, scratch for the rest)."""
    cells, frontier, placed, uf, tasks, _, meta = board
    s_frontier, s_uf, s_tasks, s_meta, s_cells, s_rows, s_placed = undo
    cell = frontier[i]
    n_front = meta[K.M_FRONT]
    land_left = K.NUM_LAND - meta[K.M_LAND_POS]
    frac_left = land_left / max(K.NUM_LAND - meta[K.M_UNSEEN], 1)
    p = meta[K.M_PLACED]
    row[C_LAND_LEFT] = land_left
    row[C_FRAC_LEFT] = frac_left
    row[C_TASKS_LEFT] = K.NUM_TASK - meta[K.M_TASK_POS]
    row[C_TASK_TILE] = 1.0 if task_type[tile] > 0 else 0.0
    nb = 0
    area_free = 0
    line_free = 0
    meadow_free = 0
    for d in range(6):
        e = rot_edges[tile, rot, d]
        if cells[cell + K.DIR_OFFSETS[d], 0] >= 0:
            nb += 1
        elif e == 0:
            meadow_free += 1
        elif e <= 3:
            area_free += 1
        else:
            line_free += 1
    row[C_NEIGHBOURS] = nb
    row[C_AREA_FREE] = area_free
    row[C_LINE_FREE] = line_free
    row[C_MEADOW_FREE] = meadow_free
    # place on the real arrays, describe, undo
    s_rows[0] = cell
    s_rows[1] = frontier[n_front - 1]
    for d in range(6):
        s_rows[2 + d] = cell + K.DIR_OFFSETS[d]
    for k in range(8):
        s_cells[k] = cells[s_rows[k]]
    s_placed[:] = placed[p]
    K.place(cells, frontier, placed, uf, tasks, meta, rot_edges, task_type, cell, rot)
    _after_features(uf, tasks, meta, rot_edges, flag, rot, tile, s_meta[K.M_DONE], s_meta[K.M_FAILED],
                    n_front, row)
    for k in range(7, -1, -1):
        cells[s_rows[k]] = s_cells[k]
    frontier[i] = cell
    for k in range(n_front - 1, min(n_front + 6, frontier.shape[0])):
        frontier[k] = s_frontier[k]
    placed[p] = s_placed
    uf[:] = s_uf
    tasks[:] = s_tasks
    meta[:] = s_meta
    row[C_MISSING_X_LEFT] = row[C_MISSING] * frac_left
    row[C_AREA_FREE_X_LEFT] = area_free * frac_left


@njit(cache=True)
def _undo_arrays(board) -> tuple:
    """What :func:`_describe` needs to undo a trial placement on ``board``: copies of its frontier, uf,
    tasks and meta, and scratch for the touched cell rows, their indices and the placement row."""
    return (board.frontier.copy(), board.uf.copy(), board.tasks.copy(), board.meta.copy(),
            np.zeros((8, 4), board.cells.dtype), np.zeros(8, np.int64), np.zeros(3, board.placed.dtype))


@njit(cache=True)
def candidate_features_by_placement(board, rot_edges, task_type, flag, mask, slots, rots, feats) -> int:
    """The reference of :func:`agents.learned.dorfromantik_after.candidate_features` (the same rows):
    fill ``slots[i]``, ``rots[i]`` (frontier slot, rotation) and ``feats[i]`` for every legal
    placement ``i`` of the drawn tile of ``board`` (a :class:`envs.dorfromantik.kernels.DorfBoard`), in
    (slot, rotation) order; return how many. The game arrays come back as they were (up to
    union-find path halving, which changes no group)."""
    cells, frontier, placed, uf, tasks, _, meta = board
    n_legal = K.legal_moves(cells, frontier, uf, meta, rot_edges, task_type, mask)
    tile = meta[K.M_DRAWN]
    roots = np.zeros(6, np.int64)
    out2 = np.zeros(2, np.int64)
    flagged = np.zeros(K.MAX_PLACED, np.int64)
    n_flagged = GK.flagged_placements(placed, meta, flag, flagged)
    basis = np.eye(N_GREEDY)
    undo = _undo_arrays(board)
    lf = (K.NUM_LAND - meta[K.M_LAND_POS]) / max(K.NUM_LAND - meta[K.M_UNSEEN], 1)
    n = 0
    for i in range(meta[K.M_FRONT]):
        cell = frontier[i]
        for rot in range(6):
            if not mask[i, rot]:
                continue
            row = feats[n]
            row[:] = 0.0
            slots[n] = i
            rots[n] = rot
            for j in range(N_GREEDY):
                row[j] = GK.evaluate_placement(board, rot_edges, task_type, flag, basis[j], flagged,
                                               n_flagged, cell, rot, roots, out2)
            _describe(board, rot_edges, task_type, flag, i, rot, tile, undo, row)
            row[C_PROGRESS_X_LEFT] = row[PROGRESS] * lf
            row[C_MATCH_X_LEFT] = row[MATCH] * lf
            row[C_MISMATCH_X_LEFT] = row[MISMATCH] * lf
            row[C_NEW_TASK_X_LEFT] = row[NEW_TASK] * lf
            n += 1
    assert n == n_legal
    return n


@njit(cache=True)
def label_playouts(board, work, pick_cells, pick_rots, seeds, rot_edges, task_type, flag, weights, mask,
                   score, out) -> None:
    """``out[k, f]``: final total of placing ``pick_cells[k]``/``pick_rots[k]`` on ``board`` and playing
    greedy (``weights``) to the end on the future of ``seeds[f]`` (the same futures for every
    candidate); ``work`` is the scratch board (both :class:`envs.dorfromantik.kernels.DorfBoard`)."""
    for k in range(pick_cells.shape[0]):
        for f in range(seeds.shape[0]):
            out[k, f] = DK.playout(board, work, pick_cells[k], pick_rots[k], seeds[f], True, rot_edges,
                                   task_type, flag, weights, mask, score)


@njit(cache=True)
def linear_values_by_placement(board, rot_edges, task_type, flag, theta, mask, values) -> int:
    """The reference of :func:`agents.learned.dorfromantik_after.linear_values` (same arguments, the
    same numbers bit for bit): each placement valued on its own, the greedy terms and the four columns
    that multiply them as one :func:`GK.evaluate_placement` call with the folded weights (the
    valuation is linear in them), the rest described by placing the tile (:func:`_describe`)."""
    cells, frontier, placed, uf, tasks, _, meta = board
    n_legal = K.legal_moves(cells, frontier, uf, meta, rot_edges, task_type, mask)
    if n_legal == 0:
        return 0
    tile = meta[K.M_DRAWN]
    w = theta[phase_of(meta)]
    folded = folded_weights(meta, w)
    roots = np.zeros(6, np.int64)
    out2 = np.zeros(2, np.int64)
    flagged = np.zeros(K.MAX_PLACED, np.int64)
    n_flagged = GK.flagged_placements(placed, meta, flag, flagged)
    undo = _undo_arrays(board)
    row = np.zeros(N_COLUMNS)
    for i in range(meta[K.M_FRONT]):
        for rot in range(6):
            if not mask[i, rot]:
                continue
            v = GK.evaluate_placement(board, rot_edges, task_type, flag, folded, flagged, n_flagged,
                                      frontier[i], rot, roots, out2)
            row[:] = 0.0
            _describe(board, rot_edges, task_type, flag, i, rot, tile, undo, row)
            for j in range(N_GREEDY, N_COLUMNS):
                v += row[j] * w[j]
            values[i, rot] = v
    return n_legal


@njit(cache=True)
def first_best(meta, mask, values) -> int:
    """``slot * 6 + rot`` of the first legal placement (slot, rotation order) whose value is within 1e-9
    of the best, -1 with none."""
    top = -np.inf
    for i in range(meta[K.M_FRONT]):
        for rot in range(6):
            if mask[i, rot]:
                top = max(top, values[i, rot])
    for i in range(meta[K.M_FRONT]):
        for rot in range(6):
            if mask[i, rot] and values[i, rot] >= top - 1e-9:
                return i * 6 + rot
    return -1


@njit(cache=True)
def linear_placement(board, rot_edges, task_type, flag, theta, mask, values) -> int:
    """The placement ``slot * 6 + rot`` the linear policy ``theta`` plays on ``board`` (a
    :class:`envs.dorfromantik.kernels.DorfBoard`): the first (in slot, rotation order) whose
    ``features @ theta[phase]`` is within 1e-9 of the best, -1 with no legal placement. Valued by
    frontier cell (:func:`agents.learned.dorfromantik_after.linear_values`: about the cost of two
    greedy valuations); ``values[slot, rot]`` gets every legal value."""
    if linear_values(board, rot_edges, task_type, flag, theta, mask, values) == 0:
        return -1
    return first_best(board.meta, mask, values)


@njit(cache=True)
def play_linear(board, rot_edges, task_type, flag, theta, mask, values) -> int:
    """Play the game on ``board`` (a :class:`envs.dorfromantik.kernels.DorfBoard`) to its end with
    :func:`linear_placement`; returns the placements made."""
    cells, frontier, placed, uf, tasks, deck, meta = board
    n = 0
    while meta[K.M_OVER] == 0:
        k = linear_placement(board, rot_edges, task_type, flag, theta, mask, values)
        K.place(cells, frontier, placed, uf, tasks, meta, rot_edges, task_type, frontier[k // 6], k % 6)
        K.advance(cells, frontier, deck, meta, rot_edges, task_type)
        n += 1
    return n


@njit(cache=True)
def playout_linear(board, work, cell: int, rot: int, future_seed: np.uint64, rot_edges, task_type, flag,
                   theta, mask, values, score) -> int:
    """:func:`agents.search.placement_kernels.playout` with the linear policy ``theta`` playing the
    rest of the game (:func:`play_linear`) after the same start
    (:func:`agents.search.placement_kernels.start_playout`)."""
    DK.start_playout(board, work, cell, rot, future_seed, rot_edges, task_type)
    play_linear(work, rot_edges, task_type, flag, theta, mask, values)
    K.score_breakdown(work.cells, work.placed, work.uf, work.meta, flag, score)
    return score[K.S_TOTAL]
