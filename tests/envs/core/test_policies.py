"""The envs reach agents only through envs.core.policies: what the agents package registers
(on import and through the meeplelab.plugins entry point) is what the envs call."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from envs.core import policies
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from tests.paths import REPO_ROOT


@pytest.mark.parametrize("game_name", ["cartographers", "cascadia", "dorfromantik"])
def test_greedy_rollouts_are_registered_for_every_game(game_name):
    assert policies.rollout_names(game_name) == ["random", "greedy"]
    game = make_game(game_name)
    totals = game.rollout_returns(game.new_game(5), 3, "greedy")
    again = game.rollout_returns(game.new_game(5), 3, "greedy")
    assert np.array_equal(totals, again) and totals.shape == (game.num_players(),)


def test_unknown_rollout_names_the_known_ones():
    game = make_game("dorfromantik")
    with pytest.raises(ConfigError, match="unknown rollout policy 'smart'; known: random, greedy"):
        game.rollout_returns(game.new_game(1), 0, "smart")


def test_a_registered_rollout_is_what_the_game_calls():
    calls = []

    def rollout(game, state, seed):
        calls.append(seed)
        return np.full(game.num_players(), 7.0)

    policies.register_rollout("cascadia", "constant", rollout)
    try:
        game = make_game("cascadia", players=2)
        assert game.rollout_returns(game.new_game(0), 42, "constant").tolist() == [7.0, 7.0]
        assert calls == [42]
    finally:
        policies._rollouts.pop(("cascadia", "constant"))


def test_opponent_specs_are_built_by_the_registered_builder():
    game = make_game("cascadia", players=2)
    agent = policies.build_agent("greedy", game)
    assert callable(agent.act)


def test_envs_alone_find_the_agents_through_the_entry_point():
    """A process that imports only envs still builds an opponent from a spec."""
    code = ("import gymnasium, envs, sys\n"
            "env = gymnasium.make('meeplelab/Cascadia-v0', players=2, opponent='greedy')\n"
            "env.reset(seed=1)\n"
            "print('agents' in sys.modules, type(env.unwrapped._opponents[1]).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "CascadiaGreedyAgent"]
