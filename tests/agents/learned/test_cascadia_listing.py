"""The Cascadia candidate listing from shared figures (:func:`agents.learned.cascadia_listing.list_turns`)
against its definition, one greedy plan per weight set and market option
(:func:`agents.learned.cascadia_kernels.list_turns_by_option`): the same rows, values and order, bit for
bit, on greedy and random positions of every table size, with the presets' and random weights."""

from __future__ import annotations

import numpy as np
import pytest

from agents.greedy.cascadia import W_NAMES
from agents.learned.cascadia import _LISTING
from agents.learned.cascadia_kernels import list_turns_by_option
from agents.learned.cascadia_listing import list_turns
from agents.learned.cascadia_playouts import listing_weights
from envs.cascadia import kernels as K
from tests.agents.learned.cascadia_positions import CASES, turn_starts


def _random_sets(rng: np.random.Generator) -> np.ndarray:
    """Two or three random weight vectors (some terms 0, elk weights not multiples of 3)."""
    sets = rng.uniform(0.0, 3.0, size=(int(rng.integers(2, 4)), len(W_NAMES)))
    sets[rng.random(sets.shape) < 0.2] = 0.0
    return sets


def _assert_same(got, want) -> None:
    assert got[0].shape == want[0].shape
    assert np.array_equal(got[0], want[0])
    assert np.array_equal(got[1], want[1])  # bit for bit, not close
    assert np.array_equal(got[2], want[2])


@pytest.mark.parametrize("players,seeds,explore", CASES)
def test_shared_listing_is_the_listing_by_option(players, seeds, explore):
    game, states = turn_starts(players, seeds, explore)
    rng = np.random.default_rng(players)
    nature = 0
    for state in states:
        b = state.board_args()
        nature += int(state.pinfo[state.ctl[K.C_CUR], K.P_NATURE] > 0)
        presets = listing_weights(_LISTING, state.ctl)
        _assert_same(list_turns(b, game.tb, presets), list_turns_by_option(b, game.tb, presets))
        sets = _random_sets(rng)
        _assert_same(list_turns(b, game.tb, sets), list_turns_by_option(b, game.tb, sets))
    assert len(states) >= 40 and nature > 0  # the nature-token options were listed too


def test_a_changed_weight_changes_the_listing():
    """The comparison above can fail: the look-ahead weights reach the values."""
    game, states = turn_starts(4, [5], 0.0)
    state = states[30]
    b = state.board_args()
    sets = listing_weights(_LISTING, state.ctl).copy()
    base = list_turns(b, game.tb, sets)
    sets[:, : 5] += 0.5  # every pattern weight
    assert not np.array_equal(list_turns(b, game.tb, sets)[1], base[1])
