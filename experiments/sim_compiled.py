"""Compiled game loops for ``simulate``: whole games in numba for agents that have one.

A loop plays one game from ``game.new_game(seed)`` to the end, making exactly the choices the seats'
Python agents make through the engine, each from its own generator (``numpy_generator(seed,
"seat<i>")``) whose PCG64 state the loop advances in numba (:mod:`experiments.sim_pcg`): random
(:class:`agents.random.RandomAgent`: the legal actions in ascending order, ``legal[rng.integers(n)]``)
in every game, and every game's greedy agent (Cartographers and Dorfromantik: their compiled
candidate values, ties broken by ``rng.integers`` as :class:`agents.greedy.ValueGreedy` does;
Cascadia: its compiled turn planner, which draws nothing), any mix of the two (Dorfromantik's loop:
:mod:`experiments.sim_dorfromantik`).
The final state then goes through the same score sheets and winners as
:func:`experiments.runner.play_game`, so the rows are identical (tested for every game and seat
count). MCTS and any other agent fall back to the Python engine (``play_columns`` returns None).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from agents.base import agent_label, make_agent
from agents.greedy import cartographers_kernels as CG
from agents.greedy.cartographers import GreedyAgent as CartographersGreedy
from agents.greedy.cascadia import DEFAULT_WEIGHTS as CASCADIA_WEIGHTS
from agents.greedy.cascadia import CascadiaGreedyAgent as CascadiaGreedy
from agents.greedy.cascadia import greedy_action as cascadia_greedy_action
from agents.greedy.dorfromantik import DorfromantikGreedyAgent as DorfromantikGreedy
from agents.random import RandomAgent
from envs.cartographers import kernels as CK
from envs.cascadia import kernels as SK
from envs.dorfromantik import kernels as DK
from envs.dorfromantik.data import TASK_TYPES
from experiments.runner import GameRecord, winners
from experiments.sim_choices import greedy_choice, kth_true
from experiments.sim_dorf_legal import tile_signatures
from experiments.sim_dorfromantik import dorfromantik_chunk, dorfromantik_game
from experiments.sim_pcg import integers, seed_pcg
from experiments.sim_rows import chunk_columns, shared_wins


@njit(cache=True)
def cartographers_game(st, tb, policy: np.ndarray, weights: np.ndarray, pcg: np.ndarray,
                       buf: np.ndarray, mask: np.ndarray, actions: np.ndarray, values: np.ndarray,
                       decisions: np.ndarray) -> None:
    """Play the Cartographers game in ``st`` to the end; seat ``i`` plays random (``policy[i]`` 0) or
    greedy with ``weights[i]`` (1), each as its Python agent does (see module docstring)."""
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
def cascadia_game(tiles, rots, edges, tokens, front, cells, flist, pinfo, market, stack, bag, ctl, rng,
                  nbr, kind_edges, kind_info, tables, policy: np.ndarray, weights: np.ndarray,
                  pcg: np.ndarray, buf: np.ndarray, decisions: np.ndarray) -> None:
    """Play the Cascadia game in these arrays to the end; seat ``i`` random (``policy[i]`` 0: the
    ascending legal list) or greedy with ``weights[i]`` (1: the planner's action, the first legal
    one should it ever be illegal, as :class:`agents.greedy.cascadia.CascadiaGreedyAgent` does)."""
    while ctl[SK.C_PHASE] != SK.PHASE_OVER:
        seat = ctl[SK.C_CUR]
        n = SK.legal_actions(tiles, tokens, cells, flist, pinfo, market, bag, ctl, kind_info, buf)
        if policy[seat] == 0:
            action = buf[integers(pcg[seat], n)]
        else:
            action = cascadia_greedy_action(tiles, tokens, edges, cells, flist, pinfo, market, ctl, nbr,
                                            kind_edges, kind_info, tables, weights[seat])
            legal = False
            for i in range(n):
                legal = legal or buf[i] == action
            if not legal:
                action = buf[0]
        decisions[seat] += 1
        SK.apply_action(action, tiles, rots, edges, tokens, front, cells, flist, pinfo, market, stack, bag,
                        ctl, rng, nbr, kind_edges, kind_info)


Loop = Callable[[Any, np.ndarray, np.ndarray], None]
#: agent classes some loop can play (each game's builder says which of them it covers)
COMPILED_AGENTS = (RandomAgent, CartographersGreedy, CascadiaGreedy, DorfromantikGreedy)


def _cartographers(game: Any, agents: list[Any]) -> Loop | None:
    if not all(isinstance(a, RandomAgent | CartographersGreedy) for a in agents):
        return None
    policy = np.array([0 if isinstance(a, RandomAgent) else 1 for a in agents], np.int64)
    weights = np.stack([getattr(a, "weights", CG.DEFAULT_WEIGHTS) for a in agents])
    buf = np.empty((4096, 2), np.int32)
    mask = np.zeros(CK.NUM_ACTIONS, np.bool_)
    actions = np.empty(CG.MAX_CANDIDATES, np.int64)
    values = np.empty(CG.MAX_CANDIDATES, np.float64)
    return lambda state, pcg, decisions: cartographers_game(state.arrays(), game.tb, policy, weights, pcg,
                                                             buf, mask, actions, values, decisions)


def _cascadia(game: Any, agents: list[Any]) -> Loop | None:
    if not all(isinstance(a, RandomAgent | CascadiaGreedy) for a in agents):
        return None
    policy = np.array([0 if isinstance(a, RandomAgent) else 1 for a in agents], np.int64)
    default = np.array(list(CASCADIA_WEIGHTS.values()), np.float64)
    weights = np.stack([getattr(a, "weights", default) for a in agents])
    buf = np.empty_like(game._legal_buf)
    return lambda state, pcg, decisions: cascadia_game(*state.board_args(), game.nbr, game.kind_edges,
                                                        game.kind_info, game.tables, policy, weights, pcg,
                                                        buf, decisions)


def _dorfromantik(game: Any, agents: list[Any]) -> Loop | None:
    if not all(isinstance(a, RandomAgent | DorfromantikGreedy) for a in agents):
        return None
    policy = np.array([0 if isinstance(a, RandomAgent) else 1 for a in agents], np.int64)
    weights = np.stack([getattr(a, "weights", DK.DEFAULT_WEIGHTS) for a in agents])
    lmask = np.zeros((DK.MAX_FRONTIER, 6), np.bool_)
    gvalues = np.zeros((DK.MAX_FRONTIER, 6), np.float64)
    codes = np.zeros(DK.MAX_FRONTIER * 6, np.int64)
    values = np.zeros(DK.MAX_FRONTIER * 6, np.float64)
    tile_sig = tile_signatures(game._rot_edges)

    def loop(state: Any, pcg: np.ndarray, decisions: np.ndarray) -> None:
        dorfromantik_game(state.cells, state.frontier, state.placed, state.uf, state.tasks, state.deck,
                          state.meta, game._rot_edges, game._task_type, game._flag, tile_sig, policy, weights,
                          game.window_radius, pcg, lmask, gvalues, codes, values, decisions)
    return loop


def _dorfromantik_columns(game: Any, agents: list[str], seeds: list[int], index: int,
                          built: list[Any]) -> dict[str, list[Any]] | None:
    """A whole Dorfromantik chunk in one compiled call (setup, play, score breakdown per seed)."""
    if not all(isinstance(a, RandomAgent | DorfromantikGreedy) for a in built):
        return None
    players, games = len(agents), len(seeds)
    policy = np.array([0 if isinstance(a, RandomAgent) else 1 for a in built], np.int64)
    weights = np.stack([getattr(a, "weights", DK.DEFAULT_WEIGHTS) for a in built])
    scores = np.zeros((games, DK.SCORE_SIZE), np.int64)
    facts = np.zeros((games, 4), np.int64)
    decisions = np.zeros((games, players), np.int64)
    dorfromantik_chunk(np.asarray(seeds, np.int64), zlib.crc32(b"dorfromantik/stacks"), _seat_crcs(players),
                       game._markers, game._rules, game._rot_edges, game._task_type, game._flag,
                       tile_signatures(game._rot_edges), policy, weights, game.window_radius, scores, facts,
                       decisions)
    total = scores[:, DK.S_TOTAL]
    categories = {"tasks": scores[:, DK.S_TASKS:DK.S_TASKS + 5].sum(axis=1),
                  "flags": scores[:, DK.S_FLAGS:DK.S_FLAGS + 3].sum(axis=1),
                  "longest_rail": scores[:, DK.S_RAIL], "longest_river": scores[:, DK.S_RIVER]}
    extras = {f"tasks_{name}": scores[:, DK.S_TASKS + t] for t, name in enumerate(TASK_TYPES)}
    extras.update({f"flags_{name}": scores[:, DK.S_FLAGS + t] for t, name in enumerate(TASK_TYPES[:3])})
    extras.update(completed_tasks=facts[:, 0], failed_tasks=facts[:, 1], open_tasks=facts[:, 2],
                  tiles_placed=facts[:, 3])
    shared = np.repeat(total[:, None].astype(np.float64), players, axis=1)
    return chunk_columns(index, seeds, [agent_label(a) for a in agents], shared, decisions,
                         shared_wins(shared) if players > 1 else None, categories, extras)


def _seat_crcs(players: int) -> np.ndarray:
    """``zlib.crc32`` of each seat's generator purpose (``numpy_generator(seed, "seat<i>")``)."""
    return np.array([zlib.crc32(f"seat{i}".encode()) for i in range(players)], np.int64)


#: game name -> a whole chunk's columns in one compiled call (None: some seat not covered)
CHUNKS: dict[str, Callable[..., dict[str, list[Any]] | None]] = {
    "dorfromantik": _dorfromantik_columns,
}
#: game name -> builder of its whole-game loop for the seats' agents (None: not covered)
LOOPS: dict[str, Callable[[Any, list[Any]], Loop | None]] = {
    "cartographers": _cartographers,
    "cascadia": _cascadia,
    "dorfromantik": _dorfromantik,
}


def compiled_loop(game: Any, agents: list[str]) -> Loop | None:
    """The whole-game loop for these seats' agents, or None when the Python engine must play.
    The agents are built once (as the Python path builds them) to read their settings."""
    builder = LOOPS.get(getattr(game, "name", ""))
    if builder is None:
        return None
    built = [make_agent(spec, game) for spec in agents]
    if any(type(a) not in COMPILED_AGENTS for a in built):
        return None
    return builder(game, built)


def record_of(game: Any, agents: list[str], seed: int, state: Any, decisions: np.ndarray) -> GameRecord:
    """The record :func:`experiments.runner.play_game` makes of a finished game (no timings)."""
    sheets = game.scores(state)
    totals = [float(s.total) for s in sheets]
    game_winners = getattr(game, "winners", None)
    players = len(agents)
    return GameRecord(
        seed=int(seed), agents=[agent_label(a) for a in agents], totals=totals,
        categories=[{k: float(v) for k, v in s.categories.items()} for s in sheets],
        extras=[{k: v.item() if isinstance(v, np.generic) else v for k, v in s.extra.items()}
                for s in sheets],
        decisions=[int(d) for d in decisions], decision_seconds=[0.0] * players,
        max_decision_seconds=[0.0] * players, wall_seconds=0.0,
        winning_seats=list(game_winners(state)) if callable(game_winners) else winners(totals))


def play_columns(game: Any, agents: list[str], seeds: list[int], index: int) -> dict[str, list[Any]] | None:
    """One chunk's columns from the compiled loop, or None when some seat's agent has none."""
    chunked = CHUNKS.get(getattr(game, "name", ""))
    if chunked is not None:
        built = [make_agent(spec, game) for spec in agents]
        if any(type(a) not in COMPILED_AGENTS for a in built):
            return None
        return chunked(game, agents, seeds, index, built)
    loop = compiled_loop(game, agents)
    if loop is None:
        return None
    players = len(agents)
    crcs = _seat_crcs(players)
    pcg = np.zeros((players, 6), np.uint64)
    rows: list[dict[str, Any]] = []
    for seed in seeds:
        state = game.new_game(seed)
        for i in range(players):
            seed_pcg(seed, crcs[i], pcg[i])
        decisions = np.zeros(players, np.int64)
        loop(state, pcg, decisions)
        rows.extend({"chunk": index, **row} for row in record_of(game, agents, seed, state, decisions)
                    .seat_rows(timing=False))
    return {key: [row.get(key) for row in rows] for key in rows[0]}
