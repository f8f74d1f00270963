"""The greedy agent: legal choices, completing a task when it can, options, and beating random."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.greedy.dorfromantik import DorfromantikGreedyAgent, GreedyAgent
from envs.core.errors import ConfigError
from envs.core.rng import numpy_generator
from envs.dorfromantik.game import DorfromantikGame
from tests.dorfromantik.helpers import put

E, NE, NW, W, SW, SE = range(6)


@pytest.fixture(scope="module")
def game() -> DorfromantikGame:
    return DorfromantikGame()


def play(game: DorfromantikGame, spec: str, seed: int) -> int:
    agent = make_agent(spec, game)
    state = game.new_game(seed)
    rng = numpy_generator(seed, "seat0")
    while not game.is_over(state):
        mask = game.legal_mask(state)
        action = agent.act(state, mask, rng)
        assert mask[action]
        game.step(state, action)
    return game.breakdown(state)["total"]


def test_registry_and_alias(game):
    assert GreedyAgent is DorfromantikGreedyAgent
    assert isinstance(make_agent("greedy:fail=1.5", game), DorfromantikGreedyAgent)
    with pytest.raises(ConfigError):
        make_agent("greedy:speed=3", game)
    with pytest.raises(ConfigError):
        DorfromantikGreedyAgent(game, points="high")


def test_completes_a_task_when_it_can(game):
    state = game.new_game(1)
    put(game, state, "T03", 0, 0, {NE: "W", SW: "W"}, marker=4)
    put(game, state, "L18", 1, -1, {SW: "W", NW: "M"})
    put(game, state, "L04", 0, -1, {E: "W", SE: "W"})
    game.set_hand(state, "L28")                                  # can make the forest exactly 4
    agent = DorfromantikGreedyAgent(game)
    action = agent.act(state, game.legal_mask(state), np.random.default_rng(0))
    game.step(state, action)
    assert game.tasks(state)[0]["status"] == "completed"


def test_greedy_beats_random_on_the_same_seeds(game):
    seeds = range(6)
    greedy = [play(game, "greedy", s) for s in seeds]
    rand = [play(game, "random", s) for s in seeds]
    diffs = np.array(greedy) - np.array(rand)
    assert diffs.min() > 0 and diffs.mean() > 25


def test_compiled_greedy_rollout(game):
    random_scores = [game.rollout_returns(game.new_game(s), s, "random")[0] for s in range(20)]
    greedy_scores = [game.rollout_returns(game.new_game(s), s, "greedy")[0] for s in range(20)]
    assert np.mean(greedy_scores) > np.mean(random_scores) + 30
    with pytest.raises(ConfigError):
        game.rollout_returns(game.new_game(0), 0, "clever")
