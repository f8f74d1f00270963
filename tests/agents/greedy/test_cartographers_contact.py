"""The Cartographers greedy agent's ``contact`` weight: it values only the placements with enough sides
touching a filled cell or the map's edge (counted here in plain Python), values them as without it, and
keeps at least the placements with the most contacts."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import make_agent
from agents.greedy import cartographers_kernels as G
from envs.cartographers import kernels as K
from envs.core.registry import make_game

N = 11


@pytest.fixture(scope="module")
def game():
    return make_game("cartographers")


def _contacts(grid, cells):
    """Sides of ``cells`` (row, column pairs) on a filled cell or the map's edge."""
    count = 0
    for r, c in cells:
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if not (0 <= rr < N and 0 <= cc < N) or grid[rr * N + cc] != K.EMPTY:
                count += 1
    return count


def _positions(game, seeds):
    agent = make_agent("greedy:preset=progress", game)
    for seed in seeds:
        state = game.new_game(seed)
        rng = np.random.default_rng(seed)
        while not game.is_over(state):
            yield state
            game.step(state, agent.act(state, game.legal_mask(state), rng))


@pytest.mark.parametrize("least", [2, 3, 9])
def test_contact_keeps_the_placements_with_enough_contacts_valued_as_without_it(game, least):
    every = make_agent("greedy:preset=quick", game)
    filtered = make_agent(f"greedy:preset=quick,contact={least}", game)
    decisions = fallback_most = 0
    for state in _positions(game, range(3)):
        actions, values = every.action_values(state)
        kept, kept_values = filtered.action_values(state)
        value_of = dict(zip(actions.tolist(), values.tolist(), strict=True))
        if actions.size and actions[0] >= K.FALLBACK_BASE:  # ambushes and 1x1s are never filtered
            assert np.array_equal(kept, actions)
            continue
        grid = state.arrays()[0][0]
        contacts = {int(a): _contacts(grid, game.decode_action(int(a), state)["cells"]) for a in actions}
        need = min(least, max(contacts.values()))
        fallback_most += need < least
        assert sorted(kept.tolist()) == sorted(a for a, c in contacts.items() if c >= need)
        assert all(value_of[int(a)] == v for a, v in zip(kept, kept_values, strict=True))
        decisions += 1
    assert decisions > 30
    if least == 9:  # rarely reached: then the placements with the most contacts are kept
        assert fallback_most > 0


def test_contact_zero_is_the_unfiltered_listing(game):
    assert G.PRESETS["progress"][G.W_CONTACT] == 0.0
    plain = make_agent("greedy:preset=progress", game)
    zero = make_agent("greedy:preset=progress,contact=0", game)
    for state in _positions(game, [5]):
        a, v = plain.action_values(state)
        b, u = zero.action_values(state)
        assert np.array_equal(a, b) and np.array_equal(v, u)
