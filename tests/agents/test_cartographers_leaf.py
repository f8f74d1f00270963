"""The fitted season-end value of a Cartographers map (agents/cartographers_leaf.py): its features
against the plain-Python reference scorer, the fit, the shipped model file and its errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.base import make_agent
from agents.cartographers_leaf import (
    MODEL_PATH,
    N_CARDS,
    N_FEATURES,
    fit_leaf_model,
    leaf_features,
    leaf_value,
    load_leaf_model,
)
from envs.cartographers import reference as R
from envs.cartographers.kernels import M_SEASON
from envs.core.errors import ConfigError
from envs.core.registry import make_game


@pytest.fixture(scope="module")
def game():
    return make_game("cartographers")


def _season_starts(game, seed: int):
    """Copies of a greedy solo game's state at the start of seasons 1, 2 and 3."""
    state = game.new_game(seed)
    greedy = make_agent("greedy", game)
    rng = np.random.default_rng(seed)
    found = []
    while not game.is_over(state):
        season = int(state.arrays()[6][M_SEASON])
        game.step(state, greedy.act(state, game.legal_mask(state), rng))
        if not game.is_over(state) and int(state.arrays()[6][M_SEASON]) != season:
            found.append(state.copy())
    return found


def test_features_match_the_reference_scorer(game):
    starts = [s for seed in range(6) for s in _season_starts(game, seed)]
    assert len(starts) == 18
    out = np.empty(N_FEATURES)
    for state in starts:
        st = state.arrays()
        m = leaf_features(st, game.tb, 0, out)
        assert m == int(st[6][M_SEASON]) - 1
        grid = R.as_rows(st[0][0].reshape(11, 11))
        ruins = R.as_rows(game.tb[0].reshape(11, 11))
        expected = np.zeros(N_FEATURES)
        for s in range(m + 1, 4):
            for slot in (1, 2):
                card = int(st[5][game.tb[3][s, slot]])
                expected[(s - m - 1) * N_CARDS + card] += R.score_card(card, grid, ruins)
        left = 3 - m
        expected[3 * N_CARDS:] = [int(st[1][0]) * left, R.monster_penalty(grid) * left,
                                  int((st[0][0] == 0).sum()), 1.0]
        assert np.array_equal(out, expected)


def test_no_features_before_the_first_season_end_or_after_the_game(game):
    out = np.full(N_FEATURES, 7.0)
    state = game.new_game(0)
    assert leaf_features(state.arrays(), game.tb, 0, out) == -1 and np.all(out == 7.0)
    assert leaf_value(state.arrays(), game.tb, 0, np.ones((3, N_FEATURES)), out) == 0.0


def test_the_fit_predicts_held_out_games_better_than_a_constant():
    model = fit_leaf_model(range(300_000, 300_400), check=range(301_000, 301_200))
    coef = np.array(model["coef"])
    assert coef.shape == (3, N_FEATURES) and np.all(np.isfinite(coef))
    assert all(r2 > 0.1 for r2 in model["check_r2"]), model["check_r2"]
    # later season ends leave less to chance: the fit explains more
    assert model["check_r2"][2] > model["check_r2"][0]


def test_the_shipped_model_loads_and_records_its_fit():
    coef = load_leaf_model()
    assert coef.shape == (3, N_FEATURES)
    saved = json.loads(MODEL_PATH.read_text())
    assert saved["seeds"] == [100_000, 119_999] and len(saved["check_r2"]) == 3
    assert min(saved["check_r2"]) > 0.25


def test_a_missing_or_malformed_model_names_the_problem(tmp_path):
    with pytest.raises(ConfigError, match="cannot read it"):
        load_leaf_model(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"coef": [[1.0, 2.0]]}))
    with pytest.raises(ConfigError, match=f"expected 3 x {N_FEATURES}"):
        load_leaf_model(bad)
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="cannot read it"):
        load_leaf_model(bad)
