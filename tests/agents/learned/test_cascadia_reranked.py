"""Cascadia learned playouts that value only the listing's best planned turns (the turn search's
``rollout_width``)."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.learned import cascadia as L
from agents.learned import cascadia_kernels as CK
from agents.learned.cascadia_features import turn_features
from agents.learned.cascadia_listing import list_turns
from agents.learned.cascadia_playouts import listing_weights, model_turn, phase_of
from agents.learned.model import load_model
from envs.core.errors import ConfigError
from tests.agents.learned.search_checks import check_rollout_width
from tests.agents.learned.test_cascadia import _turn_starts

SEARCH = ("mcts:engine=compiled,rollout=learned,model=models/cascadia_solo,simulations=16,widening=2/0.5,"
          "halving=true")


def test_a_width_values_only_the_best_planned_turns():
    """Width N: the model's first best (within 1e-6) among the N turns the listing plans best, in
    listing order, recomputed from every turn's features; a width past the turns is the model's own turn."""
    game, states = _turn_starts(1, (0, 1), every=2)
    model = L.LinearPolicy(game, load_model("models/cascadia_solo")["theta"]).compiled()
    checked = 0
    for state in states:
        board = state.board_args()
        turns, planned, _ = list_turns(board, game.tb, listing_weights(model.listing, board.ctl))
        if turns.shape[0] == 0:
            continue
        feats = np.empty((turns.shape[0], CK.NUM_FEATURES), np.float32)
        turn_features(board, turns, game.tb, feats)
        values = feats.astype(np.float64) @ model.theta[phase_of(board.ctl)]
        for width in (1, 4, 16):
            top = np.sort(np.argsort(-planned, kind="stable")[:width])
            best = top[np.flatnonzero(values[top] >= values[top].max() - 1e-6)[0]]
            assert np.array_equal(model_turn(board, game.tb, model.theta, model.listing, width), turns[best])
        assert np.array_equal(model_turn(board, game.tb, model.theta, model.listing, 10_000),
                              model_turn(board, game.tb, model.theta, model.listing))
        checked += 1
    assert checked >= 15


def test_the_turn_search_takes_a_rollout_width():
    """Deterministic and legal, and its playouts are not the whole model's (other playout means)."""
    game, states = _turn_starts(1, (3,), every=7)
    with pytest.raises(ConfigError, match="rollout_width=<N>"):
        make_agent(SEARCH.replace("rollout=learned,model=models/cascadia_solo", "rollout=greedy")
                   + ",rollout_width=8", game)
    check_rollout_width(game, states, SEARCH, 4, seed=2)
