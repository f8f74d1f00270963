"""Learned candidate models: how fast the candidate view runs.

Per game: steps per CPU second of the Gymnasium env with ``action_space="candidates"`` (a uniformly
random legal row each step; each step lists and describes every candidate of the next decision) beside
the plain env (a uniformly random legal action), and whole games per CPU second played by the linear
model at the greedy preset's weights (``label_games`` with width 0: the learned agent's own loop).

``run_bench(quick) -> dict``; ``python -m experiments.bench.learned [--quick]`` prints JSON.
"""

from __future__ import annotations

import json
import sys
import time

import gymnasium
import numpy as np

import envs  # noqa: F401  (registers the meeplelab/... environment ids)
from agents.learned import game_module
from envs.core.registry import make_game

ENV_IDS = {"cartographers": "meeplelab/Cartographers-v0", "cascadia": "meeplelab/Cascadia-v0",
           "dorfromantik": "meeplelab/Dorfromantik-v0"}


def _steps_per_cpu_second(env_id: str, steps: int, **options) -> float:
    """Random legal steps of one env per CPU second (resets included, the first reset excluded)."""
    env = gymnasium.make(env_id, **options)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    mask_key = "candidate_mask" if options.get("action_space") == "candidates" else "action_mask"
    start = time.process_time()
    for i in range(steps):
        action = int(rng.choice(np.flatnonzero(obs[mask_key])))
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            obs, _ = env.reset(seed=i + 1)
    return steps / max(time.process_time() - start, 1e-9)


def _games_per_cpu_second(game_name: str, games: int) -> float:
    game, module = make_game(game_name), game_module(game_name)
    theta = module.greedy_theta(module.DEFAULT_PRESET)
    module.label_games(game, np.array([0]), theta, 0, 0)  # warm-up: compiles
    start = time.process_time()
    module.label_games(game, np.arange(1, games + 1), theta, 0, 0)
    return games / max(time.process_time() - start, 1e-9)


def run_bench(quick: bool = False) -> dict:
    """Candidate-env and plain-env steps per CPU second, and linear-model games per CPU second."""
    steps, games = (300, 5) if quick else (3000, 40)
    out: dict = {}
    for name, env_id in ENV_IDS.items():
        _steps_per_cpu_second(env_id, 20, action_space="candidates")  # warm-up: compiles
        candidates = _steps_per_cpu_second(env_id, steps, action_space="candidates")
        plain = _steps_per_cpu_second(env_id, steps)
        out[name] = {"candidate_env_steps_per_s_cpu": candidates, "plain_env_steps_per_s_cpu": plain,
                     "candidate_over_plain": candidates / plain,
                     "linear_model_games_per_s_cpu": _games_per_cpu_second(name, games)}
    return out


if __name__ == "__main__":
    print(json.dumps(run_bench(quick="--quick" in sys.argv), indent=2))
