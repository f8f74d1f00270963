"""The full-map ruling: a seat whose decision map has no empty cell passes (nothing drawn) in the
Python engine, the kernels and the compiled loops, and the reference says the same."""

from __future__ import annotations

import numpy as np

from envs.cartographers import kernels as K
from envs.cartographers import reference as ref
from envs.cartographers.data import N_EXPLORE_CARDS
from envs.cartographers.game import CartographersGame
from tests.envs.cartographers.test_engine_rules import fill_all_but


def play_out(g: CartographersGame, s, seed: int) -> list[tuple[int, int]]:
    """Play ``s`` to the end with uniformly random legal actions through the Python engine; the
    (phase, decision map) of every decision."""
    rng = np.random.default_rng(seed)
    decisions = []
    while not g.is_over(s):
        legal = np.flatnonzero(g.legal_mask(s))
        assert legal.size, f"no legal action in season {s.meta[K.M_SEASON]}, seat {g.current_player(s)}"
        decisions.append((int(s.meta[K.M_PHASE]), int(K.decision_map(s.meta))))
        g.step(s, int(rng.choice(legal)))
    return decisions


def test_solo_map_filled_by_the_last_drawing_passes_every_later_card():
    g = CartographersGame(cards=(0, 4, 8, 12))
    for seed in range(3):
        s = g.new_game(seed)
        fill_all_but(s, 0, {(0, 0)})
        assert len(play_out(g, s, seed)) == 1  # one drawing fills (0, 0); every later card is passed
        assert g.is_over(s) and not (s.grid[0] == K.EMPTY).any()
        assert (s.record[0, :, K.R_TOTAL] != 0).any() and len(g.scores(s)[0].categories) > 0
        assert s.meta[K.M_SEASON] == 4


def test_compiled_loops_pass_on_a_full_map():
    g = CartographersGame(cards=(0, 4, 8, 12))
    s = g.new_game(5)
    fill_all_but(s, 0, {(0, 0)})
    n = K.play_random(s.arrays(), g.tb, np.array([9], np.uint64), np.zeros(0, np.int32))
    assert n == 1 and g.is_over(s)
    greedy = g.new_game(5)
    fill_all_but(greedy, 0, {(0, 0)})
    returns = g.rollout_returns(greedy, 3, "greedy")
    assert len(returns) == 1 and g.is_over(greedy) and returns[0] == K.totals(greedy.record)[0]


def test_multiplayer_seat_with_a_full_map_is_skipped_and_ambushes_on_it_pass():
    g = CartographersGame(players=2, cards=(0, 4, 8, 12))
    for seed in range(4):
        s = g.new_game(seed)
        fill_all_but(s, 0, {(0, 0)})
        rng = np.random.default_rng(seed)
        while (s.grid[0] == K.EMPTY).any():  # until a drawing fills seat 0's last cell
            g.step(s, int(rng.choice(np.flatnonzero(g.legal_mask(s)))))
        full, turns = s.grid[0].copy(), int(s.meta[K.M_TURNS])
        decisions = play_out(g, s, seed)
        assert all(on_map != 0 for _, on_map in decisions), "a decision on the full map"
        assert sum(phase == K.PHASE_EXPLORE for phase, _ in decisions) > 10
        assert np.array_equal(s.grid[0], full) and g.is_over(s)
        assert s.meta[K.M_TURNS] - turns == len(decisions)


def test_reference_decision_kind_agrees_with_the_engine_mask():
    g = CartographersGame(cards=(0, 4, 8, 12))
    rng = np.random.default_rng(11)
    ruins = np.array(g.data.maps["A"].ruins, bool).reshape(11, 11)
    kinds = {"pass": 0, "fallback": 0, "place": 0}
    explore_cards = [c for c in range(N_EXPLORE_CARDS) if g.data.card_kind[c] == 0]
    for case in range(60):
        s = g.new_game(case)
        keep = {divmod(int(c), 11) for c in rng.choice(121, size=int(rng.integers(0, 4)), replace=False)}
        fill_all_but(s, 0, keep)
        card = int(rng.choice(explore_cards))
        s.meta[K.M_CARD] = card
        kind = ref.decision_kind(s.grid[0].reshape(11, 11), ruins, g.data.card_shapes[card], False)
        kinds[kind] += 1
        room = K.next_seat_with_room(s.grid, 0, 1, True, 0) == 0
        assert (kind != "pass") == room == bool(g.legal_mask(s).any()), f"case {case}: {kind}"
    assert kinds["pass"] > 5 and kinds["fallback"] > 5
