"""Compiled root search for Cartographers: the MCTS agent's fast path (``engine="compiled"``).

It runs the same algorithm as :class:`agents.search.mcts.MCTSAgent` with ``max_depth=1`` and random
rollouts, entirely in numba: for each simulation, pick a root action (progressive widening in
prior order, then UCB1 on normalised returns of the acting seat), determinize the root, apply
the action, play uniformly random to the end, back up the per-seat totals.

* Determinization (:func:`determinize_into`) mirrors ``CartographersGame.determinize``: the
  explore cards still in the deck keep their identity, the ambushes still hidden (in the deck or
  in the pile) are resampled, both orders are reshuffled and the chance stream gets fresh bits.
  The hidden cards are first put in a canonical (sorted) order, so the result depends only on
  what the player knows and the search's own seed, never on the real order.
* Rollouts are the engine's compiled uniform random playout (``kernels.play_random``). A whole
  solo game from the start costs about 100 us of CPU, which caps this search near 10,000
  simulations per core-second at the start of a game (far more later: shorter playouts). A
  rejection sampler instead of the engine's enumerating ``random_action`` was tried and measured
  no faster: the playout's cost is spread over drawing, coins and season scoring.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from agents.greedy.cartographers_kernels import step
from envs.cartographers.kernels import (
    M_AMB_POS,
    M_LEN,
    M_POS,
    N_AMBUSH_CARDS,
    N_DECK_CARDS,
    N_EXPLORE_CARDS,
    play_random,
    totals,
)
from envs.core.rng import next_u64, shuffle_prefix


class RootStats(NamedTuple):
    """The root bandit that :func:`root_search` carries between calls, in this order: ``order``
    int32/int64[n] (root actions in widening order), ``visits`` float64[n] and ``sums``
    float64[n, P] (per child: simulations and per-seat return sums), ``acc`` float64[4] (lowest and
    highest return seen, simulations so far, children so far)."""

    order: np.ndarray
    visits: np.ndarray
    sums: np.ndarray
    acc: np.ndarray


@njit(cache=True)
def copy_state(src, dst) -> None:
    """Copy the 9 state arrays of ``src`` into ``dst`` (same shapes)."""
    dst[0][:] = src[0]
    dst[1][:] = src[1]
    dst[2][:] = src[2]
    dst[3][:] = src[3]
    dst[4][:] = src[4]
    dst[5][:] = src[5]
    dst[6][:] = src[6]
    dst[7][:] = src[7]
    dst[8][:] = src[8]


@njit(cache=True)
def determinize_into(src, dst, stream: np.ndarray) -> None:
    """Copy state ``src`` into ``dst`` (same shapes) with the hidden future resampled from the
    canonical order of the hidden cards (see the module docstring)."""
    copy_state(src, dst)  # the chance stream (array 7) gets fresh bits below
    deck, amb, meta = dst[3], dst[4], dst[6]
    pos, length, amb_pos = meta[M_POS], meta[M_LEN], meta[M_AMB_POS]
    present = np.zeros(N_DECK_CARDS, np.bool_)
    n_amb_deck = 0
    for i in range(pos, length):
        present[deck[i]] = True
        if deck[i] >= N_EXPLORE_CARDS:
            n_amb_deck += 1
    for i in range(amb_pos, N_AMBUSH_CARDS):
        present[amb[i]] = True
    unseen = np.empty(N_AMBUSH_CARDS, np.int8)
    n_unseen = 0
    for c in range(N_EXPLORE_CARDS, N_DECK_CARDS):
        if present[c]:
            unseen[n_unseen] = c
            n_unseen += 1
    shuffle_prefix(unseen, n_unseen, stream)
    rest = np.empty(N_DECK_CARDS, np.int8)
    n_rest = 0
    for c in range(N_EXPLORE_CARDS):
        if present[c]:
            rest[n_rest] = c
            n_rest += 1
    for j in range(n_amb_deck):
        rest[n_rest] = unseen[j]
        n_rest += 1
    shuffle_prefix(rest, n_rest, stream)
    for j in range(n_rest):
        deck[pos + j] = rest[j]
    for j in range(n_amb_deck, n_unseen):
        amb[amb_pos + j - n_amb_deck] = unseen[j]
    dst[7][0] = next_u64(stream)


@njit(cache=True)
def root_search(st, scratch, tb, stats: RootStats, n_sims: int, c: float, k_widen: float, alpha: float,
                player: int, stream: np.ndarray) -> None:
    """Run ``n_sims`` more simulations of the root bandit ``stats`` (:class:`RootStats`, carried
    between calls); ``scratch`` is a state tuple of the same shapes as ``st``. Called from Python
    per chunk of 64 simulations (milliseconds): the record's type check does not show."""
    order, visits, sums, acc = stats
    no_actions = np.zeros(0, np.int32)
    n = order.shape[0]
    seats = sums.shape[1]
    for _ in range(n_sims):
        total = acc[2]
        children = int(acc[3])
        allowed = n
        if k_widen > 0.0:
            allowed = min(n, int(math.ceil(k_widen * (total + 1.0) ** alpha)))
        if children < allowed:
            slot = children
            acc[3] = children + 1
        else:
            lo = acc[0]
            scale = acc[1] - acc[0]
            if scale <= 0.0:
                scale = 1.0
            log_total = math.log(max(total, 1.0))
            best = -np.inf
            slot = 0
            for i in range(children):
                u = (sums[i, player] / visits[i] - lo) / scale + c * math.sqrt(log_total / visits[i])
                if u > best:
                    best = u
                    slot = i
        determinize_into(st, scratch, stream)
        step(scratch, tb, order[slot])
        play_random(scratch, tb, stream, no_actions)
        ret = totals(scratch[8])
        visits[slot] += 1.0
        for p in range(seats):
            v = float(ret[p])
            sums[slot, p] += v
            if v < acc[0]:
                acc[0] = v
            if v > acc[1]:
                acc[1] = v
        acc[2] = total + 1.0


def new_scratch(state) -> tuple:
    """A state tuple with the shapes of ``state`` for :func:`root_search`."""
    return tuple(a.copy() for a in state.arrays())
