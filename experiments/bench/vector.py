"""``meeplelab bench vector``: raw throughput of the batched vector envs against a loop over N
single envs.

Both sides take random legal actions chosen in numpy from the batch's ``action_mask`` (the same
function, one call per batch step) and count sub-env steps, autoresets included, per CPU second
of this single-threaded process (``time.process_time``: one core, whatever else the machine
runs; ``compare`` counts wall seconds). The loop is gymnasium's ``SyncVectorEnv`` over the single
env (next-step autoreset), which is what RLlib's env runners do without
``gym_env_vectorize_mode="vector_entry_point"``. One warm-up batch step (numba compile or cache
load) is not timed. The goal is >= 20,000 random steps/s on one core for every game.
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np

from envs.cartographers import vector_env as cartographers_vector
from envs.cartographers.env import CartographersEnv
from envs.cascadia import vector_env as cascadia_vector
from envs.cascadia.env import CascadiaEnv
from envs.core.errors import ConfigError
from envs.dorfromantik import vector_env as dorfromantik_vector
from envs.dorfromantik.env import DorfromantikEnv

VECTOR_GAMES = ("cartographers", "cascadia", "dorfromantik")


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly chosen legal action per row of ``mask`` (N x num_actions); 0 for a row with
    none (a finished game, whose action the next step ignores)."""
    n, num_actions = mask.shape
    flat = np.flatnonzero(mask > 0)  # a bool pass first: several times faster than nonzero on floats
    rows = flat // num_actions
    counts = np.bincount(rows, minlength=n)
    starts = np.cumsum(counts) - counts
    pick = starts + (rng.random(n) * counts).astype(np.int64)
    actions = np.zeros(n, dtype=np.int64)
    has = counts > 0
    actions[has] = flat[pick[has]] - rows[pick[has]] * num_actions
    return actions


def make_batched_env(game: str, num_envs: int, **options: Any) -> gym.vector.VectorEnv:
    """The natively batched vector env of ``game`` (solo unless ``options`` say otherwise)."""
    makers = {"cartographers": cartographers_vector.make_vector_env,
              "cascadia": cascadia_vector.make_vector_env,
              "dorfromantik": dorfromantik_vector.make_vector_env}
    if game not in makers:
        raise ConfigError(f"no vector env for {game!r}; known: {', '.join(VECTOR_GAMES)}")
    return makers[game]({"num_envs": num_envs, **options})


def make_looped_env(game: str, num_envs: int, **options: Any) -> gym.vector.VectorEnv:
    """gymnasium's SyncVectorEnv over ``num_envs`` single envs of ``game``."""
    envs = {"cartographers": CartographersEnv, "cascadia": CascadiaEnv, "dorfromantik": DorfromantikEnv}
    if game not in envs:
        raise ConfigError(f"no vector env for {game!r}; known: {', '.join(VECTOR_GAMES)}")
    env_class = envs[game]
    return gym.vector.SyncVectorEnv([lambda: env_class(**options) for _ in range(num_envs)],
                                    autoreset_mode=gym.vector.AutoresetMode.NEXT_STEP)


def steps_per_s(env: gym.vector.VectorEnv, seconds: float, seed: int = 0, clock=time.perf_counter) -> float:
    """Sub-env steps per second of ``clock`` (wall by default) of ``env`` under random legal
    actions for about ``seconds``."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    obs, *_ = env.step(random_legal_actions(obs["action_mask"], rng))  # warm-up, not timed
    steps = 0
    start = clock()
    while True:
        obs, *_ = env.step(random_legal_actions(obs["action_mask"], rng))
        steps += env.num_envs
        elapsed = clock() - start
        if elapsed >= seconds:
            return steps / elapsed


def _measure(make, game: str, num_envs: int, seconds: float, options: dict[str, Any],
             clock=time.perf_counter) -> float:
    env = make(game, num_envs, **options)
    try:
        return steps_per_s(env, seconds, clock=clock)
    finally:
        env.close()


def vector_env_steps_per_s(game: str, num_envs: int = 64, seconds: float = 10.0, clock=time.perf_counter,
                           **options: Any) -> float:
    """Sub-env steps/s of ``game``'s batched vector env with ``num_envs`` games (``options``: env
    options such as ``players`` and ``opponent`` for Cascadia; solo by default)."""
    return _measure(make_batched_env, game, num_envs, seconds, options, clock)


def looped_env_steps_per_s(game: str, num_envs: int = 64, seconds: float = 10.0, clock=time.perf_counter,
                           **options: Any) -> float:
    """Sub-env steps/s of a SyncVectorEnv loop over ``num_envs`` single envs of ``game``."""
    return _measure(make_looped_env, game, num_envs, seconds, options, clock)


#: the settings ``compare`` measures: name -> (game, env options)
SETTINGS = {"cartographers": ("cartographers", {}), "cascadia": ("cascadia", {}),
            "cascadia_4p_greedy": ("cascadia", {"players": 4, "opponent": "greedy"}),
            "dorfromantik": ("dorfromantik", {})}


def compare(settings: tuple[str, ...] = tuple(SETTINGS), num_envs: int = 64, seconds: float = 10.0) -> dict:
    """Per setting: batched and looped steps/s (learner steps) and their ratio."""
    out = {}
    for name in settings:
        game, options = SETTINGS[name]
        batched = vector_env_steps_per_s(game, num_envs, seconds, **options)
        looped = looped_env_steps_per_s(game, num_envs, seconds, **options)
        out[name] = {"num_envs": num_envs, "vector_env_steps_per_s": round(batched),
                     "looped_env_steps_per_s": round(looped), "ratio": round(batched / looped, 1)}
    return out


def run_bench(quick: bool = False, num_envs: int = 64, seconds: float | None = None) -> dict:
    """Per game (solo): random-action steps/s of its vector env (about ``seconds`` CPU seconds, 5 or
    1 when ``quick``) and of the single-env loop (half that), per CPU second of one core, their
    ratio, and whether the vector env meets the 20,000 steps/s goal."""
    seconds = seconds or (1.0 if quick else 5.0)
    out = {}
    for game in VECTOR_GAMES:
        batched = vector_env_steps_per_s(game, num_envs, seconds, clock=time.process_time)
        looped = looped_env_steps_per_s(game, num_envs, seconds / 2, clock=time.process_time)
        out[game] = {"num_envs": num_envs, "vector_env_steps_per_s": round(batched),
                     "looped_env_steps_per_s": round(looped), "ratio": round(batched / looped, 1),
                     "goal_20000_met": batched >= 20_000}
    return out


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(compare(tuple(sys.argv[1:]) or tuple(SETTINGS)), indent=2))
