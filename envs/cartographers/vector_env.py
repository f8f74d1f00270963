"""Solo Cartographers as a natively batched Gymnasium vector env (N games per numba call).

Sub-env i plays exactly the game of :class:`envs.cartographers.env.CartographersEnv` reset with
the same game seed and given the same actions: same observations, masks, rewards and
terminations (tested). Spaces, seeds, autoreset (next step, as RLlib wants), infos and errors:
:mod:`envs.core.vector_env`.

Use it in RLlib 2.60 as a vector entry point (RLlib calls the creator with its ``env_config``
plus ``num_envs``)::

    from envs.cartographers.vector_env import make_vector_env

    config = (PPOConfig()
              .environment(make_vector_env, env_config={"side": "A"})
              .env_runners(num_envs_per_env_runner=64, gym_env_vectorize_mode="vector_entry_point"))

or without RLlib: ``make_vector_env({"num_envs": 64})``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envs.cartographers import kernels as K
from envs.cartographers import vector_kernels as VK
from envs.cartographers.game import CartographersGame, CartographersState
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from envs.core.rng import derive_seed
from envs.core.vector_env import BatchedGameVectorEnv, vector_env_options


class CartographersVectorEnv(BatchedGameVectorEnv):
    """N solo Cartographers games stepped together.

    Args:
        num_envs: number of games N.
        reward: "score" (the change of the total score; an episode's rewards add up to the
            final score).
        **game_options: the game options of ``CartographersEnv`` (``side``, ``edict_order``,
            ``cards``, ``coin_cap``, ``ambushes``); ``players`` must be 1.
    """

    def __init__(self, num_envs: int, reward: str = "score", **game_options: Any):
        game_options.setdefault("players", 1)
        game = make_game("cartographers", **game_options)
        if game.players != 1:
            raise ConfigError(f"the cartographers vector env plays solo games only, got players="
                              f"{game.players}")
        super().__init__(game, num_envs, reward)
        self.game: CartographersGame
        self._bst = VK.new_batch(self.num_envs, game.tb.mountains.shape[0])
        self._buf = np.empty((4096, 2), dtype=np.int32)
        self._legal = np.zeros(K.NUM_ACTIONS, dtype=np.bool_)
        cap = game.coin_cap
        self._cap = -1 if cap is None else int(cap)

    def _chance_stream(self, game_seed: int) -> np.uint64:
        return derive_seed(game_seed, "cartographers/chance")

    def _run(self, actions, resetting, streams, obs, mask, rewards, terms) -> int:
        g = self.game
        return VK.step_batch(self._bst, g.tb, actions, resetting, streams, g.forced,
                             g.edict_order == "random", self._cap, g.ambushes, self._buf, self._legal,
                             VK.BatchOut(obs, mask, rewards, terms))

    def sub_state(self, i: int) -> CartographersState:
        """Sub-env ``i``'s game as a state (views: changes follow the env)."""
        return CartographersState(*(a[i] for a in self._bst))

    def _why_illegal(self, i: int, action: int) -> tuple[str, str | None]:
        return self.game.why_illegal(self.sub_state(i), action), self.game.describe_action(action)

    def _final_scores(self, ended: np.ndarray) -> np.ndarray:
        out = np.zeros(self.num_envs, dtype=np.float64)
        VK.final_totals(self._bst[8], out)
        return out


def make_vector_env(config: dict | None = None, **options: Any) -> CartographersVectorEnv:
    """RLlib's vector entry point: ``config`` is its ``env_config`` with ``num_envs`` added;
    ``reward`` and the game options go in the same mapping (see the module docstring)."""
    num_envs, reward, _, game_options = vector_env_options(config, options)  # solo: no opponent
    return CartographersVectorEnv(num_envs, reward, **game_options)
