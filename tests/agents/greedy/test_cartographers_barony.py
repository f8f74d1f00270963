"""Lost Barony's fast greedy term (agents/greedy/cartographers_barony.py) against the whole-map one."""

from __future__ import annotations

import numpy as np
import pytest

from agents.greedy import cartographers_barony as B
from agents.greedy import cartographers_kernels as G
from envs.cartographers import kernels as K
from envs.core.registry import make_game

LOST_BARONY = 13


@pytest.fixture(scope="module")
def game():
    return make_game("cartographers")


def _random_map(rng: np.random.Generator, density: float) -> np.ndarray:
    grid = np.zeros(K.N_CELLS, np.int8)
    filled = rng.random(K.N_CELLS) < density
    grid[filled] = rng.integers(1, 6, filled.sum())
    return grid


def _with_square(rng: np.random.Generator, grid: np.ndarray, side: int) -> None:
    """Fill an all-filled ``side`` x ``side`` square at a random place (the largest square then
    is at least that big, so every size of the card is met)."""
    r, c = rng.integers(0, K.ROWS - side + 1, 2)
    for i in range(side):
        for j in range(side):
            grid[(r + i) * K.COLS + c + j] = K.FOREST


def test_barony_terms_equal_the_whole_map_terms_on_random_maps(game):
    """Every placement that fits on many random maps (all densities, with and without a planted
    square, so the largest square grows by a placement and fills the map at times) gets the same
    float as card_terms on the drawn map, bit for bit, with no progress weight and with two."""
    rng = np.random.default_rng(7)
    pl_cells = game.tb[5]
    ruins, mountains = game.tb[0], game.tb[1]
    scratch = np.empty(K.SCRATCH, np.int32)
    sq = np.empty(B.LEN, np.int32)
    compared = grown = 0
    for trial in range(300):
        grid = _random_map(rng, rng.uniform(0.2, 0.97))
        if trial % 2:
            _with_square(rng, grid, int(rng.integers(2, K.ROWS + 1)))
        B.barony_base_into(grid, sq)
        base_points = K._lost_barony(grid, scratch)
        assert sq[B.BEST] * 3 == base_points
        for pid in rng.choice(pl_cells.shape[0], 120, replace=False):
            n = int(pl_cells[pid, 7])
            cells = pl_cells[pid]
            if np.any(grid[cells[:n]] != K.EMPTY):
                continue
            drawn = grid.copy()
            drawn[cells[:n]] = K.VILLAGE
            for weight in (0.0, 0.5, 1.7):
                w = G.PROGRESS_WEIGHTS.copy()
                w[G.W_BARONY] = weight
                expected = G.card_terms(LOST_BARONY, drawn, ruins, mountains, w, scratch)
                assert B.barony_terms(cells, n, sq, weight) == expected, (trial, pid, weight)
                compared += 1
            grown += K._lost_barony(drawn, scratch) > base_points
    assert compared > 5_000 and grown > 100, (compared, grown)


def test_a_placement_that_completes_a_bigger_square_scores_it():
    """A 2 x 2 hole in a filled 4 x 4 block: the placement that fills it makes the largest square 4
    (12 points), and the progress term then reads the fullest 5 x 5 square."""
    grid = np.zeros(K.N_CELLS, np.int8)
    for r in range(4):
        for c in range(4):
            if not (1 <= r <= 2 and 1 <= c <= 2):
                grid[r * K.COLS + c] = K.FARM
    sq = np.empty(B.LEN, np.int32)
    B.barony_base_into(grid, sq)
    assert sq[B.BEST] == 1 and sq[B.FULLEST] == 3
    cells = np.array([1 * K.COLS + 1, 1 * K.COLS + 2, 2 * K.COLS + 1, 2 * K.COLS + 2, 0, 0, 0, 4], np.int16)
    assert B.barony_terms(cells, 4, sq, 0.0) == 12.0
    f = 16 / 25
    assert B.barony_terms(cells, 4, sq, 0.5) == 12 + 3.0 * 0.5 * (f * f * f)


def test_every_placement_of_the_tables_fits_the_fast_path(game):
    """The fast path reads at most MAX_CELLS placed cells; every placement row of the game's tables
    (shapes and the 1x1 fallback) is that small, so none is left to the whole-map valuation."""
    assert int(game.tb[5][:, 7].max()) <= B.MAX_CELLS
