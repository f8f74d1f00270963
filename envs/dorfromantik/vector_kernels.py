"""Numba kernels of the batched Dorfromantik env: N games checked, stepped, masked and observed in
one call, through the same rule kernels as the single env.

A :class:`DorfBatch` holds the arrays of :class:`envs.dorfromantik.game.DorfState` with a leading
sub-env axis and what the env keeps per sub-env to check and decode actions without recomputing them;
:func:`step_batch` takes it and the game's :class:`envs.dorfromantik.kernels.DorfTables`, and hands
each sub-env's position to the rule kernels as a :class:`envs.dorfromantik.kernels.DorfBoard`.

The observation written here is :func:`envs.dorfromantik.observation.observation_vector`, value for
value (tested); the mask comes from :func:`envs.dorfromantik.legal.fast_legal_moves`, equal to the
engine's ``legal_moves``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from envs.dorfromantik import kernels as K
from envs.dorfromantik.layout import PLANES
from envs.dorfromantik.legal import fast_legal_moves


class DorfBatch(NamedTuple):
    """The batched env's arrays, sub-env axis first: the game arrays ``cells`` int16[N, GRID_CELLS, 4],
    ``frontier`` int32[N, MAX_FRONTIER], ``placed`` int32[N, MAX_PLACED, 3], ``uf`` int16[N, 3,
    MAX_NODES], ``tasks`` int16[N, 25, 4], ``deck`` int16[N, 98], ``meta`` int32[N, META_SIZE] and
    ``stream`` uint64[N, 1] (a :class:`envs.dorfromantik.game.DorfState` each); ``lmask`` bool[N,
    MAX_FRONTIER, 6] the legal (frontier slot, rotation) pairs of the position last observed,
    ``centre`` int64[N, 2] its action window centre, ``totals`` int64[N] its score; ``score``
    int64[SCORE_SIZE] scratch."""

    cells: np.ndarray
    frontier: np.ndarray
    placed: np.ndarray
    uf: np.ndarray
    tasks: np.ndarray
    deck: np.ndarray
    meta: np.ndarray
    stream: np.ndarray
    lmask: np.ndarray
    centre: np.ndarray
    totals: np.ndarray
    score: np.ndarray


def new_batch(num_envs: int) -> DorfBatch:
    """Arrays of ``num_envs`` games (contents set by the first reset)."""
    n = num_envs
    cells = np.full((n, K.GRID_CELLS, 4), -1, np.int16)
    cells[:, :, 1:3] = 0
    return DorfBatch(cells, np.zeros((n, K.MAX_FRONTIER), np.int32), np.zeros((n, K.MAX_PLACED, 3), np.int32),
                     np.zeros((n, 3, K.MAX_NODES), np.int16), np.zeros((n, K.NUM_TASK, 4), np.int16),
                     np.zeros((n, K.DECK_SIZE), np.int16), np.zeros((n, K.META_SIZE), np.int32),
                     np.zeros((n, 1), np.uint64), np.zeros((n, K.MAX_FRONTIER, 6), np.bool_),
                     np.zeros((n, 2), np.int64), np.zeros(n, np.int64), np.zeros(K.SCORE_SIZE, np.int64))


@njit(cache=True, inline="always")
def _board(batch, i: int):
    """Sub-env ``i``'s game arrays as a :class:`envs.dorfromantik.kernels.DorfBoard`."""
    return K.DorfBoard(batch.cells[i], batch.frontier[i], batch.placed[i], batch.uf[i], batch.tasks[i],
                       batch.deck[i], batch.meta[i])


@njit(cache=True)
def window_centre(frontier, meta, lmask, radius: int) -> tuple:
    """``DorfromantikGame.window_centre`` from the legal pairs ``lmask`` of the position."""
    if meta[K.M_PLACED] == 0:
        return 0, 0
    qmin, qmax, rmin, rmax = meta[K.M_QMIN], meta[K.M_QMAX], meta[K.M_RMIN], meta[K.M_RMAX]
    if max(qmax - qmin, rmax - rmin) > 2 * (radius - 1) and meta[K.M_OVER] == 0:
        found = False
        for i in range(meta[K.M_FRONT]):
            for rot in range(6):
                if lmask[i, rot]:
                    q = K.cell_q(frontier[i])
                    r = K.cell_r(frontier[i])
                    if not found:
                        qmin, qmax, rmin, rmax = q, q, r, r
                        found = True
                    else:
                        qmin, qmax = min(qmin, q), max(qmax, q)
                        rmin, rmax = min(rmin, r), max(rmax, r)
    return (qmin + qmax) // 2, (rmin + rmax) // 2


@njit(cache=True)
def observe(board, tb, radius: int, lmask, centre, score, obs, mask) -> int:
    """Fill ``lmask`` and ``centre``, write the mask row (float32, 1.0 = legal) and the observation
    row of the position ``board`` (a :class:`envs.dorfromantik.kernels.DorfBoard`; ``tb`` the
    :class:`envs.dorfromantik.kernels.DorfTables`); returns its total score (``score``
    int64[SCORE_SIZE] is scratch)."""
    cells, frontier, placed, uf, tasks, _, meta = board
    rot_edges, task_type, flag, tile_sig = tb.rot_edges, tb.task_type, tb.flag, tb.tile_sig
    side = 2 * radius + 1
    n_board = PLANES * side * side
    if meta[K.M_OVER] == 0 and meta[K.M_DRAWN] >= 0:
        fast_legal_moves(cells, frontier, uf, meta, rot_edges, task_type, tile_sig, lmask)
    else:
        lmask[:meta[K.M_FRONT]] = False
    cq, cr = window_centre(frontier, meta, lmask, radius)
    centre[0] = cq
    centre[1] = cr
    planes = obs[:n_board].reshape((PLANES, side, side))
    K.board_planes(placed, uf, tasks, meta, rot_edges, flag, cq, cr, radius, planes)
    mask[:] = 0.0
    for i in range(meta[K.M_FRONT]):
        cell = frontier[i]
        wq = K.cell_q(cell) - cq + radius
        wr = K.cell_r(cell) - cr + radius
        if wq < 0 or wq >= side or wr < 0 or wr >= side:
            continue
        for rot in range(6):
            if lmask[i, rot]:
                mask[(wr * side + wq) * 6 + rot] = 1.0
                planes[31, wr, wq] = 1.0
    vec = obs[n_board:]
    vec[:] = 0.0
    tile = meta[K.M_DRAWN]
    if tile >= 0:
        for d in range(6):
            vec[d * 6 + rot_edges[tile, 0, d]] = 1.0
        terr = task_type[tile]
        if terr > 0:
            vec[36] = 1.0
            vec[36 + terr] = 1.0
            vec[42] = meta[K.M_MARKER] / 6.0
    j = 0
    for k in range(meta[K.M_TASKS]):
        if tasks[k, 3] != 0:
            continue
        if j == 3:
            break
        base = 43 + 8 * j
        root = K.uf_root(uf, tasks[k, 0])
        vec[base + tasks[k, 1] - 1] = 1.0
        vec[base + 5] = tasks[k, 2] / 6.0
        vec[base + 6] = uf[1, root] / 6.0
        vec[base + 7] = uf[2, root] / 12.0
        j += 1
    vec[67] = (K.NUM_LAND - meta[K.M_LAND_POS]) / 45.0
    vec[68] = (K.NUM_TASK - meta[K.M_TASK_POS]) / 25.0
    vec[69] = meta[K.M_PLACED] / 70.0
    K.score_breakdown(cells, placed, uf, meta, flag, score)
    vec[70] = (score[0] + score[1] + score[2] + score[3] + score[4]) / 50.0
    vec[71] = (score[5] + score[6] + score[7]) / 50.0
    vec[72] = score[K.S_RAIL] / 50.0
    vec[73] = score[K.S_RIVER] / 50.0
    return score[K.S_TOTAL]


@njit(cache=True)
def action_cell(action: int, centre, radius: int) -> int:
    """The grid cell of ``action``'s window position (-1 outside the grid)."""
    side = 2 * radius + 1
    index = action // 6
    q = centre[0] + index % side - radius
    r = centre[1] + index // side - radius
    if abs(q) > K.GRID_RADIUS or abs(r) > K.GRID_RADIUS:
        return -1
    return (r + K.GRID_RADIUS) * K.GRID_SIDE + (q + K.GRID_RADIUS)


@njit(cache=True)
def is_legal(cells, meta, lmask, centre, action: int, radius: int) -> bool:
    """Whether ``action`` is one of the legal placements last observed (``lmask``)."""
    if meta[K.M_OVER] != 0:
        return False
    cell = action_cell(action, centre, radius)
    if cell < 0 or cells[cell, 0] >= 0:
        return False
    slot = cells[cell, 3]
    return slot >= 0 and lmask[slot, action % 6]


@njit(cache=True)
def step_batch(batch, tb, players: int, radius: int, actions, resetting, streams, obs, mask, rewards,
               terms) -> int:
    """Check ``actions[i]`` of every sub-env of ``batch`` (a :class:`DorfBatch`) not ``resetting`` (on
    the first illegal one return its index, having changed nothing); then start a new game from
    ``streams[i]`` where ``resetting[i]`` (reward 0), else place the drawn tile as ``actions[i]`` says
    and draw the next one (reward: the score change). Write every sub-env's mask and observation and
    ``terms[i]`` = game over. ``tb``: the :class:`envs.dorfromantik.kernels.DorfTables`. Returns -1."""
    cells, frontier, placed, uf, tasks, deck, meta = batch.cells, batch.frontier, batch.placed, batch.uf, \
        batch.tasks, batch.deck, batch.meta
    stream, lmask, centre, totals = batch.stream, batch.lmask, batch.centre, batch.totals
    rot_edges, task_type = tb.rot_edges, tb.task_type
    n = actions.shape[0]
    for i in range(n):
        if not resetting[i] and not is_legal(cells[i], meta[i], lmask[i], centre[i], actions[i], radius):
            return i
    for i in range(n):
        if resetting[i]:
            K.clear_game(cells[i], frontier[i], placed[i], meta[i])
            stream[i, 0] = streams[i]
            K.setup(cells[i], frontier[i], placed[i], uf[i], tasks[i], deck[i], meta[i], tb.markers, tb.rules,
                    players, stream[i])
        else:
            cell = action_cell(actions[i], centre[i], radius)
            K.place(cells[i], frontier[i], placed[i], uf[i], tasks[i], meta[i], rot_edges, task_type, cell,
                    actions[i] % 6)
        K.advance(cells[i], frontier[i], deck[i], meta[i], rot_edges, task_type)
        total = observe(_board(batch, i), tb, radius, lmask[i], centre[i], batch.score, obs[i], mask[i])
        rewards[i] = 0.0 if resetting[i] else float(total - totals[i])
        totals[i] = total
        terms[i] = meta[i, K.M_OVER] != 0
    return -1
