"""Every agent plays full games of every landed game with legal actions only."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from envs.core.errors import ConfigError
from envs.core.registry import make_game

GAMES = ["cartographers", "cascadia", "dorfromantik"]
AGENTS = ["random", "greedy", "mcts:simulations=4", "mcts:simulations=3,widening=off,max_depth=2",
          "mcts:simulations=16,engine=compiled"]
#: the compiled searches differ per game (Cascadia's searches whole turns with greedy playouts)
COMPILED_SPEC = {"cascadia": "mcts:simulations=4,engine=compiled,rollout=greedy"}


def _game_or_skip(name: str):
    try:
        return make_game(name)
    except ConfigError as exc:
        pytest.skip(f"{name} has not landed: {exc}")


def _agent_or_skip(spec: str, game):
    try:
        return make_agent(spec, game)
    except ConfigError as exc:
        if "no greedy agent" in str(exc) or "no compiled search" in str(exc):
            pytest.skip(str(exc))
        raise


def play_full_game(game, agent, seed: int) -> int:
    """Play one game; every action is checked against the legal mask. Returns the decision count."""
    state = game.new_game(seed)
    rng = np.random.default_rng(seed)
    decisions = 0
    while not game.is_over(state):
        mask = game.legal_mask(state)
        action = agent.act(state.copy(), mask.copy(), rng)
        assert mask[action], f"{agent.name} chose illegal action {action}: {game.describe_action(action)}"
        game.step(state, action)
        decisions += 1
        assert decisions < 10_000
    return decisions


@pytest.mark.parametrize("spec", AGENTS)
@pytest.mark.parametrize("game_name", GAMES)
def test_full_game_with_legal_actions(game_name, spec):
    game = _game_or_skip(game_name)
    if "engine=compiled" in spec:
        spec = COMPILED_SPEC.get(game_name, spec)
    agent = _agent_or_skip(spec, game)
    assert play_full_game(game, agent, seed=11) > 0


@pytest.mark.slow
@pytest.mark.parametrize("game_name", GAMES)
def test_mcts_greedy_prior_and_rollouts_play_legal_games(game_name):
    game = _game_or_skip(game_name)
    try:
        agent = make_agent("mcts:simulations=3,prior=greedy,rollout=greedy", game)
    except ConfigError as exc:
        pytest.skip(str(exc))
    assert play_full_game(game, agent, seed=5) > 0


def test_cartographers_multiplayer_agents_are_legal():
    game = make_game("cartographers", players=3)
    agents = [make_agent(s, game) for s in ("greedy", "mcts:simulations=3", "random")]
    state = game.new_game(4)
    rng = np.random.default_rng(0)
    while not game.is_over(state):
        mask = game.legal_mask(state)
        action = agents[game.current_player(state)].act(state.copy(), mask.copy(), rng)
        assert mask[action]
        game.step(state, action)
    assert len(game.scores(state)) == 3
