"""A natively batched Gymnasium vector env over a game whose N copies step in one compiled call.

Each game's ``vector_env.py`` subclasses :class:`BatchedGameVectorEnv` and supplies the kernels;
this module owns what every such env shares: spaces, seeds, next-step autoreset, action checks,
illegal-action errors and infos.

Spaces: ``single_observation_space`` is the single env's
``Dict(observations=Box(obs), action_mask=Box(0, 1, (num_actions,), float32))``
(:func:`envs.core.gym_env.observation_space_for`); ``observation_space`` is its batch,
``Dict(observations=Box((N, obs)), action_mask=Box((N, num_actions)))``; ``action_space`` is
``MultiDiscrete([num_actions] * N)``.

Autoreset: ``metadata["autoreset_mode"] = AutoresetMode.NEXT_STEP``, what RLlib 2.60's
``SingleAgentEnvRunner`` expects: the step that ends sub-env i's game returns its last
observation with ``terminated[i] = True``; the next ``step`` ignores ``actions[i]``, starts a new
game and returns its first observation with reward 0 and ``terminated[i] = False``.

Seeds (the same games as gymnasium's ``SyncVectorEnv`` over the single env, next-step mode):
``reset(seed=s)`` gives sub-env i the game seed ``s + i`` and a numpy Generator
``gymnasium.utils.seeding.np_random(s + i)``; each of its later games (autoresets, and
``reset(seed=None)``) has the game seed ``generator.integers(0, MAX_GAME_SEED)``, which is what the
single env's ``reset()`` draws. With ``reset(seed=None)`` before any seeded reset the generators
are seeded from fresh entropy. ``options={"game_seeds": [g_0, ..., g_N-1]}`` starts the given
games and leaves the generators alone. ``game_seeds`` holds the game each sub-env plays now.

Observations and masks are written by the kernel into batch arrays allocated once per call (never
per sub-env) and handed out without a copy. They are fresh every call: RLlib keeps views of the
returned batch in its episodes, so a buffer reused across steps would rewrite its history.

Rewards: ``reward="score"`` (the only option so far), the change of the learner's total score
over the step, as in the single env. Infos: ``{}``, except on a step where some games end:
``info["score"]`` (final total per sub-env, float64) with ``info["_score"]`` marking those that
ended. The action mask is in the observation (not repeated in the info).

Illegal actions raise :class:`~envs.core.errors.IllegalActionError` naming the sub-env, the
action and the reason; the step is then not applied to any sub-env.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space

from envs.core.candidate_env import make_env
from envs.core.errors import ConfigError, IllegalActionError
from envs.core.game import Game
from envs.core.gym_env import MAX_GAME_SEED, merge_env_config, observation_space_for

REWARD_MODES = ("score",)
#: env_config keys of the single env that the vector env accepts at one value only
_FIXED_ENV_KEYS = {"seat": 0, "illegal_action": "raise", "render_mode": None}


def vector_env_options(config: Any, options: dict[str, Any]) -> tuple[int, str, Any, dict[str, Any]]:
    """(num_envs, reward, opponent, game options) from RLlib's ``env_config`` (``num_envs`` added
    by RLlib's vector entry point) and keyword options. The single env's ``seat``,
    ``illegal_action`` and ``render_mode`` are accepted at their defaults (the learner is seat 0);
    ``opponent`` (default "random") matters only with ``players`` > 1."""
    merged = merge_env_config(config, options, "num_envs")
    if "num_envs" not in merged:
        raise ConfigError("num_envs is missing: create the vector env through RLlib with "
                          "gym_env_vectorize_mode='vector_entry_point', or pass num_envs")
    num_envs = merged.pop("num_envs")
    reward = merged.pop("reward", "score")
    opponent = merged.pop("opponent", "random")
    for key, allowed in _FIXED_ENV_KEYS.items():
        if key in merged and merged.pop(key) != allowed:
            raise ConfigError(f"the vector env supports only {key}={allowed!r}")
    return num_envs, reward, opponent, merged


class BatchedGameVectorEnv(VectorEnv):
    """N games of one kind stepped together; subclasses implement :meth:`_run` and friends.

    Args:
        game: the rules object every sub-env plays; the learner is seat 0.
        num_envs: number of sub-envs N (>= 1).
        reward: "score" (own score change).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, game: Game, num_envs: int, reward: str = "score"):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ConfigError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        if reward not in REWARD_MODES:
            raise ConfigError(f"reward must be one of {REWARD_MODES} for the vector env, got {reward!r}")
        self.game = game
        self.num_envs = int(num_envs)
        self.reward_mode = reward
        self.render_mode = None
        self.single_observation_space = observation_space_for(game)
        self.single_action_space = spaces.Discrete(game.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._obs_size = int(np.prod(game.observation_shape()))
        self.game_seeds = np.full(self.num_envs, -1, dtype=np.int64)
        self._generators: list[np.random.Generator | None] = [None] * self.num_envs
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._ready = False

    # ---- Gymnasium API ------------------------------------------------------------------------

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        """Start a new game in every sub-env (seeds: see the module docstring)."""
        n = self.num_envs
        if options:
            if set(options) != {"game_seeds"}:
                raise ConfigError(f"reset options may only hold 'game_seeds', got {sorted(options)}")
            seeds = [int(s) for s in options["game_seeds"]]
            if len(seeds) != n or min(seeds) < 0:
                raise ConfigError(f"game_seeds must list {n} seeds >= 0, got {options['game_seeds']!r}")
        else:
            if seed is None:
                per_env: list[int | None] = [None] * n
            elif isinstance(seed, (int, np.integer)):
                per_env = [int(seed) + i for i in range(n)]
            else:
                per_env = [None if s is None else int(s) for s in seed]
                if len(per_env) != n:
                    raise ConfigError(f"reset(seed=list) needs {n} seeds, got {len(per_env)}")
            seeds = []
            for i, s in enumerate(per_env):
                if s is not None:
                    if s < 0:
                        raise ConfigError(f"seed must be >= 0, got {s}")
                    self._generators[i] = seeding.np_random(s)[0]
                    seeds.append(s)
                else:
                    seeds.append(self._draw_game_seed(i))
        self.game_seeds[:] = seeds
        resetting = np.ones(n, dtype=bool)
        streams = np.array([self._chance_stream(s) for s in seeds], dtype=np.uint64)
        obs, mask, _, terms = self._call(np.zeros(n, dtype=np.int64), resetting, streams)
        self._autoreset[:] = terms
        self._ready = True
        return {"observations": obs, "action_mask": mask}, {}

    def step(self, actions):
        """Play ``actions[i]`` in every sub-env i, or start its next game if its last one ended
        on the previous step (its action is then ignored)."""
        if not self._ready:
            raise ConfigError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise IllegalActionError(-1, f"actions must be {self.num_envs} integers (one per sub-env), "
                                         f"got {acts.dtype} array of shape {acts.shape}")
        acts = acts.astype(np.int64, copy=False)
        resetting = self._autoreset
        streams = np.zeros(self.num_envs, dtype=np.uint64)
        for i in np.flatnonzero(resetting):
            seed = self._draw_game_seed(int(i))
            self.game_seeds[i] = seed
            streams[i] = self._chance_stream(seed)
        bad = (acts < 0) | (acts >= self.game.num_actions)
        bad &= ~resetting
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise IllegalActionError(int(acts[i]), f"sub-env {i}: outside the action space "
                                                   f"0..{self.game.num_actions - 1}")
        obs, mask, rewards, terms = self._call(acts, resetting.copy(), streams)
        self._autoreset = terms.copy()
        info: dict[str, Any] = {}
        if terms.any():
            info = {"score": self._final_scores(terms), "_score": terms.copy()}
        return ({"observations": obs, "action_mask": mask}, rewards, terms,
                np.zeros(self.num_envs, dtype=bool), info)

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the state lives in numpy arrays."""

    # ---- helpers ------------------------------------------------------------------------------

    def _draw_game_seed(self, i: int) -> int:
        if self._generators[i] is None:
            self._generators[i] = seeding.np_random(None)[0]
        return int(self._generators[i].integers(0, MAX_GAME_SEED))

    def _call(self, actions: np.ndarray, resetting: np.ndarray, streams: np.ndarray):
        n = self.num_envs
        obs = np.empty((n, self._obs_size), dtype=np.float32)
        mask = np.empty((n, self.game.num_actions), dtype=np.float32)
        rewards = np.zeros(n, dtype=np.float64)
        terms = np.zeros(n, dtype=bool)
        bad = self._run(actions, resetting, streams, obs, mask, rewards, terms)
        if bad >= 0:
            action = int(actions[bad])
            reason, description = self._why_illegal(bad, action)
            raise IllegalActionError(action, f"sub-env {bad}: {reason}", description)
        return obs, mask, rewards, terms

    # ---- what each game supplies --------------------------------------------------------------

    def _chance_stream(self, game_seed: int) -> np.uint64:
        """The first word of the chance stream of game ``game_seed`` (as the game's new_game)."""
        raise NotImplementedError

    def _run(self, actions, resetting, streams, obs, mask, rewards, terms) -> int:
        """One compiled call over all sub-envs: check every action of a sub-env not resetting
        (return the first illegal one's index and change nothing), then start the resetting
        games from ``streams`` and apply the others' actions, writing observations, masks,
        rewards and terminations. Returns -1 when every action was legal."""
        raise NotImplementedError

    def _why_illegal(self, i: int, action: int) -> tuple[str, str | None]:
        """(reason, action description) of sub-env ``i``'s illegal ``action``."""
        raise NotImplementedError

    def _final_scores(self, ended: np.ndarray) -> np.ndarray:
        """Total score of every sub-env (float64[N]); read where ``ended``."""
        raise NotImplementedError



def make_vector_env(vector_class: str, num_envs: int = 1, env_class: str | None = None,
                    action_space: str = "plain", max_candidates: int | None = None,
                    **options: Any) -> VectorEnv:
    """``gymnasium.make_vec(id, num_envs, vectorization_mode="vector_entry_point")``: the game's batched
    vector env ``vector_class`` ("module:Class") with ``options``. With ``action_space="candidates"``
    a ``SyncVectorEnv`` of N candidate envs (``env_class``, the single env of the same id, which the
    registration passes along), with next-step autoreset and the batched envs' seeds (sub-env i plays
    game ``s + i`` after ``reset(seed=s)``): each decision's candidates are one compiled call per
    sub-env, so there is no batched kernel to gain from."""
    if action_space == "candidates":
        if env_class is None:
            raise ConfigError("action_space='candidates' needs the single env's class (env_class)")
        build = partial(make_env, env_class=env_class, action_space="candidates",
                        max_candidates=max_candidates, **options)
        return SyncVectorEnv([build] * num_envs, autoreset_mode=AutoresetMode.NEXT_STEP)
    if action_space != "plain":
        raise ConfigError(f"action_space must be 'plain' or 'candidates', got {action_space!r}")
    if max_candidates is not None:
        raise ConfigError("max_candidates needs action_space='candidates'")
    module_name, class_name = vector_class.split(":")
    return getattr(importlib.import_module(module_name), class_name)(num_envs=num_envs, **options)
