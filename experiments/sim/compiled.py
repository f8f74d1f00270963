"""Compiled game loops for ``simulate``: whole chunks of games in numba for agents that have one.

Each game's chunk loop plays every seed of a chunk from ``game.new_game(seed)`` to the end in one
compiled call, making exactly the choices the seats' Python agents make through the engine, each
from its own generator (``numpy_generator(seed, "seat<i>")``) whose PCG64 state the loop advances
in numba (:mod:`envs.core.pcg`): random (:class:`agents.random.RandomAgent`: the legal actions
in ascending order, ``legal[rng.integers(n)]``) in every game, and every game's greedy agent
(Cartographers and Dorfromantik: their compiled candidate values, ties broken by ``rng.integers``
as :class:`agents.greedy.ValueGreedy` does; Cascadia: its compiled turn planner, which draws
nothing), any mix of the two. The loops keep the final score arrays, from which the rows are built
as :func:`experiments.common.runner.play_game`'s score sheets and winners give them (identical, tested
for every game and seat count; :mod:`experiments.sim.cartographers`, :mod:`experiments.sim.cascadia`,
:mod:`experiments.sim.dorfromantik`). MCTS and any other agent fall back to the Python engine
(``play_columns`` returns None).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agents.base import make_agent
from agents.greedy import cartographers_kernels as CG
from agents.greedy import dorfromantik_kernels as DGK
from agents.greedy.cartographers import GreedyAgent as CartographersGreedy
from agents.greedy.cascadia import DEFAULT_WEIGHTS as CASCADIA_WEIGHTS
from agents.greedy.cascadia import CascadiaGreedyAgent as CascadiaGreedy
from agents.greedy.dorfromantik import DorfromantikGreedyAgent as DorfromantikGreedy
from agents.random import RandomAgent
from experiments.sim.cartographers import cartographers_columns
from experiments.sim.cascadia import cascadia_columns
from experiments.sim.dorfromantik import dorfromantik_columns

#: game name -> (its greedy agent class, that agent's default weights, the chunk loop: a whole chunk's
#: columns in one compiled call from each seat's policy (0 random, 1 greedy) and weights)
CHUNKS: dict[str, tuple[type, np.ndarray, Callable[..., dict[str, list[Any]]]]] = {
    "cartographers": (CartographersGreedy, CG.DEFAULT_WEIGHTS, cartographers_columns),
    "cascadia": (CascadiaGreedy, np.array(list(CASCADIA_WEIGHTS.values()), np.float64), cascadia_columns),
    "dorfromantik": (DorfromantikGreedy, DGK.DEFAULT_WEIGHTS, dorfromantik_columns),
}


def play_columns(game: Any, agents: list[str], seeds: list[int], index: int) -> dict[str, list[Any]] | None:
    """One chunk's columns from the compiled loop, or None when the Python engine must play. The
    agents are built once (as the Python path builds them) to read their settings."""
    entry = CHUNKS.get(getattr(game, "name", ""))
    if entry is None:
        return None
    greedy, default_weights, chunk_loop = entry
    built = [make_agent(spec, game) for spec in agents]
    if not all(type(a) in (RandomAgent, greedy) for a in built):
        return None
    policy = np.array([0 if isinstance(a, RandomAgent) else 1 for a in built], np.int64)
    weights = np.stack([getattr(a, "weights", default_weights) for a in built])
    return chunk_loop(game, agents, seeds, index, policy, weights)
