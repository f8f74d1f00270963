"""Cascadia candidate feature rows from shared figures
(:func:`agents.learned.cascadia_features.turn_features`) against their definition, each turn put on the
board and the board measured (:func:`agents.learned.cascadia_kernels.turn_features_by_turn`): the same
float32 rows, bit for bit, for the listed turns and for random turns (any frontier hex, rotation and
token hex), at every table size."""

from __future__ import annotations

import numpy as np
import pytest

from agents.learned import cascadia_kernels as CK
from agents.learned.cascadia import _LISTING
from agents.learned.cascadia_features import turn_features
from agents.learned.cascadia_listing import list_turns
from agents.learned.cascadia_playouts import listing_weights
from envs.cascadia import kernels as K
from tests.agents.learned.cascadia_positions import CASES, turn_starts


def _random_turns(game, state, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` random whole turns: a market option, any frontier hex and rotation, and the token on the
    new hex, on an empty placed hex that takes it, or back to the bag (-1 when the pair has none)."""
    b = state.board_args()
    p = int(state.ctl[K.C_CUR])
    opts = CK.market_options(b)
    front = state.flist[p, : state.pinfo[p, K.P_NFRONT]]
    placed = state.cells[p, : state.pinfo[p, K.P_NCELLS]]
    out = np.empty((n, 3), np.int64)
    for k in range(n):
        a, i, j = opts[rng.integers(len(opts))]
        kind, w = state.market[0, i], state.market[1, j]
        c = int(rng.choice(front))
        r = int(rng.integers(game.kind_info[kind, 2]))
        token = -1
        if w >= 0:
            spots = [x for x in placed
                     if state.tokens[p, x] < 0 and (game.kind_info[state.tiles[p, x], 0] >> w) & 1]
            if (game.kind_info[kind, 0] >> w) & 1:
                spots.append(c)
            token = K.A_TOKEN + int(rng.choice(spots)) if spots and rng.random() < 0.8 else K.A_RETURN
        out[k] = (a, K.A_TILE + 6 * c + r, token)
    return out


@pytest.mark.parametrize("players,seeds,explore", CASES)
def test_shared_features_are_the_features_by_turn(players, seeds, explore):
    game, states = turn_starts(players, seeds, explore)
    rng = np.random.default_rng(players)
    on_new_hex = 0
    for state in states:
        b = state.board_args()
        listed, _, _ = list_turns(b, game.tb, listing_weights(_LISTING, state.ctl))
        turns = np.concatenate([listed, _random_turns(game, state, rng, 24)])
        got = np.empty((len(turns), CK.NUM_FEATURES), np.float32)
        want = np.empty_like(got)
        before = [a.copy() for a in b]
        turn_features(b, turns, game.tb, got)
        assert all(np.array_equal(x, y) for x, y in zip(before, b, strict=True))  # b left unchanged
        CK.turn_features_by_turn(b, turns, game.tb, want)
        assert np.array_equal(got, want)
        on_new_hex += int(np.sum(turns[:, 2] - K.A_TOKEN == (turns[:, 1] - K.A_TILE) // 6))
    assert len(states) >= 30 and on_new_hex > 0


def test_the_comparison_sees_a_changed_column():
    """A turn's row differs from another's where their boards do (the test above can fail)."""
    game, states = turn_starts(4, [3], 0.0)
    state = states[40]
    b = state.board_args()
    turns, _, _ = list_turns(b, game.tb, listing_weights(_LISTING, state.ctl))
    rows = np.empty((len(turns), CK.NUM_FEATURES), np.float32)
    turn_features(b, turns, game.tb, rows)
    assert len(np.unique(rows, axis=0)) >= 10
    for col in (CK.F_CORRIDOR, CK.F_WILD_SCORE, CK.F_CORRIDOR_SIZE, CK.F_EMPTY_SPOTS, CK.F_MAJORITY_GAP):
        assert np.ptp(rows[:, col:col + 5].sum(axis=1) if col != CK.F_CORRIDOR else rows[:, col]) > 0
