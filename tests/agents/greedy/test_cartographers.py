"""The Cartographers greedy agent: options, ranking, its compiled playout, and its strength."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.greedy import cartographers_clusters as C
from agents.greedy import cartographers_kernels as G
from agents.greedy.cartographers import GreedyAgent, greedy_rollout
from envs.cartographers import kernels as K
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from tests.agents.toy_game import ToyGame


@pytest.fixture(scope="module")
def game():
    return make_game("cartographers")


def _play(game, agent, seed):
    state = game.new_game(seed)
    rng = np.random.default_rng(seed)
    while not game.is_over(state):
        game.step(state, agent.act(state, game.legal_mask(state), rng))
    return game.evaluation(state)


def test_bad_options(game):
    with pytest.raises(ConfigError, match="unknown option"):
        make_agent("greedy:lookahead=2", game)
    with pytest.raises(ConfigError, match="coin must be a number"):
        make_agent("greedy:coin=lots", game)
    with pytest.raises(ConfigError, match="hole_size must be an integer"):
        make_agent("greedy:hole_size=1.5", game)
    with pytest.raises(ConfigError, match="cannot play"):
        GreedyAgent(ToyGame())


def test_options_set_weights(game):
    agent = make_agent("greedy:future=0.25,monster=2", game)
    assert agent.weights[G.W_FUTURE] == 0.25 and agent.weights[G.W_MONSTER] == 2.0
    assert agent.weights[G.W_COIN] == G.DEFAULT_WEIGHTS[G.W_COIN]


def test_candidates_are_exactly_the_legal_actions(game):
    agent = GreedyAgent(game)
    state = game.new_game(3)
    for _ in range(6):
        mask = game.legal_mask(state)
        actions, values = agent.action_values(state)
        assert set(actions.tolist()) == set(np.flatnonzero(mask).tolist())
        ranked = agent.rank_actions(state, mask)
        best = dict(zip(actions.tolist(), values.tolist(), strict=True))
        assert best[int(ranked[0])] == values.max()
        assert all(best[int(a)] >= best[int(b)] for a, b in zip(ranked[:-1], ranked[1:], strict=True))
        game.step(state, int(ranked[0]))


def test_value_matches_the_engine_scoring_of_this_seasons_edicts(game):
    """With every look-ahead weight at zero the value is the current season's edict points."""
    agent = GreedyAgent(game, future=0, coin=0, monster=0, hole=0, ruin=0)
    state = game.new_game(8)
    actions, values = agent.action_values(state)
    letters = game.data.season_edicts[state.season]
    for i in np.random.default_rng(0).choice(actions.size, 20, replace=False):
        fields = game.decode_action(int(actions[i]), state)
        terrain = game.data.card_terrains[state.current_card, fields["terrain_option"]]
        grid = state.grid[0].copy()
        for row, col in fields["cells"]:
            grid[row * 11 + col] = terrain
        expected = sum(K.score_card(int(state.edicts[e]), grid, game.tb.ruins) for e in letters)
        assert values[i] == pytest.approx(expected)


def test_compiled_playout_is_the_greedy_policy_and_legal(game):
    state = game.new_game(2)
    weights = G.DEFAULT_WEIGHTS
    buf = np.empty((4096, 2), np.int32)
    acts = np.empty(G.MAX_CANDIDATES, np.int64)
    vals = np.empty(G.MAX_CANDIDATES, np.float64)
    stepped = state.copy()
    while not game.is_over(stepped):
        game.step(stepped, G.greedy_action(stepped.arrays(), game.tb, weights, buf, acts, vals))
    returns = greedy_rollout(game, state.copy(), seed=0)
    assert returns.tolist() == [float(game.scores(stepped)[0].total)]


def test_greedy_is_far_better_than_random_on_paired_seeds(game):
    greedy, rand = make_agent("greedy", game), make_agent("random", game)
    diffs = [_play(game, greedy, s) - _play(game, rand, s) for s in range(4)]
    assert min(diffs) > 30, diffs


@pytest.mark.slow
def test_greedy_mean_evaluation_is_non_negative(game):
    agent = make_agent("greedy", game)
    evals = [_play(game, agent, s) for s in range(60)]
    assert np.mean(evals) >= 0, np.mean(evals)


@pytest.mark.parametrize("players", [1, 3])
def test_fast_values_equal_the_whole_map_values_bit_for_bit(players):
    """score_candidates values each candidate from the decision's own scores (edicts blind to the
    terrain, monster exposure, small holes only where the shape splits a region); every value must
    equal map_value on the whole drawn map, for both presets and a wider and a narrower hole setting."""
    game = make_game("cartographers", players=players)
    wide = G.PROGRESS_WEIGHTS.copy()
    wide[G.W_HOLE_SIZE] = 5  # the flood path
    single = G.DEFAULT_WEIGHTS.copy()
    single[G.W_HOLE_SIZE] = 1  # only single-cell holes count
    weight_sets = (G.DEFAULT_WEIGHTS, G.PROGRESS_WEIGHTS, wide, single)
    checked = 0
    for seed in range(12 if players == 1 else 4):
        state = game.new_game(seed)
        agent = make_agent("greedy" if seed % 2 else "greedy:preset=progress", game)
        rng = np.random.default_rng(seed)
        while not game.is_over(state):
            checked += _fast_equals_whole_map(game, state, weight_sets)
            game.step(state, agent.act(state, game.legal_mask(state), rng))
    assert checked > 10_000


def _fast_equals_whole_map(game, state, weight_sets) -> int:
    """Assert that every candidate's fast value equals its whole-map value, bit for bit, for each
    weight set; return how many values were compared."""
    buf = np.empty((4096, 2), np.int32)
    full_a, fast_a = np.empty(G.MAX_CANDIDATES, np.int64), np.empty(G.MAX_CANDIDATES, np.int64)
    full_v, fast_v = np.empty(G.MAX_CANDIDATES), np.empty(G.MAX_CANDIDATES)
    checked = 0
    for weights in weight_sets:
        n = G.score_all(state.arrays(), game.tb, weights, buf, full_a, full_v, False)
        assert G.score_all(state.arrays(), game.tb, weights, buf, fast_a, fast_v, True) == n
        assert np.array_equal(full_a[:n], fast_a[:n])
        assert np.array_equal(full_v[:n], fast_v[:n]), game.describe_action(int(full_a[0]))
        checked += n
    return checked


@pytest.mark.parametrize("cards", [(0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15)])
def test_fast_values_equal_the_whole_map_values_for_every_scoring_card(cards):
    """The same bit-for-bit check with the four edicts fixed, so every card's fast path is met
    (the local and line cards are valued from the decision map's figures: cartographers_delta)."""
    game = make_game("cartographers", players=1, cards=list(cards))
    assert sorted(game.new_game(0).arrays()[5]) == sorted(cards)
    assert _fast_equals_whole_map_in_games(game, range(3)) > 5_000


def _fast_equals_whole_map_in_games(game, seeds) -> int:
    """:func:`_fast_equals_whole_map` at every decision of greedy games (default and progress
    presets in turn) on ``seeds``, with both weight sets; returns how many values were compared."""
    checked = 0
    for seed in seeds:
        state = game.new_game(seed)
        agent = make_agent("greedy:preset=progress" if seed % 2 else "greedy", game)
        rng = np.random.default_rng(seed)
        while not game.is_over(state):
            checked += _fast_equals_whole_map(game, state, (G.DEFAULT_WEIGHTS, G.PROGRESS_WEIGHTS))
            game.step(state, agent.act(state, game.legal_mask(state), rng))
    return checked


@pytest.mark.parametrize(("cards", "side", "players"), [((3, 7, 10, 13), "A", 1), ((3, 7, 10, 12), "B", 1),
                                                         ((3, 4, 10, 15), "A", 3)])
def test_cluster_cards_fast_values_equal_the_whole_map_values(cards, side, players):
    """Stoneside Forest, Shoreside Expanse and Greengold Plains valued from the decision map's
    clusters (cartographers_clusters), bit for bit, on both map sides and in a 3-player game,
    with and without their progress terms."""
    game = make_game("cartographers", players=players, side=side, cards=list(cards))
    assert _fast_equals_whole_map_in_games(game, range(100, 104)) > 5_000
    assert C.MAX_MOUNTAINS >= game.tb.mountains.shape[0], "the fast path must cover this map"
