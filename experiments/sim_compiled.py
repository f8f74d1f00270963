"""Compiled game loops for ``simulate``: whole games in numba for agents that have one.

A loop plays a chunk's games from ``game.new_game(seed)`` to the end, making exactly the choices the
seats' Python agents make through the engine, each from its own generator (``numpy_generator(seed,
"seat<i>")``) whose PCG64 state the loop advances in numba (:mod:`experiments.sim_pcg`): random
(:class:`agents.random.RandomAgent`: the legal actions in ascending order, ``legal[rng.integers(n)]``)
in every game, and every game's greedy agent (Cartographers and Dorfromantik: their compiled
candidate values, ties broken by ``rng.integers`` as :class:`agents.greedy.ValueGreedy` does;
Cascadia: its compiled turn planner, which draws nothing), any mix of the two.
Cascadia and Dorfromantik deal, play and score a whole chunk in one compiled call and build the
rows from arrays (:data:`CHUNKS`: :mod:`experiments.sim_cascadia`, :mod:`experiments.sim_dorfromantik`);
Cartographers plays each game in numba and scores its final state with the engine's score sheets
(:data:`LOOPS`). Either way the rows equal :func:`experiments.runner.play_game`'s (tested for every
game and seat count). MCTS and any other agent fall back to the Python engine (``play_columns``
returns None)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from agents.base import agent_label, make_agent
from agents.greedy import cartographers_kernels as CG
from agents.greedy.cartographers import GreedyAgent as CartographersGreedy
from agents.greedy.cascadia import CascadiaGreedyAgent as CascadiaGreedy
from agents.greedy.dorfromantik import DorfromantikGreedyAgent as DorfromantikGreedy
from agents.random import RandomAgent
from envs.cartographers import kernels as CK
from experiments.runner import GameRecord, winners
from experiments.sim_cascadia import cascadia_columns
from experiments.sim_choices import greedy_choice, kth_true
from experiments.sim_dorfromantik import dorfromantik_columns
from experiments.sim_pcg import integers, seat_crcs, seed_pcg


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


#: game name -> a whole chunk's columns in one compiled call (None: some seat not covered)
CHUNKS: dict[str, Callable[..., dict[str, list[Any]] | None]] = {
    "cascadia": cascadia_columns,
    "dorfromantik": dorfromantik_columns,
}
#: game name -> builder of its per-game loop for the seats' agents (None: not covered)
LOOPS: dict[str, Callable[[Any, list[Any]], Loop | None]] = {
    "cartographers": _cartographers,
}


def compiled_loop(game: Any, agents: list[str]) -> Loop | None:
    """The whole-game loop for these seats' agents, or None when the Python engine must play.
    The agents are built once (as the Python path builds them) to read their settings."""
    builder = LOOPS.get(getattr(game, "name", ""))
    built = _built(game, agents) if builder is not None else None
    return None if builder is None or built is None else builder(game, built)


def _built(game: Any, agents: list[str]) -> list[Any] | None:
    """The seats' agents built from their specs, or None when some has no compiled play."""
    built = [make_agent(spec, game) for spec in agents]
    return None if any(type(a) not in COMPILED_AGENTS for a in built) else built


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
        built = _built(game, agents)
        return None if built is None else chunked(game, agents, seeds, index, built)
    loop = compiled_loop(game, agents)
    if loop is None:
        return None
    players = len(agents)
    crcs = seat_crcs(players)
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
