"""Dorfromantik as a natively batched Gymnasium vector env (N games per numba call).

Sub-env i plays exactly the game of :class:`envs.dorfromantik.env.DorfromantikEnv` (team mode: the
agent places every tile, whichever seat is current) reset with the same game seed and given the
same actions: same observations, masks, rewards and terminations (tested). Spaces (the single env's
bounded observation Box), seeds, autoreset (next step, as RLlib wants), infos and errors:
:mod:`envs.core.vector_env`.

``gymnasium.make_vec("meeplelab/Dorfromantik-v0", num_envs=N, vectorization_mode="vector_entry_point")``
builds it; RLlib 2.60 takes ``make_vector_env`` as a vector entry point (its ``env_config`` plus
``num_envs``); without either: ``make_vector_env({"num_envs": 64})``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector.utils import batch_space

from envs.core.errors import ConfigError
from envs.core.rng import derive_seed
from envs.core.vector_env import BatchedGameVectorEnv, vector_env_options
from envs.dorfromantik import vector_kernels as VK
from envs.dorfromantik.env import bounded_observation_space
from envs.dorfromantik.game import DorfromantikGame, DorfState


class DorfromantikVectorEnv(BatchedGameVectorEnv):
    """N Dorfromantik games stepped together, the agent placing every tile (the single env's
    ``team=True``).

    Args:
        num_envs: number of games N.
        reward: "score" (the change of the shared score; an episode's rewards add up to the final
            score).
        **game_options: ``players`` (1-6, default 1; the score is shared, so the seat count changes
            only the seat that ``info`` would name), ``window_radius``, ``data_path``; ``team``
            must be True.
    """

    def __init__(self, num_envs: int, reward: str = "score", **game_options: Any):
        if not game_options.pop("team", True):
            raise ConfigError("the dorfromantik vector env plays team=True only "
                              "(the agent places every tile)")
        game = DorfromantikGame(**game_options)
        super().__init__(game, num_envs, reward)
        self.game: DorfromantikGame
        self.single_observation_space = bounded_observation_space(game)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._batch = VK.new_batch(self.num_envs)

    def _chance_stream(self, game_seed: int) -> np.uint64:
        return derive_seed(game_seed, "dorfromantik/stacks")

    def _run(self, actions, resetting, streams, obs, mask, rewards, terms) -> int:
        g = self.game
        return VK.step_batch(self._batch, g.tb, g.players, g.window_radius, actions, resetting, streams, obs,
                             mask, rewards, terms)

    def sub_state(self, i: int) -> DorfState:
        """Sub-env ``i``'s game as a state (views: changes follow the env)."""
        b = self._batch
        return DorfState(b.cells[i], b.frontier[i], b.placed[i], b.uf[i], b.tasks[i], b.deck[i], b.meta[i],
                         b.stream[i], seed=int(self.game_seeds[i]))

    def _why_illegal(self, i: int, action: int) -> tuple[str, str | None]:
        return self.game.why_illegal(self.sub_state(i), action), self.game.describe_action(action)

    def _final_scores(self, ended: np.ndarray) -> np.ndarray:
        return self._batch.totals.astype(np.float64)


def make_vector_env(config: dict | None = None, **options: Any) -> DorfromantikVectorEnv:
    """RLlib's vector entry point: ``config`` is its ``env_config`` with ``num_envs`` added;
    ``reward`` and the game options go in the same mapping (see the module docstring). ``opponent``
    is accepted and unused: the agent places every tile."""
    num_envs, reward, _, game_options = vector_env_options(config, options)
    return DorfromantikVectorEnv(num_envs, reward, **game_options)
