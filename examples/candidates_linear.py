"""Candidate actions: a linear model scores the rows of the candidate observation.

Each row of ``obs["candidates"]`` describes the map after one legal move (the env keeps the best 256
by greedy's value). Row scores are ``features @ theta[season]`` with the committed model's weights:
the learned agent, played through the Gymnasium env; the season is the one-hot at the end of
``obs["context"]``.

    python examples/candidates_linear.py [--seed S]
"""

from __future__ import annotations

import argparse

import gymnasium
import numpy as np

import envs  # noqa: F401  (registers the meeplelab/... environment ids)
from agents.learned.agent import resolve_model_path
from agents.learned.model import load_model


def main(seed: int) -> None:
    theta = load_model(resolve_model_path("models/cartographers_solo"))["theta"]
    env = gymnasium.make("meeplelab/Cartographers-v0", action_space="candidates")
    obs, info = env.reset(seed=seed)
    done, total = False, 0.0
    while not done:
        season = int(np.argmax(obs["context"][3:]))  # context: progress, score, margin, season one-hot
        scores = obs["candidates"].astype(np.float64) @ theta[season]
        scores[obs["candidate_mask"] == 0] = -np.inf  # padding rows
        obs, reward, terminated, truncated, info = env.step(int(np.argmax(scores)))
        total += reward
        done = terminated or truncated
    print(f"seed {seed}: score {total:.0f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    main(parser.parse_args().seed)
