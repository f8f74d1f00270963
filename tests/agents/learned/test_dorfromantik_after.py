"""The Dorfromantik candidate view by frontier cell (the learned policy's fast path) gives, exactly, the
rows and values of the by-placement reference, which describes each placement by making it."""

from __future__ import annotations

import numpy as np

from agents.learned import dorfromantik_after as LA
from agents.learned import dorfromantik_columns as LC
from agents.learned import dorfromantik_kernels as LK
from agents.learned.dorfromantik import N_PHASES
from envs.dorfromantik import kernels as K
from envs.dorfromantik.game import DorfromantikGame

ROWS = 2000


def _play(game: DorfromantikGame, board: K.DorfBoard, slot: int, rot: int) -> None:
    K.place(board.cells, board.frontier, board.placed, board.uf, board.tasks, board.meta, game._rot_edges,
            game._task_type, board.frontier[slot], rot)
    K.advance(board.cells, board.frontier, board.deck, board.meta, game._rot_edges, game._task_type)


def _tables(game: DorfromantikGame) -> tuple:
    return game._rot_edges, game._task_type, game._flag


def test_feature_rows_equal_the_placed_description_on_hundreds_of_positions():
    game = DorfromantikGame()
    rng = np.random.default_rng(20261206)
    mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
    fast = (np.zeros(ROWS, np.int64), np.zeros(ROWS, np.int64), np.zeros((ROWS, LC.N_COLUMNS), np.float32))
    ref = (np.zeros(ROWS, np.int64), np.zeros(ROWS, np.int64), np.zeros((ROWS, LC.N_COLUMNS), np.float32))
    nonzero = np.zeros(LC.N_COLUMNS, np.int64)
    positions = 0
    for seed in range(12):
        board = game.new_game(500 + seed).board()
        while not board.meta[K.M_OVER]:
            fast[2][:] = np.nan
            n = LA.candidate_features(board, *_tables(game), mask, *fast)
            n_ref = LK.candidate_features_by_placement(board, *_tables(game), mask, *ref)
            assert n == n_ref
            for got, want in zip(fast, ref, strict=True):
                assert np.array_equal(got[:n], want[:n]), f"seed {seed}, turn {board.meta[K.M_TURN]}"
            nonzero += (ref[2][:n] != 0).sum(axis=0)
            positions += 1
            k = rng.integers(n)  # a random legal placement: positions no policy would reach too
            _play(game, board, int(fast[0][k]), int(fast[1][k]))
    assert positions > 500
    # every column, the rare ones included (a task completed or failed by the placement), was exercised
    assert (nonzero > 0).all(), np.flatnonzero(nonzero == 0)


def test_linear_values_equal_the_by_placement_values_bit_for_bit():
    game = DorfromantikGame()
    rng = np.random.default_rng(7)
    mask, ref_mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_), np.zeros((K.MAX_FRONTIER, 6), np.bool_)
    values, ref_values = np.zeros((K.MAX_FRONTIER, 6)), np.zeros((K.MAX_FRONTIER, 6))
    positions = 0
    for seed in range(24):
        board = game.new_game(seed).board()
        theta = rng.normal(0.0, 1.0, (N_PHASES, LC.N_COLUMNS))  # every column weighted, signs mixed
        while not board.meta[K.M_OVER]:
            values[:] = np.nan
            ref_values[:] = np.nan
            n = LA.linear_values(board, *_tables(game), theta, mask, values)
            assert n == LK.linear_values_by_placement(board, *_tables(game), theta, ref_mask, ref_values)
            front = int(board.meta[K.M_FRONT])
            assert np.array_equal(mask[:front], ref_mask[:front])
            assert np.array_equal(values[:front], ref_values[:front], equal_nan=True)
            k = LK.linear_placement(board, *_tables(game), theta, mask, values)
            assert k == LK.first_best(board.meta, ref_mask, ref_values)
            positions += 1
            legal = np.argwhere(mask[:front])
            slot, rot = legal[rng.integers(len(legal))] if rng.random() < 0.5 else divmod(k, 6)
            _play(game, board, int(slot), int(rot))
    assert positions > 1000


def test_the_first_best_placement_takes_the_first_within_the_tolerance():
    meta = np.zeros(K.META_SIZE, np.int32)
    meta[K.M_FRONT] = 2
    mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
    values = np.full((K.MAX_FRONTIER, 6), -np.inf)
    mask[0, 3] = mask[1, 0] = mask[1, 2] = True
    values[0, 3], values[1, 0], values[1, 2] = 1.0, 2.0, 2.0 + 5e-10
    assert LK.first_best(meta, mask, values) == 6  # slot 1, rotation 0: within 1e-9 of the best
    values[1, 2] = 2.0 + 1e-6
    assert LK.first_best(meta, mask, values) == 8
    mask[:] = False
    assert LK.first_best(meta, mask, values) == -1
