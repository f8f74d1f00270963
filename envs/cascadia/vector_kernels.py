"""Numba kernels of the batched Cascadia env: N games checked and stepped in one call, then
scored, masked and observed in another, through the same rule kernels as the single env.

``bst`` holds the arrays of :class:`envs.cascadia.game.CascadiaState` with a leading sub-env
axis, in ``board_args`` order then ``starters``: ``tiles`` int16[N, P, C], ``rots`` int8[N, P, C],
``edges`` int8[N, P, C, 6], ``tokens`` int8[N, P, C], ``front`` int8[N, P, C], ``cells``
int16[N, P, MAX_CELLS], ``flist`` int16[N, P, MAX_FRONT], ``pinfo`` int32[N, P, 4], ``market``
int16[N, 2, 4], ``stack`` int16[N, NUM_TILES], ``bag`` int32[N, 5], ``ctl`` int32[N, NUM_CTL],
``rng`` uint64[N, 1], ``starters`` int16[N, 5]. ``legal`` int32[N, MAX_LEGAL] and ``nlegal``
int64[N] keep each sub-env's legal actions (ascending) for the next check.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from envs.cascadia import kernels as K
from envs.cascadia.data import NUM_CELLS, NUM_TILES

CELL_FEATURES = 24
OTHER_FEATURES = 12


class StepOut(NamedTuple):
    """What :func:`observe_batch` writes for the caller, per sub-env i: ``obs[i]`` float32[obs] seat
    0's observation, ``mask[i]`` float32[actions] its legal actions, ``rewards[i]`` its reward,
    ``terms[i]`` game over."""

    obs: np.ndarray
    mask: np.ndarray
    rewards: np.ndarray
    terms: np.ndarray


def new_batch(num_envs: int, players: int) -> tuple:
    """Arrays of ``num_envs`` games of ``players`` seats (contents set by the first reset)."""
    n, p = num_envs, players
    return (np.full((n, p, NUM_CELLS), -1, np.int16), np.zeros((n, p, NUM_CELLS), np.int8),
            np.full((n, p, NUM_CELLS, 6), -1, np.int8), np.full((n, p, NUM_CELLS), -1, np.int8),
            np.zeros((n, p, NUM_CELLS), np.int8), np.full((n, p, K.MAX_CELLS), -1, np.int16),
            np.full((n, p, K.MAX_FRONT), -1, np.int16), np.zeros((n, p, 4), np.int32),
            np.zeros((n, 2, 4), np.int16), np.zeros((n, NUM_TILES), np.int16), np.zeros((n, 5), np.int32),
            np.zeros((n, K.NUM_CTL), np.int32), np.zeros((n, 1), np.uint64), np.zeros((n, 5), np.int16))


@njit(cache=True)
def _is_legal(legal: np.ndarray, n: int, action: int) -> bool:
    """Binary search of ``action`` in the ascending ``legal[:n]``."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if legal[mid] < action:
            lo = mid + 1
        else:
            hi = mid
    return lo < n and legal[lo] == action


@njit(cache=True, inline="always")
def _board(bst, i: int):
    """Sub-env ``i``'s state arrays as a :class:`envs.cascadia.kernels.CascadiaBoard`."""
    return K.CascadiaBoard(bst[0][i], bst[1][i], bst[2][i], bst[3][i], bst[4][i], bst[5][i], bst[6][i],
                           bst[7][i], bst[8][i], bst[9][i], bst[10][i], bst[11][i], bst[12][i])


@njit(cache=True)
def _new_game(bst, i: int, stream: np.uint64, setup: np.ndarray, nbr, kind_edges,
              starter_cells) -> None:
    """What ``CascadiaGame.new_game`` does, on sub-env ``i``'s reused arrays. ``setup`` =
    (players, tiles used, tokens per animal, nature tokens, tie mode)."""
    bst[12][i, 0] = stream
    K.setup_game(setup[0], bst[13][i], bst[0][i], bst[1][i], bst[2][i], bst[3][i], bst[4][i],
                 bst[5][i], bst[6][i], bst[7][i], bst[8][i], bst[9][i], bst[10][i], bst[11][i], bst[12][i],
                 nbr, kind_edges, starter_cells, NUM_TILES, setup[1], setup[2], setup[3], setup[4])


@njit(cache=True)
def _kind_row(table: np.ndarray, kind: int, out: np.ndarray, off: int) -> None:
    if kind >= 0:
        for f in range(table.shape[1]):
            out[off + f] = table[kind, f]


@njit(cache=True)
def observe(bst, i: int, p: int, kind_info, kind_table, score, out) -> None:
    """Seat ``p``'s observation of sub-env ``i`` into ``out`` (float32[obs]), the layout of
    ``envs.cascadia.observation.observation_vector``; ``score`` is the game's score table now."""
    tiles, edges, tokens, front, cells, flist, pinfo = (bst[0][i], bst[2][i], bst[3][i], bst[4][i], bst[5][i],
                                                         bst[6][i], bst[7][i])
    market, bag, ctl = bst[8][i], bst[10][i], bst[11][i]
    out[:] = 0.0
    planes = out[:NUM_CELLS * CELL_FEATURES].reshape((NUM_CELLS, CELL_FEATURES))
    K.observation_planes(p, tiles, edges, tokens, front, cells, flist, pinfo, kind_info, planes)
    g = out[NUM_CELLS * CELL_FEATURES:]
    for s in range(4):
        _kind_row(kind_table, market[0, s], g, 11 * s)
        if market[1, s] >= 0:
            g[44 + 5 * s + market[1, s]] = 1.0
    _kind_row(kind_table, ctl[K.C_HAND_TILE], g, 64)
    if ctl[K.C_HAND_TOKEN] >= 0:
        g[75 + ctl[K.C_HAND_TOKEN]] = 1.0
    for w in range(5):
        g[80 + w] = bag[w] / 20.0
    g[85] = pinfo[p, K.P_NATURE] / 10.0
    g[86] = ctl[K.C_SUPPLY] / 25.0
    g[87 + min(ctl[K.C_PHASE], 3)] = 1.0
    if ctl[K.C_THREE_USED] == 0 and ctl[K.C_ACTED] == 0 and K.three_of_a_kind(market) >= 0:
        g[91] = 1.0
    g[92] = ctl[K.C_ACTED]
    g[93] = pinfo[p, K.P_TURNS] / 20.0
    g[94] = (ctl[K.C_STACK_LEN] - ctl[K.C_STACK_POS]) / 83.0
    players = ctl[K.C_PLAYERS]
    g[95] = players / 4.0
    g[96] = 1.0 if ctl[K.C_CUR] == p else 0.0
    for k in range(1, players):
        o = (p + k) % players
        base = 97 + OTHER_FEATURES * (k - 1)
        g[base] = 1.0
        g[base + 1] = pinfo[o, K.P_NATURE] / 10.0
        for h in range(5):
            g[base + 2 + h] = score[o, K.CAT_CORRIDOR + h] / 20.0
            g[base + 7 + h] = score[o, K.CAT_WILDLIFE + h] / 30.0


@njit(cache=True)
def apply_batch(bst, actions, resetting, streams, setup, nbr, kind_edges, kind_info, starter_cells, legal,
                nlegal) -> int:
    """Check ``actions[i]`` of every sub-env not ``resetting`` against its kept legal list (on
    the first illegal one return its index, having changed nothing); then deal a new game from
    ``streams[i]`` where ``resetting[i]``, else apply the action. Returns -1."""
    n = actions.shape[0]
    for i in range(n):
        if not resetting[i] and not _is_legal(legal[i], nlegal[i], actions[i]):
            return i
    for i in range(n):
        if resetting[i]:
            _new_game(bst, i, streams[i], setup, nbr, kind_edges, starter_cells)
        else:
            K.apply_on_board(actions[i], _board(bst, i), nbr, kind_edges, kind_info)
    return -1


@njit(cache=True)
def observe_batch(bst, resetting, tb, kind_table, scratch, score, legal, nlegal, totals, out) -> None:
    """After :func:`apply_batch` (and the opponents' replies): score every sub-env (reward: seat
    0's total score change, 0 where ``resetting``), keep its legal list and write ``out`` (a
    :class:`StepOut`: its mask, seat 0's observation, reward, game over). ``tb`` a
    :class:`envs.cascadia.kernels.CascadiaTables`; ``scratch`` from ``kernels.score_scratch``;
    ``score`` int32[4, NUM_CAT]."""
    nbr, kind_info = tb.nbr, tb.kind_info
    obs, mask, rewards, terms = out.obs, out.mask, out.rewards, out.terms
    for i in range(resetting.shape[0]):
        ctl = bst[11][i]
        K.score_all_into(bst[2][i], bst[3][i], bst[5][i], bst[7][i], ctl, nbr, tb.tables, tb.solo_min,
                         tb.solo_points, score, scratch)
        total = score[0, K.CAT_TOTAL]
        rewards[i] = 0.0 if resetting[i] else total - totals[i]
        totals[i] = total
        over = ctl[K.C_PHASE] == K.PHASE_OVER
        terms[i] = over
        nlegal[i] = 0 if over else K.legal_actions(bst[0][i], bst[3][i], bst[5][i], bst[6][i], bst[7][i],
                                                   bst[8][i], bst[10][i], ctl, kind_info, legal[i])
        row = mask[i]
        row[:] = 0.0
        for k in range(nlegal[i]):
            row[legal[i, k]] = 1.0
        observe(bst, i, 0, kind_info, kind_table, score, obs[i])
