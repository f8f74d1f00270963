"""Agents by spec and a paired comparison: the learned Cartographers model against greedy.

    python examples/agents_api.py [--games N]
"""

from __future__ import annotations

import argparse

import numpy as np

from agents.base import make_agent
from envs.core.registry import make_game


def play(game, spec: str, seed: int) -> int:
    """One solo game of ``spec`` on ``seed``: its evaluation points."""
    agent = make_agent(spec, game)
    state, rng = game.new_game(seed), np.random.default_rng(seed)
    while not game.is_over(state):
        state_mask = game.legal_mask(state)
        game.step(state, agent.act(state, state_mask, rng))
    return game.evaluation(state)


def main(games: int) -> None:
    game = make_game("cartographers")
    specs = ["greedy:preset=progress", "learned:models/cartographers_solo"]
    points = np.array([[play(game, spec, seed) for seed in range(games)] for spec in specs])
    diff = points[1] - points[0]  # the same seeds: differences are paired
    half = 1.96 * diff.std(ddof=1) / np.sqrt(games) if games > 1 else float("nan")
    print(f"greedy {points[0].mean():+.1f}, learned {points[1].mean():+.1f} evaluation points; "
          f"learned - greedy {diff.mean():+.2f} +- {half:.2f} over {games} seeds")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    main(parser.parse_args().games)
