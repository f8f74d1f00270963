"""The Dorfromantik candidate view's after-placement columns by frontier cell, without placing.

:func:`agents.learned.dorfromantik_kernels.candidate_features_by_placement` and the linear policy's
``linear_placement_by_placement`` describe the position after a placement by putting the tile on the
real arrays, reading the groups, tasks and frontier, and restoring everything: about 0.4 us per
placement, three quarters of a learned decision. :func:`cell_descriptors` computes the same columns for
the six rotations of one frontier cell from what the greedy valuation by cell
(:func:`agents.greedy.dorfromantik_cells.cell_values`) reads once per cell: the tile's groups once
placed (size and open edges per terrain), each open task's size and open edges after the placement
(and so whether it completes or fails, as ``check_tasks`` rules), and the frontier the cell leaves.
Every column is the placed one exactly (tested on thousands of positions), so the linear policy's
values, choices and games are unchanged.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.greedy.dorfromantik_cells import (
    G_OPEN,
    G_ROOT,
    G_SIZE,
    G_TARGET,
    G_TERR,
    cell_values,
    ensure_after,
    joins,
    step_groups,
    step_jit,
)
from agents.greedy.dorfromantik_kernels import flagged_placements
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
    PHASE_LAND_LEFT,
    PROGRESS,
)
from envs.dorfromantik.kernels import (
    DIR_OFFSETS,
    M_DRAWN,
    M_FRONT,
    M_LAND_POS,
    M_MARKER,
    M_OPEN_TASKS,
    M_TASK_POS,
    M_UNSEEN,
    MAX_PLACED,
    NUM_LAND,
    NUM_TASK,
    RAIL,
    legal_moves,
)


@njit(cache=True, _nrt=False, inline="always")
def _task_after(new_size: int, new_open: int, target: int, tally) -> None:
    """Add one task's state after the placement to ``tally`` (completed, failed, tiles missing, open
    edges, tasks with one open edge left): ``check_tasks``' rule (exactly the target completes, above it
    or closed below fails)."""
    if new_size == target:
        tally[0] += 1
    elif new_size > target or new_open == 0:
        tally[1] += 1
    else:
        tally[2] += target - new_size
        tally[3] += new_open
        if new_open == 1:
            tally[4] += 1


@step_jit
def cell_descriptors(board, rot_edges, task_type, flag, groups, counts, cell: int, legal, rows, scratch,
                     tally) -> None:
    """``rows[rot]`` = the after-placement columns (``C_LAND_LEFT`` onwards, the four greedy-term
    products left 0 as the by-placement description leaves them) of the drawn tile at ``cell`` with
    ``rot``, for every ``legal[rot]``; the greedy columns are 0. ``scratch`` must be as
    :func:`agents.greedy.dorfromantik_cells.cell_values` left it for this ``cell`` (neighbours, faced
    edges, terrains shown); ``groups``/``counts`` from ``open_groups``; ``tally`` int64[5] scratch."""
    cells, _, _, uf, _, _, meta = board
    task_rows = groups[0]
    n_tasks = counts[0]
    nb_edge, nb_root, task_faced, _, after, known, has = scratch
    tile = meta[M_DRAWN]
    land_left = NUM_LAND - meta[M_LAND_POS]
    frac_left = land_left / max(NUM_LAND - meta[M_UNSEEN], 1)
    new_front = 0
    for d in range(6):
        n = cell + DIR_OFFSETS[d]
        if cells[n, 0] < 0 and cells[n, 3] < 0:
            new_front += 1
    own = np.int64(task_type[tile])
    own_flag = np.int64(flag[tile])
    for rot in range(6):
        if not legal[rot]:
            continue
        row = rows[rot]
        for j in range(N_COLUMNS):
            row[j] = 0.0
        edges = rot_edges[tile, rot]
        known[:] = False
        row[C_LAND_LEFT] = land_left
        row[C_FRAC_LEFT] = frac_left
        row[C_TASKS_LEFT] = NUM_TASK - meta[M_TASK_POS]
        row[C_TASK_TILE] = 1.0 if own > 0 else 0.0
        nb = 0
        area_free = 0
        line_free = 0
        meadow_free = 0
        for d in range(6):
            e = edges[d]
            if nb_edge[d] >= 0:  # a neighbour (its facing edge's terrain)
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
        row[C_FRONTIER] = meta[M_FRONT] - 1 + new_front
        row[C_NEW_FRONTIER] = new_front
        group_open = 0
        largest = 0
        closed = 0
        for t in range(1, 6):
            if not has[t]:
                continue
            ensure_after(uf, edges, nb_edge, nb_root, t, after, known)
            group_open += after[t, 1]
            if t <= 3:
                largest = max(largest, after[t, 0])
                if after[t, 1] == 0:
                    closed += 1
            elif t == RAIL:
                row[C_RAIL_LEN] = after[t, 0]
            else:
                row[C_RIVER_LEN] = after[t, 0]
        row[C_GROUP_OPEN] = group_open
        row[C_LARGEST_AREA] = largest
        row[C_AREAS_CLOSED] = closed
        if own_flag > 0 and has[own_flag]:
            ensure_after(uf, edges, nb_edge, nb_root, own_flag, after, known)
            if after[own_flag, 1] > 0:
                row[C_FLAG_OPEN] = after[own_flag, 0]
        tally[:] = 0
        for k in range(n_tasks):
            terr = task_rows[k, G_TERR]
            if has[terr] and joins(edges, nb_edge, nb_root, terr, task_rows[k, G_ROOT]):
                ensure_after(uf, edges, nb_edge, nb_root, terr, after, known)
                _task_after(after[terr, 0], after[terr, 1], task_rows[k, G_TARGET], tally)
            else:
                _task_after(task_rows[k, G_SIZE], task_rows[k, G_OPEN] - task_faced[k],
                            task_rows[k, G_TARGET], tally)
        if own > 0:
            ensure_after(uf, edges, nb_edge, nb_root, own, after, known)
            _task_after(after[own, 0], after[own, 1], meta[M_MARKER], tally)
        row[C_OPEN_TASKS] = meta[M_OPEN_TASKS] + (1 if own > 0 else 0) - tally[0] - tally[1]
        row[C_MISSING] = tally[2]
        row[C_TASK_OPEN_EDGES] = tally[3]
        row[C_TIGHT_TASKS] = tally[4]
        row[C_COMPLETED] = tally[0]
        row[C_FAILED] = tally[1]
        row[C_MISSING_X_LEFT] = row[C_MISSING] * frac_left
        row[C_AREA_FREE_X_LEFT] = area_free * frac_left


@njit(cache=True)
def phase_of(meta) -> int:
    """0 early (30 or more landscape tiles left in the stack), 1 middle (15-29), 2 late."""
    left = NUM_LAND - meta[M_LAND_POS]
    if left > PHASE_LAND_LEFT[0]:
        return 0
    return 1 if left > PHASE_LAND_LEFT[1] else 2


@njit(cache=True)
def folded_weights(meta, w):
    """The greedy part of the weight row ``w`` with the four columns that multiply greedy terms by the
    fraction of landscape tiles left folded in (the greedy valuation is linear in its weights)."""
    lf = (NUM_LAND - meta[M_LAND_POS]) / max(NUM_LAND - meta[M_UNSEEN], 1)
    folded = w[:N_GREEDY].copy()
    folded[PROGRESS] += w[C_PROGRESS_X_LEFT] * lf
    folded[MATCH] += w[C_MATCH_X_LEFT] * lf
    folded[MISMATCH] += w[C_MISMATCH_X_LEFT] * lf
    folded[NEW_TASK] += w[C_NEW_TASK_X_LEFT] * lf
    return folded


@njit(cache=True)
def linear_values(board, rot_edges, task_type, flag, theta, mask, values) -> int:
    """``values[slot, rot]`` = ``features @ theta[phase]`` of every legal placement of the drawn tile
    of ``board`` (others untouched; ``mask`` gets ``legal_moves``'): the greedy terms and their
    products as one greedy valuation with the folded weights, then the after-placement columns added
    one by one in column order, as the by-placement policy adds them. Returns the legal count."""
    cells, frontier, placed, uf, _, _, meta = board
    n_legal = legal_moves(cells, frontier, uf, meta, rot_edges, task_type, mask)
    if n_legal == 0:
        return 0
    w = theta[phase_of(meta)]
    folded = folded_weights(meta, w)
    flagged = np.zeros(MAX_PLACED, np.int64)
    n_flagged = flagged_placements(placed, meta, flag, flagged)
    groups, counts, scratch = step_groups(board, flag, flagged, n_flagged)
    rows = np.zeros((6, N_COLUMNS))
    greedy = np.zeros(6)
    tally = np.zeros(5, np.int64)
    for i in range(meta[M_FRONT]):
        any_legal = False
        for rot in range(6):
            any_legal = any_legal or mask[i, rot]
        if not any_legal:
            continue
        cell = frontier[i]
        legal = mask[i]
        cell_values(board, rot_edges, task_type, flag, folded, groups, counts, cell, legal, greedy, scratch)
        cell_descriptors(board, rot_edges, task_type, flag, groups, counts, cell, legal, rows, scratch, tally)
        for rot in range(6):
            if not mask[i, rot]:
                continue
            v = greedy[rot]
            row = rows[rot]
            for j in range(N_GREEDY, N_COLUMNS):
                v += row[j] * w[j]
            values[i, rot] = v
    return n_legal


@njit(cache=True)
def candidate_features(board, rot_edges, task_type, flag, mask, slots, rots, feats) -> int:
    """Fill ``slots[i]``, ``rots[i]`` (frontier slot, rotation) and ``feats[i]`` for every legal
    placement ``i`` of the drawn tile of ``board`` (a :class:`envs.dorfromantik.kernels.DorfBoard`), in
    (slot, rotation) order; return how many. By frontier cell: each greedy term is the greedy valuation
    with that term's unit weight (:func:`agents.greedy.dorfromantik_cells.cell_values`), the rest
    :func:`cell_descriptors`; the same rows as the by-placement
    :func:`agents.learned.dorfromantik_kernels.candidate_features_by_placement`. The board is only read."""
    cells, frontier, placed, uf, _, _, meta = board
    n_legal = legal_moves(cells, frontier, uf, meta, rot_edges, task_type, mask)
    lf = (NUM_LAND - meta[M_LAND_POS]) / max(NUM_LAND - meta[M_UNSEEN], 1)
    flagged = np.zeros(MAX_PLACED, np.int64)
    n_flagged = flagged_placements(placed, meta, flag, flagged)
    groups, counts, scratch = step_groups(board, flag, flagged, n_flagged)
    basis = np.eye(N_GREEDY)
    terms = np.zeros((N_GREEDY, 6))
    rows = np.zeros((6, N_COLUMNS))
    tally = np.zeros(5, np.int64)
    n = 0
    for i in range(meta[M_FRONT]):
        any_legal = False
        for rot in range(6):
            any_legal = any_legal or mask[i, rot]
        if not any_legal:
            continue
        cell = frontier[i]
        legal = mask[i]
        for j in range(N_GREEDY):
            cell_values(board, rot_edges, task_type, flag, basis[j], groups, counts, cell, legal, terms[j],
                        scratch)
        cell_descriptors(board, rot_edges, task_type, flag, groups, counts, cell, legal, rows, scratch, tally)
        for rot in range(6):
            if not legal[rot]:
                continue
            row = rows[rot]
            for j in range(N_GREEDY):
                row[j] = terms[j, rot]
            row[C_PROGRESS_X_LEFT] = row[PROGRESS] * lf
            row[C_MATCH_X_LEFT] = row[MATCH] * lf
            row[C_MISMATCH_X_LEFT] = row[MISMATCH] * lf
            row[C_NEW_TASK_X_LEFT] = row[NEW_TASK] * lf
            slots[n] = i
            rots[n] = rot
            for j in range(N_COLUMNS):
                feats[n, j] = row[j]
            n += 1
    assert n == n_legal
    return n
