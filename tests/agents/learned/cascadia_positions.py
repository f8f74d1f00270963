"""Turn starts of Cascadia games for the candidate-view tests: greedy (selfplay) decisions, each replaced
by a uniformly random legal action with a given probability."""

from __future__ import annotations

import numpy as np
import pytest

from agents.greedy.cascadia import greedy_on_board, preset_weights
from envs.cascadia import kernels as K
from envs.core.registry import make_game


def turn_starts(players: int, seeds, explore: float):
    """(game, [state copy at every market decision]) of one game per seed."""
    game = make_game("cascadia", players=players)
    weights = preset_weights("selfplay")
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        state = game.new_game(seed)
        while not game.is_over(state):
            if int(state.ctl[K.C_PHASE]) == K.PHASE_MARKET:
                out.append(state.copy())
            if rng.random() < explore:
                action = int(rng.choice(np.flatnonzero(game.legal_mask(state))))
            else:
                action = int(greedy_on_board(state.board_args(), game.tb, weights))
            game.step(state, action)
    return game, out


#: (players, seeds, explore) of the candidate-view equality tests: a fast set, and thousands of positions
CASES = [
    (1, range(2), 0.1), (2, range(2), 0.3), (4, range(1), 0.1),
    pytest.param(1, range(10, 40), 0.2, marks=pytest.mark.slow),
    pytest.param(3, range(10, 20), 0.2, marks=pytest.mark.slow),
    pytest.param(4, range(10, 20), 0.05, marks=pytest.mark.slow),
]
