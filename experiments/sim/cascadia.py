"""The Cascadia loops for ``simulate``: one game (random and greedy seats, any mix) and a whole chunk.

:func:`cascadia_game` plays a dealt game as the seats' Python agents would (random: the
``rng.integers(n)``-th of the ascending legal list; greedy: the compiled turn planner, the first
legal action should it ever be illegal, as :class:`agents.greedy.cascadia.CascadiaGreedyAgent`
does). :func:`cascadia_chunk` deals, plays and scores one game per seed on one set of arrays, as
``game.new_game(seed)`` and ``game.score_table`` do, so a chunk costs one compiled call;
:func:`cascadia_columns` turns its arrays into the rows ``game.scores`` and ``game.winners`` give.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
from numba import njit

from agents.base import agent_label
from agents.greedy.cascadia import greedy_on_board
from envs.cascadia import kernels as SK
from envs.cascadia.data import HABITATS, NUM_TILES, STARTER_CELLS, WILDLIFE
from envs.core.pcg import derive_seed_crc, integers, seat_crcs, seed_pcg
from experiments.sim.rows import chunk_columns, win_shares


@njit(cache=True)
def cascadia_game(board, tb, policy: np.ndarray, weights: np.ndarray, pcg: np.ndarray, buf: np.ndarray,
                  decisions: np.ndarray) -> None:
    """Play the Cascadia game on ``board`` (a :class:`envs.cascadia.kernels.CascadiaBoard`; ``tb`` its
    game's :class:`envs.cascadia.kernels.CascadiaTables`) to the end; seat ``i`` random (``policy[i]``
    0: the ascending legal list) or greedy with ``weights[i]`` (1: the planner's action, the first
    legal one should it ever be illegal, as :class:`agents.greedy.cascadia.CascadiaGreedyAgent` does)."""
    tiles, tokens, cells, flist, pinfo = board.tiles, board.tokens, board.cells, board.flist, board.pinfo
    market, bag, ctl = board.market, board.bag, board.ctl
    kind_info = tb.kind_info
    while ctl[SK.C_PHASE] != SK.PHASE_OVER:
        seat = ctl[SK.C_CUR]
        n = SK.legal_actions(tiles, tokens, cells, flist, pinfo, market, bag, ctl, kind_info, buf)
        if policy[seat] == 0:
            action = buf[integers(pcg[seat], n)]
        else:
            action = greedy_on_board(board, tb, weights[seat])
            legal = False
            for i in range(n):
                legal = legal or buf[i] == action
            if not legal:
                action = buf[0]
        decisions[seat] += 1
        SK.apply_on_board(action, board, tb.nbr, tb.kind_edges, kind_info)


@njit(cache=True)
def cascadia_chunk(seeds: np.ndarray, chance_crc: int, seat_crcs: np.ndarray, starters, board, tb,
                   starter_cells: np.ndarray, setup: np.ndarray, policy: np.ndarray, weights: np.ndarray,
                   table: np.ndarray, decisions: np.ndarray) -> None:
    """Per seed: deal as ``game.new_game`` (``setup``: tiles, tiles used, wildlife per animal, nature
    tokens, tie mode), play (:func:`cascadia_game`), score into ``table[g]``
    (players x ``SK.NUM_CAT``, as ``game.score_table``); ``decisions[g, seat]``. ``board`` is a
    :class:`envs.cascadia.kernels.CascadiaBoard` reused for every game, ``tb`` the game's
    :class:`envs.cascadia.kernels.CascadiaTables`."""
    players = policy.shape[0]
    pcg = np.zeros((players, 6), np.uint64)
    nbr = tb.nbr
    scratch = SK.score_scratch(nbr.shape[0])
    buf = np.empty(SK.MAX_LEGAL, np.int32)
    for g in range(seeds.shape[0]):
        board.rng[0] = derive_seed_crc(seeds[g], chance_crc)
        SK.clear_areas(board.tiles, board.rots, board.edges, board.tokens, board.front, board.cells,
                       board.flist)
        SK.deal_game(players, starters, board, nbr, tb.kind_edges, starter_cells, setup[0], setup[1],
                     setup[2], setup[3], setup[4])
        for i in range(players):
            seed_pcg(seeds[g], seat_crcs[i], pcg[i])
        cascadia_game(board, tb, policy, weights, pcg, buf, decisions[g])
        SK.score_all_into(board.edges, board.tokens, board.cells, board.pinfo, board.ctl, nbr, tb.tables,
                          tb.solo_min, tb.solo_points, table[g], scratch)


def cascadia_columns(game: Any, agents: list[str], seeds: list[int], index: int,
                      policy: np.ndarray, weights: np.ndarray) -> dict[str, list[Any]]:
    """A whole Cascadia chunk in one compiled call (deal, play, score table per seed)."""
    players, games = len(agents), len(seeds)
    data = game.data
    setup = np.array([NUM_TILES, data.tiles_used(players), data.wildlife_per_animal, data.nature_tokens,
                      1 if game.second_place_tie == "share" else 0], np.int64)
    table = np.zeros((games, players, SK.NUM_CAT), np.int32)
    decisions = np.zeros((games, players), np.int64)
    state = game.new_state_arrays()
    cascadia_chunk(np.asarray(seeds, np.int64), zlib.crc32(b"chance"), seat_crcs(players),
                   state.starters, state.board_args(), game.tb, STARTER_CELLS, setup, policy, weights, table,
                   decisions)
    categories = {w: table[:, :, SK.CAT_WILDLIFE + i] for i, w in enumerate(WILDLIFE)}
    categories.update({f"corridor_{h}": table[:, :, SK.CAT_CORRIDOR + i] for i, h in enumerate(HABITATS)})
    categories.update({f"bonus_{h}": table[:, :, SK.CAT_BONUS + i] for i, h in enumerate(HABITATS)})
    categories["nature_tokens"] = table[:, :, SK.CAT_NATURE]
    extras = {"base": table[:, :, SK.CAT_BASE], "wildlife": table[:, :, 0:5].sum(axis=2),
              "habitat": table[:, :, 5:10].sum(axis=2), "bonus": table[:, :, 10:15].sum(axis=2)}
    wins = None
    if players > 1:  # game.winners: the best total, ties broken by more nature tokens, then shared
        key = table[:, :, SK.CAT_TOTAL].astype(np.int64) * 1024 + table[:, :, SK.CAT_NATURE]  # < 1024 tokens
        wins = win_shares(key == key.max(axis=1, keepdims=True))
    return chunk_columns(index, seeds, [agent_label(a) for a in agents], table[:, :, SK.CAT_TOTAL], decisions,
                         wins, categories, extras)
