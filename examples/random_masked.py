"""A Gymnasium loop with action masks: random legal moves in solo Cartographers.

    python examples/random_masked.py [--games N]
"""

from __future__ import annotations

import argparse

import gymnasium
import numpy as np

import envs  # noqa: F401  (registers the meeplelab/... environment ids)


def main(games: int) -> None:
    env = gymnasium.make("meeplelab/Cartographers-v0")
    rng = np.random.default_rng(0)
    for seed in range(games):
        obs, info = env.reset(seed=seed)
        done, total, steps = False, 0.0, 0
        while not done:
            legal = np.flatnonzero(obs["action_mask"])  # the mask lists the legal actions
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
            total += reward
            steps += 1
            done = terminated or truncated
        print(f"game {seed}: {steps} moves, score {total:.0f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3)
    main(parser.parse_args().games)
