"""A PettingZoo AEC loop: three seats of Cartographers, each playing random legal moves.

    python examples/pettingzoo_loop.py [--seed S]
"""

from __future__ import annotations

import argparse

import numpy as np

from envs.cartographers.pettingzoo import env as cartographers_env


def main(seed: int) -> None:
    env = cartographers_env(players=3)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = {agent: 0.0 for agent in env.possible_agents}
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        if termination or truncation:
            action = None  # a finished agent steps with None, as PettingZoo asks
        else:
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        env.step(action)
    print({agent: round(total) for agent, total in totals.items()})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    main(parser.parse_args().seed)
