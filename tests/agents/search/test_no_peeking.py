"""Agents never read the real hidden future: decisions are identical on two states that differ
only in the hidden deck order, and the harness does catch an agent that peeks."""

from __future__ import annotations

import numpy as np
import pytest

from agents.search.mcts import MCTSAgent
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


# ---- Cartographers ------------------------------------------------------------------------------

CARTO_AGENTS = ["mcts:simulations=24", "mcts:simulations=4,prior=greedy,rollout=greedy,paired=true", "greedy",
                "mcts:simulations=300,engine=compiled", "mcts:engine=compiled,rollout=greedy,simulations=24",
                "mcts:engine=compiled,rollout=greedy,simulations=40,halving=true",
                "mcts:engine=compiled,rollout=greedy,simulations=24,greedy=progress",
                "mcts:engine=compiled,rollout=greedy,simulations=16,halving=true,horizon=1"]


def _carto_twins(seed: int):
    from envs.cartographers.kernels import M_LEN, M_POS
    from envs.core.registry import make_game

    game = make_game("cartographers")
    state = game.new_game(seed)
    for _ in range(3):
        game.step(state, int(np.flatnonzero(game.legal_mask(state))[0]))
    first, second = twin_states(game, state, np.random.default_rng(seed + 100))
    pos, length = int(first.meta[M_POS]), int(first.meta[M_LEN])
    assert not np.array_equal(first.deck[pos:length], second.deck[pos:length])
    assert np.array_equal(first.grid, second.grid) and first.current_card == second.current_card
    return game, first, second


@pytest.mark.parametrize("spec", CARTO_AGENTS)
def test_cartographers_agents_do_not_read_the_hidden_future(spec):
    from agents.base import make_agent

    for seed in range(2):
        game, first, second = _carto_twins(seed)
        a, b = decisions_on_twins(game, lambda game=game: make_agent(spec, game), first, second, seed)
        assert a == b


def test_the_harness_catches_a_peeking_cartographers_agent():
    from envs.cartographers.game import CartographersGame

    class Peeking(CartographersGame):
        def determinize(self, state, rng):
            return state.copy()

    cheat_game = Peeking()
    differing = 0
    for seed in range(3):
        game, first, second = _carto_twins(seed)
        a, b = decisions_on_twins(game, lambda: MCTSAgent(cheat_game, simulations=24), first, second, seed)
        differing += a != b
    assert differing >= 2


# ---- network-guided PUCT (mcts:value=ppo:...) ----------------------------------------------------


def _assert_puct_is_blind(tmp_path, options: str) -> None:
    """The PUCT search with ``options`` decides the same on twins differing only in the hidden deck."""
    from agents.base import make_agent
    from tests.agents.search.test_puct import tiny_policy

    path = tiny_policy(tmp_path / "policy.pt", "cartographers")
    spec = f"mcts:value=ppo:{path},simulations=16,{options}"
    for seed in range(2):
        game, first, second = _carto_twins(seed)
        a, b = decisions_on_twins(game, lambda game=game: make_agent(spec, game), first, second, seed)
        assert a == b


@pytest.mark.parametrize("weight", [1, 0.5])
def test_puct_search_does_not_read_the_hidden_future(tmp_path, weight):
    _assert_puct_is_blind(tmp_path, f"value_weight={weight}")


def test_batched_puct_search_does_not_read_the_hidden_future(tmp_path):
    _assert_puct_is_blind(tmp_path, "value_weight=0.5,batch=4")


def test_the_harness_catches_a_peeking_puct_search(tmp_path):
    from envs.cartographers.game import CartographersGame
    from tests.agents.search.test_puct import tiny_policy

    class Peeking(CartographersGame):
        def determinize(self, state, rng):
            return state.copy()

    path = tiny_policy(tmp_path / "policy.pt", "cartographers")
    cheat_game = Peeking()
    differing = 0
    for seed in range(3):
        game, first, second = _carto_twins(seed)
        a, b = decisions_on_twins(game, lambda: MCTSAgent(cheat_game, simulations=16, value=f"ppo:{path}",
                                                          value_weight=0.5), first, second, seed)
        differing += a != b
    assert differing >= 2


# ---- Dorfromantik ---------------------------------------------------------------------------------

DORF_AGENTS = ["mcts:engine=compiled,rollout=greedy,simulations=24,widening=1/0.5",
               "mcts:engine=compiled,rollout=random,simulations=40,widening=off"]


def _dorf_twins(seed: int):
    from agents.base import make_agent
    from envs.core.registry import make_game
    from envs.dorfromantik import kernels as K

    game = make_game("dorfromantik")
    state = game.new_game(seed)
    greedy = make_agent("greedy", game)
    rng = np.random.default_rng(seed)
    while int(state.meta[K.M_PLACED]) < 12:
        game.step(state, greedy.act(state, game.legal_mask(state), rng))
    first, second = twin_states(game, state, np.random.default_rng(seed + 100))
    pos = int(first.meta[K.M_LAND_POS])
    assert not np.array_equal(first.deck[pos:K.NUM_LAND], second.deck[pos:K.NUM_LAND])
    assert np.array_equal(first.cells, second.cells) and np.array_equal(first.meta, second.meta)
    return game, first, second


@pytest.mark.parametrize("spec", DORF_AGENTS)
def test_dorfromantik_search_does_not_read_the_hidden_future(spec):
    from agents.base import make_agent

    for seed in range(2):
        game, first, second = _dorf_twins(seed)
        a, b = decisions_on_twins(game, lambda game=game: make_agent(spec, game), first, second, seed)
        assert a == b


def test_the_harness_catches_a_peeking_dorfromantik_search():
    from agents.base import make_agent
    from agents.search.placement import TurnSearch

    class Peeking(TurnSearch):
        """Plays each candidate on the real future (the state's own deck order)."""

        def _play(self, state, pair, seed):
            from envs.dorfromantik.kernels import GRID_RADIUS, GRID_SIDE

            real = state.copy()
            cell = int(pair[0])
            q, r = cell % GRID_SIDE - GRID_RADIUS, cell // GRID_SIDE - GRID_RADIUS
            self.game.place_at(real, q, r, int(pair[1]))
            return float(self.game.rollout_returns(real, seed, "greedy")[0])

    def make(game):
        agent = make_agent(DORF_AGENTS[0], game)
        agent._turn_search = Peeking(agent)
        return agent

    differing = 0
    for seed in range(3):
        game, first, second = _dorf_twins(seed)
        a, b = decisions_on_twins(game, lambda game=game: make(game), first, second, seed)
        differing += a != b
    assert differing >= 2


def _dorf_endgame_twins(seed: int, stack_left: int):
    """Twins at the placement where ``stack_left`` landscape tiles remain, the hidden
    landscape and task orders differing."""
    from agents.base import make_agent
    from envs.core.registry import make_game
    from envs.dorfromantik import kernels as K

    game = make_game("dorfromantik")
    state = game.new_game(seed)
    greedy = make_agent("greedy", game)
    rng = np.random.default_rng(seed)
    while K.NUM_LAND - int(state.meta[K.M_LAND_POS]) > stack_left:
        game.step(state, greedy.act(state, game.legal_mask(state), rng))
    first, second = twin_states(game, state, np.random.default_rng(seed + 100))
    assert not np.array_equal(first.deck, second.deck)
    assert np.array_equal(first.cells, second.cells) and np.array_equal(first.meta, second.meta)
    return game, first, second


@pytest.mark.parametrize(("exact", "stack_left"), [(1, 0), (2, 1)])
def test_dorfromantik_exact_endgame_does_not_read_the_hidden_future(exact, stack_left):
    from agents.base import make_agent

    solved = 0
    for seed in range(3):
        game, first, second = _dorf_endgame_twins(seed, stack_left)
        spec = f"{DORF_AGENTS[0]},exact_tiles={exact}"
        a, b = decisions_on_twins(game, lambda game=game, spec=spec: make_agent(spec, game), first, second,
                                  seed)
        assert a == b
        solved += bool(a[1].get("exact"))  # else the future was too large and the sampled search chose
    assert solved >= 2
