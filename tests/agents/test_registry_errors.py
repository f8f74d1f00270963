"""Agents by name: clear errors for unknown names, malformed specs and bad options."""

from __future__ import annotations

import pytest

from agents.base import make_agent
from agents.greedy import make_greedy
from agents.search.mcts import MCTSAgent
from envs.core.errors import ConfigError
from tests.agents.toy_game import ToyGame


@pytest.mark.parametrize("spec, fragment", [
    ("alphazero", "unknown agent 'alphazero'; known agents: flat, greedy, learned, mcts, placement, ppo, "
                  "puct, random, root, turn, uct"),
    ("", "empty agent name"),
    ("mcts:simulations", "is not of the form key=value"),
    ("random:depth=3", "unknown option.s. depth; known: none"),
])
def test_bad_specs(spec, fragment):
    with pytest.raises(ConfigError, match=fragment):
        make_agent(spec, ToyGame())


def test_greedy_for_a_game_without_one():
    with pytest.raises(ConfigError, match="no greedy agent for game 'toy'"):
        make_agent("greedy", ToyGame())
    with pytest.raises(ConfigError, match="no greedy agent"):
        make_greedy(ToyGame())


def test_spec_and_dict_build_the_same_mcts():
    game = ToyGame()
    a = make_agent("mcts:simulations=50,c=1.2,widening=3/0.4,rollout=greedy", game)
    b = make_agent({"name": "mcts", "simulations": 50, "c": 1.2, "widening": "3/0.4", "rollout": "greedy"},
                   game)
    for agent in (a, b):
        assert isinstance(agent, MCTSAgent)
        assert (agent.simulations, agent.c, agent.widening, agent.rollout) == (50, 1.2, (3.0, 0.4), "greedy")
