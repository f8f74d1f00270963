"""The uniform random agent."""

from __future__ import annotations

import numpy as np

from envs.core.game import Game, State


class RandomAgent:
    """Picks uniformly among the legal actions."""

    name = "random"

    def __init__(self, game: Game):
        self.game = game

    def act(self, state: State, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(legal_mask)
        if legal.size == 0:
            raise RuntimeError("no legal action: the game should be over")
        return int(legal[rng.integers(legal.size)])
