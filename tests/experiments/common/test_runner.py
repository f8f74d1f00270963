"""play_game: determinism, common random numbers, per-seat records, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from envs.core.errors import ConfigError
from envs.core.game import State
from envs.core.registry import make_game
from experiments.common.runner import play_game, winners


def _snapshot(state: State) -> dict:
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(state).items()}


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def _trace(game, agents, seed):
    states, actions = [], []
    record = play_game(game, agents, seed, on_step=lambda s, seat, a: (states.append(_snapshot(s)),
                                                                          actions.append(a)))
    return record, states, actions


def test_same_seed_same_agents_same_game():
    game = make_game("dice-race", players=2)
    a = play_game(game, ["random", "random"], 11)
    b = play_game(game, ["random", "random"], 11)
    assert a.actions == b.actions and a.totals == b.totals and a.categories == b.categories
    assert play_game(game, ["random", "random"], 12).actions != a.actions


def test_common_random_numbers_identical_until_first_different_choice():
    game = make_game("dice-race", players=1, rounds=12)
    checked = 0
    for seed in range(20):
        _, states_a, actions_a = _trace(game, ["random"], seed)
        _, states_b, actions_b = _trace(game, ["prefer:action=2"], seed)
        first = next((i for i, (x, y) in enumerate(zip(actions_a, actions_b, strict=True)) if x != y), None)
        if first is None:
            continue
        checked += 1
        for i in range(first + 1):  # every state up to and including the first different choice
            assert _same(states_a[i], states_b[i]), f"seed {seed}: states differ at decision {i}"
        assert not _same(states_a[first + 1], states_b[first + 1])
    assert checked >= 15


def test_seat_rngs_are_independent_of_other_seats():
    game = make_game("dice-race", players=2)
    # seat 0's random choices do not depend on who sits in seat 1
    a = play_game(game, ["random", "prefer:action=0"], 3)
    b = play_game(game, ["random", "prefer:action=1"], 3)
    assert a.actions[0::2] == b.actions[0::2]


def test_record_has_per_seat_totals_categories_extras_and_latency():
    game = make_game("dice-race", players=2, rounds=5)
    r = play_game(game, ["random", "prefer:action=1"], 0)
    assert r.agents == ["random", "prefer(action=1)"] and r.decisions == [5, 5]
    assert r.totals[1] == 15.0 and r.categories[1] == {"bank": 0.0, "safe": 15.0, "gamble": 0.0}
    assert r.totals[0] == sum(r.categories[0].values())
    assert r.extras[0]["label"] == "p0" and all(t >= 0 for t in r.decision_seconds)
    rows = r.seat_rows()
    assert rows[1]["cat_safe"] == 15.0 and "decision_ms_mean" in rows[0]
    assert "decision_ms_mean" not in r.seat_rows(timing=False)[0]


def test_wrong_number_of_agents_and_bad_agents_are_clear_errors():
    game = make_game("dice-race", players=2)
    with pytest.raises(ValueError, match="2 seats but 1 agents"):
        play_game(game, ["random"], 0)
    with pytest.raises(ConfigError, match="unknown agent 'nosuch'"):
        play_game(game, ["random", "nosuch"], 0)
    with pytest.raises(ConfigError, match="agent 'random': unknown option"):
        play_game(game, ["random", "random:depth=3"], 0)


def test_winners_handles_ties():
    assert winners([3, 5, 5]) == [1, 2] and winners([7]) == [0]
