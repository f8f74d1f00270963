"""The compiled Cartographers root search: its determinization keeps what the player knows and
ignores the real order; budgets, statistics and determinism."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.search import cartographers_root as M
from envs.cartographers import kernels as K
from envs.core.errors import ConfigError
from envs.core.registry import make_game


@pytest.fixture(scope="module")
def game():
    return make_game("cartographers")


def test_determinization_keeps_public_information_and_ignores_the_real_order(game):
    state = game.new_game(3)
    for _ in range(4):
        game.step(state, int(np.flatnonzero(game.legal_mask(state))[0]))
    twin = game.determinize(state, np.random.default_rng(0))
    out_a, out_b = M.new_scratch(state), M.new_scratch(state)
    M.determinize_into(state.arrays(), out_a, np.array([5], np.uint64))
    M.determinize_into(twin.arrays(), out_b, np.array([5], np.uint64))
    for x, y in zip(out_a, out_b, strict=True):
        assert np.array_equal(x, y)
    pos, length = int(state.meta[K.M_POS]), int(state.meta[K.M_LEN])
    assert np.array_equal(out_a[3][:pos], state.deck[:pos])
    explore = sorted(int(c) for c in state.deck[pos:length] if c < 13)
    assert sorted(int(c) for c in out_a[3][pos:length] if c < 13) == explore
    assert np.array_equal(out_a[0], state.grid) and np.array_equal(out_a[5], state.edicts)


def test_compiled_search_budget_stats_and_determinism(game):
    state = game.new_game(2)
    runs = []
    for _ in range(2):
        agent = make_agent("mcts:simulations=500,engine=compiled", game)
        action = agent.act(state, game.legal_mask(state), np.random.default_rng(3))
        runs.append((action, agent.last_stats["visits"]))
        assert agent.last_stats["simulations"] == 500 and sum(agent.last_stats["visits"].values()) == 500
        assert game.legal_mask(state)[action]
    assert runs[0] == runs[1]


def test_compiled_search_rejects_what_it_does_not_do(game):
    with pytest.raises(ConfigError, match="engine=compiled"):
        make_agent("mcts:engine=compiled,paired=true", game)
    with pytest.raises(ConfigError, match="engine must be"):
        make_agent("mcts:engine=gpu", game)
    with pytest.raises(ConfigError, match="no compiled search"):
        from tests.agents.toy_game import ToyGame

        make_agent("mcts:engine=compiled", ToyGame())
