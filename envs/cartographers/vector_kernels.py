"""Numba kernels of the batched solo Cartographers env: N games checked, stepped, masked and
observed in one call.

``bst`` is the batch of the kernels' ``st`` tuple (see :mod:`envs.cartographers.kernels`), every
array with a leading sub-env axis: ``grid`` int8[N, 1, 121], ``coins`` int16[N, 1], ``mtn_done``
bool[N, 1, M], ``deck`` int8[N, 17], ``amb`` int8[N, 4], ``edicts`` int8[N, 4], ``meta``
int32[N, N_META], ``rng`` uint64[N, 1], ``record`` int16[N, 1, 4, 5]. Sub-env i's ``st`` is the
tuple of the i-th rows (views), so every rule runs through the same kernels as the single env.
:func:`step_batch` writes its per-step results into one :class:`BatchOut` record.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from envs.cartographers import kernels as K
from envs.cartographers.data import N_AMBUSH_CARDS, N_CELLS, N_DECK_CARDS


class BatchOut(NamedTuple):
    """What :func:`step_batch` writes per sub-env i, in this order: ``obs`` float32[N, obs_size]
    (the observation), ``mask`` float32[N, NUM_ACTIONS] (1.0 = legal), ``rewards`` float64[N]
    (the score change, 0 on a reset) and ``terms`` bool[N] (game over)."""

    obs: np.ndarray
    mask: np.ndarray
    rewards: np.ndarray
    terms: np.ndarray


def new_batch(num_envs: int, n_mountains: int) -> tuple:
    """Arrays of ``num_envs`` solo games (contents set by the first reset)."""
    n = num_envs
    return (np.zeros((n, 1, N_CELLS), np.int8), np.zeros((n, 1), np.int16),
            np.zeros((n, 1, n_mountains), np.bool_), np.full((n, N_DECK_CARDS), -1, np.int8),
            np.zeros((n, N_AMBUSH_CARDS), np.int8), np.zeros((n, 4), np.int8),
            np.zeros((n, K.N_META), np.int32), np.zeros((n, 1), np.uint64), np.zeros((n, 1, 4, 5), np.int16))


@njit(cache=True)
def sub_state(bst, i: int):
    """Sub-env ``i``'s ``st`` tuple (views into the batch)."""
    return (bst[0][i], bst[1][i], bst[2][i], bst[3][i], bst[4][i], bst[5][i], bst[6][i], bst[7][i],
            bst[8][i])


@njit(cache=True)
def _total(record: np.ndarray) -> int:
    t = 0
    for s in range(4):
        t += record[0, s, K.R_TOTAL]
    return t


@njit(cache=True)
def _new_game(st, tb, stream: np.uint64, forced: np.ndarray, random_order: bool, cap: int,
              ambushes: bool) -> None:
    """What ``CartographersGame.new_game`` does for one solo game, on reused arrays."""
    meta = st[6]
    meta[:] = 0
    meta[K.M_PLAYERS] = 1
    meta[K.M_CAP] = cap
    meta[K.M_AMBUSHES] = 1 if ambushes else 0
    st[7][0] = stream
    K.setup(st, tb, forced, random_order)
    K.apply_action(st, tb, -1)


@njit(cache=True)
def step_batch(bst, tb, actions: np.ndarray, resetting: np.ndarray, streams: np.ndarray, forced: np.ndarray,
               random_order: bool, cap: int, ambushes: bool, buf: np.ndarray, legal: np.ndarray,
               out: BatchOut) -> int:
    """Check ``actions[i]`` of every sub-env not ``resetting`` (on the first illegal one return
    its index, having changed nothing); then start a new game from ``streams[i]`` where
    ``resetting[i]`` (reward 0), else apply the action (reward: the score change). Write every
    sub-env's mask (float32, 1.0 = legal), observation, reward and ``terms[i]`` = game over into
    ``out`` (:class:`BatchOut`). ``buf`` int32[4096, 2] and ``legal`` bool[NUM_ACTIONS] are
    scratch. Returns -1."""
    obs, mask, rewards, terms = out
    n = actions.shape[0]
    for i in range(n):
        if not resetting[i] and K.check_action(sub_state(bst, i), tb, actions[i]) != K.OK:
            return i
    for i in range(n):
        st = sub_state(bst, i)
        if resetting[i]:
            _new_game(st, tb, streams[i], forced, random_order, cap, ambushes)
            rewards[i] = 0.0
        else:
            before = _total(st[8])
            K.step(st, tb, actions[i])
            rewards[i] = _total(st[8]) - before
        terms[i] = st[6][K.M_PHASE] == K.PHASE_OVER
        K.legal_mask_into(st, tb, buf, legal)
        row = mask[i]
        for a in range(row.shape[0]):
            row[a] = 1.0 if legal[a] else 0.0
        K.observation_into(st, tb, 0, obs[i])
    return -1


@njit(cache=True)
def final_totals(record: np.ndarray, out: np.ndarray) -> None:
    """Total score of every sub-env (``record`` int16[N, 1, 4, 5]) into ``out``."""
    for i in range(record.shape[0]):
        out[i] = _total(record[i])
