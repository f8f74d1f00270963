"""The shortcuts of simulate's chunk loops give exactly what the engine and the runner give:
Dorfromantik's legal mask from cell signatures, the random code found without sorting, and the
win shares built from arrays."""

from __future__ import annotations

import numpy as np
import pytest

from envs.core.pcg import integers, seed_pcg
from envs.core.registry import make_game
from envs.dorfromantik import kernels as DK
from envs.dorfromantik.legal import fast_legal_moves, tile_signatures
from experiments.common.runner import winners
from experiments.sim.compiled import play_columns
from experiments.sim.dorfromantik import _code, random_code, window_centre
from experiments.sim.rows import shared_wins
from experiments.sim.simulate import python_columns


def _states(game, seeds):
    """Every decision state of random games (placing the first legal move of a shuffled order)."""
    rng = np.random.default_rng(5)
    for seed in seeds:
        state = game.new_game(seed)
        while not game.is_over(state):
            yield state
            legal = np.flatnonzero(game.legal_mask(state))
            game.step(state, int(rng.choice(legal)))


@pytest.mark.parametrize("window_radius", [15, 4])
def test_fast_legal_mask_equals_the_engine(window_radius):
    game = make_game("dorfromantik", players=1, window_radius=window_radius)
    sig = tile_signatures(game._rot_edges)
    ours = np.zeros((DK.MAX_FRONTIER, 6), np.bool_)
    theirs = np.zeros((DK.MAX_FRONTIER, 6), np.bool_)
    landscape = 0
    for state in _states(game, [0, 1, 2]):
        s = state
        n_ours = fast_legal_moves(s.cells, s.frontier, s.uf, s.meta, game._rot_edges, game._task_type, sig,
                                  ours)
        n_theirs = DK.legal_moves(s.cells, s.frontier, s.uf, s.meta, game._rot_edges, game._task_type, theirs)
        front = int(s.meta[DK.M_FRONT])
        assert n_ours == n_theirs > 0
        assert (ours[:front] == theirs[:front]).all()
        landscape += int(game._task_type[s.meta[DK.M_DRAWN]] == 0)
    assert landscape > 100  # the signature path was exercised


@pytest.mark.parametrize("window_radius", [15, 4])
def test_random_code_is_the_drawn_rank_of_the_sorted_codes(window_radius):
    game = make_game("dorfromantik", players=1, window_radius=window_radius)
    side = 2 * window_radius + 1
    mask = np.zeros((DK.MAX_FRONTIER, 6), np.bool_)
    slots = np.zeros(DK.MAX_FRONTIER, np.int64)
    rows = np.zeros(DK.GRID_SIDE, np.int64)
    for i, state in enumerate(_states(game, [3, 4])):
        s = state
        count = DK.legal_moves(s.cells, s.frontier, s.uf, s.meta, game._rot_edges, game._task_type, mask)
        cq, cr = window_centre(s.frontier, s.meta, mask, count, window_radius)
        codes = sorted(c for slot in range(int(s.meta[DK.M_FRONT])) for rot in range(6) if mask[slot, rot]
                       for c in [_code(s.frontier[slot], rot, cq, cr, window_radius, side)] if c >= 0)
        assert codes == sorted(np.flatnonzero(game.legal_mask(state)).tolist())
        ours, theirs = np.zeros(6, np.uint64), np.zeros(6, np.uint64)
        seed_pcg(i, 77, ours)
        seed_pcg(i, 77, theirs)
        got = random_code(s.frontier, s.meta, mask, cq, cr, window_radius, ours, slots, rows)
        assert got == codes[integers(theirs, len(codes))]
        assert (ours == theirs).all() and not rows.any()


def test_shared_wins_follow_the_runner():
    totals = np.array([[3.0, 5.0, 5.0], [1.0, 0.0, 0.0], [2.0, 2.0, 2.0], [0.1 + 0.2, 0.3, 0.0]])
    expected = np.zeros_like(totals)
    for g, row in enumerate(totals):
        best = winners(row.tolist())
        expected[g, best] = 1.0 / len(best)
    assert (shared_wins(totals) == expected).all()


@pytest.mark.parametrize(("game_name", "tie_break"),
                         [("cascadia", "nature_tokens"), ("cartographers", "monsters")])
def test_chunk_breaks_tied_totals_as_the_engine(game_name, tie_break):
    # the chunks' win column applies game.winners' tie-break (Cascadia: more nature tokens;
    # Cartographers: fewer monster points lost) from arrays
    game = make_game(game_name, players=2)
    agents = ["random", "random"]
    compiled = play_columns(game, agents, list(range(300)), 0)
    totals = np.array(compiled["total"]).reshape(-1, 2)
    breaker = sum(np.array(v) for k, v in compiled.items() if k.startswith("cat_") and k.endswith(tie_break))
    breaker = breaker.reshape(-1, 2)
    tied = np.flatnonzero(totals[:, 0] == totals[:, 1])
    broken = [int(s) for s in tied if breaker[s, 0] != breaker[s, 1]][:3]
    shared = [int(s) for s in tied if breaker[s, 0] == breaker[s, 1]][:2]  # a shared win, where any
    assert broken
    seeds = sorted(broken + shared)
    assert play_columns(game, agents, seeds, 0) == python_columns(game, agents, seeds, 0)


@pytest.mark.parametrize(("game_name", "options"), [
    ("cartographers", {"players": 2, "side": "B", "edict_order": "fixed", "coin_cap": None,
                       "ambushes": False}),
    ("cartographers", {"players": 1, "cards": (1, 5, 9, 13), "coin_cap": 3}),
    ("cascadia", {"players": 3, "second_place_tie": "share"}),
    ("dorfromantik", {"players": 3, "window_radius": 6}),
])
def test_chunks_honour_the_game_options(game_name, options):
    # the chunk loops read every setting from the game object, as new_game and the score sheets do
    game = make_game(game_name, **options)
    agents = ["random", "greedy", "random"][:game.num_players()]
    seeds = [2, 8, 13]
    assert play_columns(game, agents, seeds, 4) == python_columns(game, agents, seeds, 4)
