"""The per-cell greedy valuation (the search playouts' fast path) gives, bit for bit, the values of
the placement-by-placement reference ``evaluate_placement`` on every legal placement."""

from __future__ import annotations

import numpy as np

from agents.greedy import dorfromantik_cells as C
from agents.greedy import dorfromantik_kernels as GK
from agents.greedy.dorfromantik import preset_weights
from envs.dorfromantik import kernels as K
from envs.dorfromantik.game import DorfromantikGame


def _terms_present(game: DorfromantikGame, board: K.DorfBoard) -> set[str]:
    """Which of the valuation's rarer terms this position exercises."""
    flagged = np.zeros(K.MAX_PLACED, np.int64)
    n_flagged = GK.flagged_placements(board.placed, board.meta, game._flag, flagged)
    tasks = np.zeros((K.NUM_TASK, 5), np.int64)
    flags = np.zeros((K.MAX_PLACED, 5), np.int64)
    n_tasks, n_flags = C.open_groups(board, game._flag, flagged, n_flagged, tasks, flags)
    tile = int(board.meta[K.M_DRAWN])
    edges = set(game._rot_edges[tile, 0].tolist())
    found = {"open task"} if n_tasks else set()
    found |= {"open flag"} if n_flags else set()
    found |= {"task tile"} if game._task_type[tile] else set()
    found |= {"flag tile"} if game._flag[tile] else set()
    found |= {"line tile"} if edges & {K.RAIL, K.RIVER} else set()
    return found


def test_per_cell_values_equal_the_reference_on_thousands_of_positions():
    game = DorfromantikGame()
    rng = np.random.default_rng(20261205)
    mask, ref_mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_), np.zeros((K.MAX_FRONTIER, 6), np.bool_)
    values, ref_values = np.zeros((K.MAX_FRONTIER, 6)), np.zeros((K.MAX_FRONTIER, 6))
    positions, seen = 0, set()
    for seed in range(40):
        board = game.new_game(seed).board()
        base = preset_weights("selfplay" if seed % 2 else "default")
        weights = base if seed % 4 < 2 else rng.uniform(0.0, 5.0, base.size)  # every term weighted
        tables = (game._rot_edges, game._task_type, game._flag, weights)
        while not board.meta[K.M_OVER]:
            count = GK.greedy_values(board, *tables, mask, values)
            ref = GK.placement_values(board, *tables, ref_mask, ref_values)
            n = int(board.meta[K.M_FRONT])
            assert count == ref and np.array_equal(mask[:n], ref_mask[:n])
            assert np.array_equal(values[:n], ref_values[:n]), f"seed {seed}, turn {board.meta[K.M_TURN]}"
            seen |= _terms_present(game, board)
            positions += 1
            legal = np.argwhere(mask[:n])
            if rng.random() < 0.4:  # random moves too, so positions greedy avoids are checked
                slot, rot = legal[rng.integers(len(legal))]
            else:
                slot, rot = divmod(int(np.argmax(np.where(mask[:n], values[:n], -np.inf))), 6)
            K.place(board.cells, board.frontier, board.placed, board.uf, board.tasks, board.meta,
                    game._rot_edges, game._task_type, board.frontier[slot], rot)
            K.advance(board.cells, board.frontier, board.deck, board.meta, game._rot_edges,
                      game._task_type)
    assert positions > 2000
    assert seen == {"open task", "open flag", "task tile", "flag tile", "line tile"}

