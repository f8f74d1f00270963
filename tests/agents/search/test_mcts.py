"""MCTS on the toy hidden-draw game: legality, strength, budgets, max-n and option errors."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.random import RandomAgent
from agents.search.mcts import MCTSAgent
from envs.core.errors import ConfigError
from tests.agents.toy_game import BLIND, GAMBLE, TAKE, ToyGame, play_game


@pytest.mark.parametrize("players", [1, 2, 3])
@pytest.mark.parametrize("options", [{}, {"widening": "off"}, {"max_depth": 1}, {"determinize_every": 4},
                                     {"rollout": "greedy"}, {"paired": True}])
def test_plays_full_games_with_legal_actions(players, options):
    game = ToyGame(players=players)
    agents = [MCTSAgent(game, simulations=40, **options) for _ in range(players)]
    state = play_game(game, agents, seed=3)
    assert game.is_over(state)


def test_beats_random_on_paired_seats():
    game = ToyGame(players=2)
    diffs = []
    for seed in range(12):
        mcts, rand = MCTSAgent(game, simulations=100), RandomAgent(game)
        first = play_game(game, [mcts, rand], seed)
        second = play_game(game, [rand, mcts], seed)
        diffs.append(int(first.scores[0] - first.scores[1] + second.scores[1] - second.scores[0]))
    assert np.mean(diffs) > 4.0, diffs


def test_prefers_the_clearly_better_action():
    """Face-up 6 with a deck of known low cards: taking the 6 beats a blind draw or a gamble."""
    game = ToyGame(players=1, turns=1)
    state = game.new_game(0)
    state.up = 6
    state.deck[state.pos:] = 1
    agent = MCTSAgent(game, simulations=200)
    assert agent.act(state, game.legal_mask(state), np.random.default_rng(0)) == TAKE


def test_gamble_value_is_learned_from_determinized_futures():
    """Face-up 1, hidden cards all even: gambling (7 points) is best, and the agent finds it."""
    game = ToyGame(players=1, turns=1)
    state = game.new_game(0)
    state.up = 1
    state.deck[state.pos:] = 2
    agent = MCTSAgent(game, simulations=200)
    choice = agent.act(state, game.legal_mask(state), np.random.default_rng(0))
    assert choice == GAMBLE
    assert agent.last_stats["visits"][GAMBLE] > agent.last_stats["visits"].get(BLIND, 0)


def test_max_n_each_seat_maximises_its_own_return():
    """Seat 1 to move on the last turn, face-up 6 and a deck of 1s: it takes the 6 for itself."""
    game = ToyGame(players=2, turns=2)
    state = game.new_game(0)
    game.step(state, TAKE)
    state.up = 6
    state.deck[state.pos:] = 1
    agent = MCTSAgent(game, simulations=100)
    assert game.current_player(state) == 1
    assert agent.act(state, game.legal_mask(state), np.random.default_rng(1)) == TAKE


def test_simulation_budget_and_stats():
    game = ToyGame(players=2)
    state = game.new_game(5)
    agent = MCTSAgent(game, simulations=123)
    agent.act(state, game.legal_mask(state), np.random.default_rng(0))
    stats = agent.last_stats
    assert stats["simulations"] == 123
    assert sum(stats["visits"].values()) == 123
    assert stats["sims_per_s"] > 0 and agent.total_simulations == 123


def test_time_budget_stops_in_time():
    game = ToyGame(players=2)
    state = game.new_game(5)
    agent = make_agent("mcts:simulations=none,time_limit=0.05", game)
    assert agent.simulations is None
    agent.act(state, game.legal_mask(state), np.random.default_rng(0))
    assert 0.04 <= agent.last_stats["seconds"] < 0.5
    assert agent.last_stats["simulations"] > 10


def test_progressive_widening_limits_root_children():
    game = ToyGame(players=1)
    state = game.new_game(2)
    state.up = 1  # all four actions legal after the first turn
    game.step(state, BLIND)
    agent = MCTSAgent(game, simulations=4, widening="1/0.5")
    agent.act(state, game.legal_mask(state), np.random.default_rng(0))
    assert agent.last_stats["children"] <= 3  # ceil(1 * 4 ** 0.5) + the first
    classic = MCTSAgent(game, simulations=4, widening="off")
    classic.act(state, game.legal_mask(state), np.random.default_rng(0))
    assert classic.last_stats["children"] == int(game.legal_mask(state).sum())


def test_same_rng_same_decision():
    game = ToyGame(players=2)
    state = game.new_game(9)
    runs = []
    for _ in range(2):
        agent = MCTSAgent(game, simulations=60)
        runs.append((agent.act(state, game.legal_mask(state), np.random.default_rng(4)),
                     agent.last_stats["visits"]))
    assert runs[0] == runs[1]


@pytest.mark.parametrize("spec, fragment", [
    ("mcts:simulations=0", "simulations"),
    ("mcts:simulations=abc", "simulations"),
    ("mcts:simulations=none", "give simulations or time_limit"),
    ("mcts:time_limit=-1", "time_limit"),
    ("mcts:rollout=smart", "rollout"),
    ("mcts:prior=oracle", "prior"),
    ("mcts:widening=x/y", "widening"),
    ("mcts:widening=2/3", "widening"),
    ("mcts:c=-1", "c (exploration"),
    ("mcts:max_depth=0", "max_depth"),
    ("mcts:determinize_every=0", "determinize_every"),
    ("mcts:paired=true,determinize_every=2", "paired"),
    ("mcts:paired=yes", "paired"),
    ("mcts:simulatons=10", "simulatons; known: simulations, time_limit"),
])
def test_bad_options_give_clear_errors(spec, fragment):
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(")):
        make_agent(spec, ToyGame())


def test_greedy_prior_needs_a_greedy_agent():
    with pytest.raises(ConfigError, match="no greedy agent for game 'toy'"):
        MCTSAgent(ToyGame(), prior="greedy")


def test_paired_visits_share_futures():
    """With paired futures the k-th visit of each root child uses the k-th determinization."""
    game = ToyGame(players=1, turns=2)
    state = game.new_game(4)
    seen = []
    real = game.determinize

    def spy(st, rng):
        out = real(st, rng)
        seen.append(tuple(out.deck.tolist()))
        return out

    game.determinize = spy
    agent = MCTSAgent(game, simulations=9, widening="off", paired=True)
    agent.act(state, game.legal_mask(state), np.random.default_rng(0))
    children = agent.last_stats["children"]
    assert children == 3 and len(seen) == 9
    assert len(set(seen[:children])) == 1  # the first visit of every child: the same future
