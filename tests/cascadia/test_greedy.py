"""The greedy Cascadia agent: legal, deterministic, far above random, registered."""

from __future__ import annotations

import numpy as np
import pytest

from agents.greedy import make_greedy
from agents.greedy.cascadia import CascadiaGreedyAgent, GreedyAgent
from agents.random import RandomAgent
from envs.cascadia.game import CascadiaGame
from envs.core.errors import ConfigError


def play(game, agent, seed):
    s = game.new_game(seed)
    rng = np.random.default_rng(seed)
    while not game.is_over(s):
        mask = game.legal_mask(s)
        action = agent.act(s, mask, rng)
        assert mask[action]
        game.step(s, action)
    return game.scores(s)


def test_greedy_is_registered_and_validates_options():
    g = CascadiaGame(players=1)
    assert isinstance(make_greedy(g), CascadiaGreedyAgent) and GreedyAgent is CascadiaGreedyAgent
    with pytest.raises(ConfigError, match="unknown greedy option"):
        CascadiaGreedyAgent(g, depth=3)


def test_greedy_beats_random_on_paired_seeds_and_is_deterministic():
    g = CascadiaGame(players=1)
    greedy = CascadiaGreedyAgent(g)
    for seed in (1, 2):
        a = play(g, greedy, seed)[0].total
        assert a == play(g, greedy, seed)[0].total
        assert a >= play(g, RandomAgent(g), seed)[0].total + 30
        assert a >= 75
    assert greedy.fallbacks == 0


def test_greedy_multiplayer_seats_stay_legal():
    g = CascadiaGame(players=2)
    greedy = CascadiaGreedyAgent(g)
    sheets = play(g, greedy, 5)
    assert all(sh.extra["base"] >= 60 for sh in sheets) and greedy.fallbacks == 0


@pytest.mark.slow
def test_greedy_solo_mean_over_30_games():
    g = CascadiaGame(players=1)
    greedy = CascadiaGreedyAgent(g)
    totals = [play(g, greedy, 1000 + seed)[0].total for seed in range(30)]
    assert np.mean(totals) >= 88
