"""Wildholds, Great City and Shieldgate valued from the decision map's village clusters
(agents/greedy/cartographers_clusters.py) against the whole-map terms."""

from __future__ import annotations

import numpy as np
import pytest

from agents.greedy import cartographers_clusters as C
from agents.greedy import cartographers_kernels as G
from envs.cartographers import kernels as K
from envs.core.registry import make_game

WILDHOLDS, GREAT_CITY, SHIELDGATE = 8, 9, 11


@pytest.fixture(scope="module")
def game():
    return make_game("cartographers")


def _village_map(rng: np.random.Generator, game) -> np.ndarray:
    """A random map rich in small and large village clusters, with the map's mountains."""
    grid = np.zeros(K.N_CELLS, np.int8)
    filled = rng.random(K.N_CELLS) < rng.uniform(0.2, 0.8)
    grid[filled] = rng.choice([K.FOREST, K.VILLAGE, K.VILLAGE, K.FARM], filled.sum())
    grid[game.tb[1]] = K.MOUNTAIN
    return grid


@pytest.mark.parametrize("card", [WILDHOLDS, GREAT_CITY, SHIELDGATE])
def test_village_cards_fast_terms_equal_the_whole_map_terms_on_random_maps(game, card):
    """Every connected placement that fits, in village and in another terrain, on many random maps:
    the same float as card_terms on the drawn map, bit for bit (Wildholds with no progress weight
    and with two), and merges of several clusters are met."""
    rng = np.random.default_rng(card)
    pl_cells, ruins, mountains = game.tb[5], game.tb[0], game.tb[1]
    scratch = np.empty(K.SCRATCH, np.int32)
    cl = np.empty(C.LEN, np.int32)
    edicts = np.array([card, 0, 4, 12], np.int8)
    ew = np.array([1.0, 0.0, 0.0, 0.0])
    compared = merges = 0
    for trial in range(150):
        grid = _village_map(rng, game)
        C.cluster_base_into(edicts, ew, grid, mountains, cl, scratch)
        for pid in rng.choice(pl_cells.shape[0], 150, replace=False):
            n = int(pl_cells[pid, 7])
            cells = pl_cells[pid]
            if np.any(grid[cells[:n]] != K.EMPTY) or not C.can_value(card, cells, n, cl):
                continue
            for terrain in (K.VILLAGE, K.FARM):
                drawn = grid.copy()
                drawn[cells[:n]] = terrain
                for weight in (0.0, 0.5, 1.3):
                    w = G.PROGRESS_WEIGHTS.copy()
                    w[G.W_CLUSTERS] = weight
                    expected = G.card_terms(card, drawn, ruins, mountains, w, scratch)
                    got = C.cluster_terms(card, drawn, cells, n, mountains, weight, cl)
                    assert got == expected, (trial, pid, terrain, weight)
                    compared += 1
            touched = {int(cl[C.LAB_VILLAGE + nb]) for j in range(n) for k in range(4)
                       if (nb := int(K._neighbor(int(cells[j]), k))) >= 0 and cl[C.LAB_VILLAGE + nb] >= 0}
            merges += len(touched) >= 2
    assert compared > 10_000 and merges > 300, (compared, merges)
