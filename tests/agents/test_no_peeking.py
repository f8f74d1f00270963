"""Agents never read the real hidden future: decisions are identical on two states that differ
only in the hidden deck order, and the harness does catch an agent that peeks."""

from __future__ import annotations

import numpy as np
import pytest

from agents.mcts import MCTSAgent
from envs.core.game import State
from tests.agents.peeking import decisions_on_twins, twin_states
from tests.agents.toy_game import BLIND, ToyGame


class _PeekingGame(ToyGame):
    """A cheat: its determinize returns the real future (what a peeking planner would see)."""

    def determinize(self, state: State, rng: np.random.Generator) -> State:
        return state.copy()


class _PeekingMCTS(MCTSAgent):
    """A cheat: searches with a game whose determinization is the real state."""

    def __init__(self, game):
        super().__init__(_PeekingGame(players=game.players, turns=game.turns), simulations=80)


def _toy_twins(seed: int):
    game = ToyGame(players=2)
    state = game.new_game(seed)
    game.step(state, BLIND)
    first, second = twin_states(game, state, np.random.default_rng(seed + 100))
    assert not np.array_equal(first.deck, second.deck)
    assert np.array_equal(first.deck[:first.pos], second.deck[:second.pos])
    return game, first, second


@pytest.mark.parametrize("seed", range(5))
def test_mcts_decisions_do_not_depend_on_the_hidden_future(seed):
    game, first, second = _toy_twins(seed)
    a, b = decisions_on_twins(game, lambda: MCTSAgent(game, simulations=80), first, second, seed)
    assert a == b


def test_the_harness_catches_a_peeking_agent():
    differing = 0
    for seed in range(5):
        game, first, second = _toy_twins(seed)
        a, b = decisions_on_twins(game, lambda game=game: _PeekingMCTS(game), first, second, seed)
        differing += a != b
    assert differing >= 3


def test_toy_determinize_does_not_depend_on_the_real_order():
    game, first, second = _toy_twins(0)
    one = game.determinize(first, np.random.default_rng(7))
    two = game.determinize(second, np.random.default_rng(7))
    assert np.array_equal(one.deck, two.deck)
