"""Cascadia as a natively batched Gymnasium vector env (N games per numba call).

Sub-env i plays exactly the game of :class:`envs.cascadia.env.CascadiaEnv` (same ``players`` and
``opponent``) reset with the same game seed and given the same actions: same observations,
masks, rewards and terminations (tested). The learner is seat 0. With ``players`` > 1 the other
seats are played, between the two compiled calls of a step, by agents built from ``opponent``
(one per sub-env and seat, each drawing from ``numpy_generator(game_seed, f"seat{p}")`` as in the
single env); a greedy opponent decides in one compiled call per decision. Spaces, seeds,
autoreset (next step, as RLlib wants), infos and errors: :mod:`envs.core.vector_env`.

Use it in RLlib 2.60 as a vector entry point (RLlib calls the creator with its ``env_config``
plus ``num_envs``)::

    from envs.cascadia.vector_env import make_vector_env

    config = (PPOConfig()
              .environment(make_vector_env, env_config={"players": 1})  # or players=4, opponent="greedy"
              .env_runners(num_envs_per_env_runner=64, gym_env_vectorize_mode="vector_entry_point"))

or without RLlib: ``make_vector_env({"num_envs": 64})``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envs.cascadia import kernels as K
from envs.cascadia import vector_kernels as VK
from envs.cascadia.data import STARTER_CELLS
from envs.cascadia.game import CascadiaGame, CascadiaState
from envs.cascadia.observation import kind_features
from envs.core.policies import build_agent
from envs.core.registry import make_game
from envs.core.rng import derive_seed, numpy_generator
from envs.core.vector_env import BatchedGameVectorEnv, vector_env_options


class CascadiaVectorEnv(BatchedGameVectorEnv):
    """N Cascadia games stepped together, the learner in seat 0.

    Args:
        num_envs: number of games N.
        reward: "score" (the change of seat 0's total score, habitat bonuses included, over the
            step and the opponents' replies).
        opponent: agent spec of the other seats when ``players`` > 1 ("random", "greedy", ...).
        **game_options: ``players`` (1-4, default 1), ``second_place_tie``, ``data_path``.
    """

    def __init__(self, num_envs: int, reward: str = "score", opponent: Any = "random", **game_options: Any):
        game_options.setdefault("players", 1)
        game = make_game("cascadia", **game_options)
        super().__init__(game, num_envs, reward)
        self.opponent_spec = opponent
        self._opponents: list[dict[int, Any]] = []
        self._opponent_rngs: list[dict[int, np.random.Generator]] = [{} for _ in range(self.num_envs)]
        if game.players > 1:  # built now, so a bad spec fails at construction
            seats = range(1, game.players)
            self._opponents = [{p: build_agent(opponent, game) for p in seats} for _ in range(self.num_envs)]
        self.game: CascadiaGame
        data = game.data
        self._bst = VK.new_batch(self.num_envs, game.players)
        tie = 1 if game.second_place_tie == "share" else 0
        self._setup = np.array([game.players, data.tiles_used(game.players), data.wildlife_per_animal,
                                data.nature_tokens, tie], dtype=np.int64)
        self._kind_table = kind_features(game)
        self._scratch = K.score_scratch(game.nbr.shape[0])
        self._score = np.zeros((4, K.NUM_CAT), dtype=np.int32)
        self._legal = np.zeros((self.num_envs, K.MAX_LEGAL), dtype=np.int32)
        self._nlegal = np.zeros(self.num_envs, dtype=np.int64)
        self._totals = np.zeros(self.num_envs, dtype=np.int64)

    def _chance_stream(self, game_seed: int) -> np.uint64:
        return derive_seed(game_seed, "chance")

    def _run(self, actions, resetting, streams, obs, mask, rewards, terms) -> int:
        g = self.game
        bad = VK.apply_batch(self._bst, actions, resetting, streams, self._setup, g.nbr, g.kind_edges,
                             g.kind_info, STARTER_CELLS, self._legal, self._nlegal)
        if bad >= 0:
            return bad
        if self._opponents:
            self._play_opponents(resetting)
        VK.observe_batch(self._bst, resetting, g.tb, self._kind_table, self._scratch, self._score,
                         self._legal, self._nlegal, self._totals, VK.StepOut(obs, mask, rewards, terms))
        return -1

    def _play_opponents(self, resetting: np.ndarray) -> None:
        """Let the other seats move until seat 0 must act or the game is over (new games first
        give every seat its generator, as the single env's reset does)."""
        for i in np.flatnonzero(resetting):
            seed = int(self.game_seeds[i])
            self._opponent_rngs[i] = {p: numpy_generator(seed, f"seat{p}") for p in self._opponents[i]}
        ctl = self._bst[11]
        for i in np.flatnonzero((ctl[:, K.C_CUR] != 0) & (ctl[:, K.C_PHASE] != K.PHASE_OVER)):
            state = self.sub_state(int(i))
            while not self.game.is_over(state) and int(state.ctl[K.C_CUR]) != 0:
                p = int(state.ctl[K.C_CUR])
                agent, rng = self._opponents[i][p], self._opponent_rngs[i][p]
                action = agent.act(state, self.game.legal_mask(state), rng)
                self.game.step(state, int(action))

    def sub_state(self, i: int) -> CascadiaState:
        """Sub-env ``i``'s game as a state (views: changes follow the env)."""
        return CascadiaState(*(a[i] for a in self._bst))

    def _why_illegal(self, i: int, action: int) -> tuple[str, str | None]:
        try:
            self.game.check_legal(self.sub_state(i), action)
        except Exception as exc:  # noqa: BLE001 - the engine's message is the reason
            reason = getattr(exc, "reason", str(exc))
            return reason, self.game.describe_action(action)
        return "not legal in this state", None

    def _final_scores(self, ended: np.ndarray) -> np.ndarray:
        return self._totals.astype(np.float64)


def make_vector_env(config: dict | None = None, **options: Any) -> CascadiaVectorEnv:
    """RLlib's vector entry point: ``config`` is its ``env_config`` with ``num_envs`` added;
    ``reward`` and the game options go in the same mapping (see the module docstring)."""
    num_envs, reward, opponent, game_options = vector_env_options(config, options)
    return CascadiaVectorEnv(num_envs, reward, opponent, **game_options)
