"""``action_space="candidates"``: a single-agent env whose actions index a short list of moves.

:class:`CandidateEnv` wraps a plain :class:`envs.core.gym_env.GameEnv` (which keeps the rules,
opponents, rewards, seeding, ``info`` and rendering) and offers, per decision, the game's candidate
moves (:mod:`envs.core.candidates`, registered by the agents package) as rows of features:

* observation ``Dict(candidates=Box(float32, (K, d)), candidate_mask=Box(0, 1, (K,), float32),
  context=Box(float32, (c,)))``; rows sorted by the greedy value, best first (stable), so index 0
  is the greedy agent's move; K is the view's ``max_candidates`` (``max_candidates=`` overrides);
* action ``Discrete(K)``: a row index. A masked-out index raises
  :class:`~envs.core.errors.IllegalActionError` naming it, or with ``illegal_action="penalize"``
  keeps the state and returns ``illegal_penalty`` (as the plain env does);
* ``info``: the plain env's keys plus ``candidate_actions`` (int64[K], the rows' plain actions,
  -1 padding), ``num_candidates`` (n) and ``candidates_truncated`` (n when n > K rows were cut to
  the best K, else 0).

Decisions without candidates (a multiplayer Cartographers ambush) are played by the view's
fallback agent inside the step, their reward added to the step's.
:func:`make_env` is the Gymnasium entry point that reads ``action_space`` and ``max_candidates``,
so ``gymnasium.make("meeplelab/Cartographers-v0", action_space="candidates", max_candidates=64)``
works.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from envs.core.candidates import CandidateView
from envs.core.errors import ConfigError, IllegalActionError
from envs.core.game import action_index
from envs.core.policies import candidate_view
from envs.core.rng import numpy_generator

ACTION_SPACES = ("plain", "candidates")


class CandidateEnv(gym.Env):
    """The plain single-agent ``env`` with candidate-index actions (module docstring).

    Args:
        env: the plain env (a :class:`~envs.core.gym_env.GameEnv`); it is stepped underneath.
        max_candidates: K, the rows kept per decision (default: the view's).
        view: the candidate view (default: the one registered for ``env.game.name``).
    """

    def __init__(self, env: gym.Env, max_candidates: int | None = None, view: CandidateView | None = None):
        super().__init__()
        self.env = env
        self.game = env.game
        self.view = candidate_view(self.game.name) if view is None else view
        k = self.view.max_candidates if max_candidates is None else max_candidates
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ConfigError(f"max_candidates must be an integer >= 1, got {max_candidates!r}")
        self.max_candidates = int(k)
        self.metadata = env.metadata
        self.render_mode = env.render_mode
        d, c, bound = len(self.view.feature_names), len(self.view.context_names), self.view.bound
        self.observation_space = spaces.Dict({
            "candidates": spaces.Box(-bound, bound, shape=(self.max_candidates, d), dtype=np.float32),
            "candidate_mask": spaces.Box(0.0, 1.0, shape=(self.max_candidates,), dtype=np.float32),
            "context": spaces.Box(-bound, bound, shape=(c,), dtype=np.float32),
        })
        self.action_space = spaces.Discrete(self.max_candidates)
        self._actions = np.full(self.max_candidates, -1, dtype=np.int64)
        self._n = 0
        self._ranked: tuple[np.ndarray, np.ndarray, int] | None = None  # the decision's rows, best first
        self._pending = 0.0
        self._fallback_agent: Any = None
        self._fallback_rng = np.random.default_rng(0)
        self._last: tuple[dict[str, np.ndarray], dict[str, Any]] | None = None

    @property
    def state(self) -> Any:
        return self.env.state

    @property
    def seat(self) -> int:
        return self.env.seat

    # ---- Gymnasium API ------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the plain env (same seeds, same games); fallback decisions before the first
        candidate decision are paid with the first step."""
        super().reset(seed=seed)
        _, info = self.env.reset(seed=seed, options=options)
        self._fallback_rng = numpy_generator(self.env.game_seed, "candidates/fallback")
        self._pending, _, info = self._skip_fallbacks(0.0, bool(self.game.is_over(self.state)), info)
        return self._observe(info)

    def step(self, action):
        """Play candidate row ``action`` (then opponents and fallback decisions, as the plain env)."""
        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.game.is_over(self.state):
            raise IllegalActionError(-1, f"the game is over; call reset() (got action {action!r})")
        try:
            index = action_index(action, self.max_candidates)
            if index >= min(self._n, self.max_candidates):
                raise IllegalActionError(index, f"candidate index {index} is masked out: this decision "
                                                f"has {min(self._n, self.max_candidates)} candidate(s)")
        except IllegalActionError as exc:
            if self.env.illegal_action == "raise":
                raise
            obs, info = self._last
            info = dict(info, illegal_action=str(exc))
            return {k: v.copy() for k, v in obs.items()}, self.env.illegal_penalty, False, False, info
        reward, terminated, info = self._play(int(self._actions[index]))
        reward, terminated, info = self._skip_fallbacks(reward + self._pending, terminated, info)
        self._pending = 0.0
        obs, info = self._observe(info)
        return obs, reward, terminated, False, info

    def render(self):
        """As the plain env."""
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def action_masks(self) -> np.ndarray:
        """The valid row indices now as a bool array (the MaskablePPO convention)."""
        return np.arange(self.max_candidates) < self._n

    # ---- helpers ------------------------------------------------------------------------------

    def _play(self, action: int) -> tuple[float, bool, dict[str, Any]]:
        """Play candidate ``action`` (legal by construction) through the plain env's move logic, without
        building the plain observation: (reward, terminated, info)."""
        if self.view.play is None:
            reward, terminated = self.env.apply_move(lambda state: self.game.step(state, action))
        else:  # a candidate that is not one plain action (a Cascadia turn)
            reward, terminated = self.env.apply_move(lambda state: self.view.play(self.game, state, action))
        return reward, terminated, self.env.step_info()

    def _skip_fallbacks(self, reward: float, terminated: bool, info: dict[str, Any]
                        ) -> tuple[float, bool, dict[str, Any]]:
        """List the next decision's candidates; play decisions without any by the fallback agent."""
        while not terminated:
            self._ranked = self.view.ranked(self.game, self.state, self.max_candidates)
            if self._ranked[2]:
                return reward, terminated, info
            if self._fallback_agent is None:
                self._fallback_agent = self.view.fallback_agent(self.game)
            action = self.view.fallback(self.game, self.state, self._fallback_rng, self._fallback_agent)
            _, r, terminated, _, info = self.env.step(action)
            reward += float(r)
        return reward, terminated, info

    def _observe(self, info: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        k, view = self.max_candidates, self.view
        rows = np.zeros((k, len(view.feature_names)), dtype=np.float32)
        self._actions.fill(-1)
        self._n = 0
        if not self.game.is_over(self.state):
            actions, features, self._n = self._ranked
            rows[:actions.size] = features
            self._actions[:actions.size] = actions
        mask = (np.arange(k) < self._n).astype(np.float32)
        context = view.context(self.game, self.state, self.seat)
        info = dict(info, candidate_actions=self._actions.copy(), num_candidates=self._n,
                    candidates_truncated=self._n if self._n > k else 0)
        obs = {"candidates": rows, "candidate_mask": mask, "context": context}
        self._last = (obs, info)
        return {key: v.copy() for key, v in obs.items()}, info


def make_env(*args: Any, env_class: str, action_space: str = "plain", max_candidates: int | None = None,
             **options: Any) -> gym.Env:
    """Gymnasium entry point of the single-agent ids (``env_class`` = ``"module:Class"``, from the
    id's registered kwargs): the class built from ``options``, wrapped in :class:`CandidateEnv`
    when ``action_space="candidates"``. One RLlib ``env_config`` mapping may come first."""
    if args and isinstance(args[0], Mapping):
        options = {**args[0], **options}
        action_space = options.pop("action_space", action_space)
        max_candidates = options.pop("max_candidates", max_candidates)
        args = args[1:]
    if action_space not in ACTION_SPACES:
        raise ConfigError(f"action_space must be one of {ACTION_SPACES}, got {action_space!r}")
    if action_space == "plain" and max_candidates is not None:
        raise ConfigError("max_candidates needs action_space='candidates'")
    module, _, name = env_class.partition(":")
    env = getattr(importlib.import_module(module), name)(*args, **options)
    return env if action_space == "plain" else CandidateEnv(env, max_candidates=max_candidates)
