"""The Cartographers chunk for ``simulate``: every seed dealt, played and recorded in one compiled call.

:func:`cartographers_chunk` resets one set of state arrays per seed exactly as
``game.new_game(seed)`` allocates them, deals and reveals with the engine's ``setup`` and
``step(-1)``, plays with :func:`cartographers_game` (random and greedy seats) and keeps what the
score sheets read (the season records, coins, edicts, season). :func:`cartographers_columns`
then builds the rows ``game.scores`` and ``game.winners`` give (tested equal).
"""

from __future__ import annotations

import zlib
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from agents.base import agent_label
from agents.greedy import cartographers_kernels as CG
from envs.cartographers import kernels as CK
from envs.core.pcg import derive_seed_crc, integers, seat_crcs, seed_pcg
from envs.core.rng import kth_true
from experiments.sim.choices import greedy_choice
from experiments.sim.rows import chunk_columns, win_shares


class ChunkRows(NamedTuple):
    """What :func:`cartographers_chunk` keeps of game g, in this order: ``records`` int64[G, P, 4, 5]
    (the season records), ``coins`` int64[G, P], ``edicts`` int64[G, 4], ``seasons`` int64[G] (the
    season the game ended in) and ``decisions`` int64[G, P] (decisions per seat)."""

    records: np.ndarray
    coins: np.ndarray
    edicts: np.ndarray
    seasons: np.ndarray
    decisions: np.ndarray


@njit(cache=True)
def cartographers_game(st, tb, policy: np.ndarray, weights: np.ndarray, pcg: np.ndarray,
                       buf: np.ndarray, mask: np.ndarray, actions: np.ndarray, values: np.ndarray,
                       decisions: np.ndarray) -> None:
    """Play the Cartographers game in ``st`` to the end; seat ``i`` plays random (``policy[i]`` 0) or
    greedy with ``weights[i]`` (1), each as its Python agent does."""
    meta = st[6]
    while meta[CK.M_PHASE] != CK.PHASE_OVER:
        seat = meta[CK.M_ACTOR]
        if policy[seat] == 0:
            n = CK.legal_mask_into(st, tb, buf, mask)
            action = kth_true(mask, integers(pcg[seat], n))
        else:
            n = CG.score_candidates(st, tb, weights[seat], buf, actions, values)
            action = greedy_choice(actions, values, n, pcg[seat])
        decisions[seat] += 1
        CK.step(st, tb, action)


@njit(cache=True)
def cartographers_chunk(seeds: np.ndarray, chance_crc: int, st, tb, forced: np.ndarray, random_order: bool,
                        settings: np.ndarray, seat_crcs: np.ndarray, policy: np.ndarray, weights: np.ndarray,
                        out: ChunkRows) -> None:
    """Per seed: fresh arrays (``settings``: players, coin cap, ambushes, as ``new_game`` puts them
    in ``meta``), deal, play, then row g of ``out`` (:class:`ChunkRows`)."""
    records, coins, edicts, seasons, decisions = out
    grid, coin, mtn_done, deck, amb, edict, meta, rng, record = st
    players = policy.shape[0]
    pcg = np.zeros((players, 6), np.uint64)
    buf = np.empty((4096, 2), np.int32)
    mask = np.zeros(CK.NUM_ACTIONS, np.bool_)
    actions = np.empty(CG.MAX_CANDIDATES, np.int64)
    values = np.empty(CG.MAX_CANDIDATES, np.float64)
    for g in range(seeds.shape[0]):
        grid[:] = 0
        coin[:] = 0
        mtn_done[:] = False
        deck[:] = -1
        amb[:] = 0
        edict[:] = 0
        record[:] = 0
        meta[:] = 0
        meta[CK.M_PLAYERS] = settings[0]
        meta[CK.M_CAP] = settings[1]
        meta[CK.M_AMBUSHES] = settings[2]
        rng[0] = derive_seed_crc(seeds[g], chance_crc)
        CK.setup(st, tb, forced, random_order)
        CK.step(st, tb, -1)
        for i in range(players):
            seed_pcg(seeds[g], seat_crcs[i], pcg[i])
        cartographers_game(st, tb, policy, weights, pcg, buf, mask, actions, values, decisions[g])
        records[g] = record
        coins[g] = coin
        edicts[g] = edict
        seasons[g] = meta[CK.M_SEASON]


def cartographers_columns(game: Any, agents: list[str], seeds: list[int], index: int,
                          policy: np.ndarray, weights: np.ndarray) -> dict[str, list[Any]]:
    """A whole Cartographers chunk in one compiled call; rows as ``game.scores`` and ``game.winners``."""
    players, games = len(agents), len(seeds)
    state = game.new_game(0)  # arrays of the right shapes, reset per seed by the kernel
    settings = np.array([players, -1 if game.coin_cap is None else int(game.coin_cap), int(game.ambushes)],
                        np.int64)
    records = np.zeros((games, *state.record.shape), np.int64)
    coins = np.zeros((games, players), np.int64)
    edicts = np.zeros((games, 4), np.int64)
    seasons = np.zeros(games, np.int64)
    decisions = np.zeros((games, players), np.int64)
    cartographers_chunk(np.asarray(seeds, np.int64), zlib.crc32(b"cartographers/chance"), state.arrays(),
                        game.tb, game.forced, game.edict_order == "random", settings, seat_crcs(players),
                        policy, weights, ChunkRows(records, coins, edicts, seasons, decisions))
    categories: dict[str, np.ndarray] = {}
    for s, keys in enumerate(game._category_keys):
        rec = records[:, :, s, :]
        for key, value in zip(keys, (rec[..., 0], rec[..., 1], rec[..., 2], -rec[..., 3], rec[..., 4]),
                              strict=True):
            categories[key] = value
    total = records[:, :, :, CK.R_TOTAL].sum(axis=2)
    lost = records[:, :, :, CK.R_MONSTERS].sum(axis=2)
    extras: dict[str, Any] = {"seasons_scored": np.minimum(seasons, 4), "coins": coins, "monsters_lost": lost}
    wins = None
    if players == 1:
        threshold = np.asarray(game._solo_values, np.int64)[edicts].sum(axis=1)
        evaluation = total[:, 0] - threshold
        extras.update(threshold=threshold, evaluation=evaluation,
                      title=np.array([game.data.title_for(int(e)) for e in evaluation], dtype=object))
    else:  # game.winners: the best total, ties broken by fewer monster points lost, then shared
        key = total * 4096 - lost  # monster points lost stay far below 4096
        wins = win_shares(key == key.max(axis=1, keepdims=True))
    return chunk_columns(index, seeds, [agent_label(a) for a in agents], total, decisions, wins, categories,
                         extras)
