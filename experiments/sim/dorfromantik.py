"""The Dorfromantik whole-game loop for ``simulate`` (random and greedy seats, any mix).

Dorfromantik's actions are window offsets from a centre that follows the board
(:meth:`envs.dorfromantik.game.DorfromantikGame.window_centre`), so the loop recomputes that centre
each turn exactly as the engine does (the floor midpoint of the placed tiles' bounding box, or of
the legal positions when the board outgrows the window) and codes each legal placement inside the
window as ``(wr * side + wq) * 6 + rot``. The random seat takes the ``rng.integers(n)``-th code in
ascending order, as :class:`agents.random.RandomAgent` does on the legal mask; the greedy seat
values the placements with the greedy kernels' ``greedy_values`` and picks among the best in the order
:class:`agents.greedy.dorfromantik.DorfromantikGreedyAgent` lists them (frontier slot, then
rotation), ties broken by ``rng.integers``. Rows equal the Python engine's (tested).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
from numba import njit

from agents.base import agent_label
from agents.greedy import dorfromantik_kernels as GK
from envs.core.pcg import derive_seed_crc, integers, seat_crcs, seed_pcg
from envs.dorfromantik import kernels as DK
from envs.dorfromantik.data import TASK_TYPES
from envs.dorfromantik.legal import fast_legal_moves
from experiments.sim.choices import greedy_choice
from experiments.sim.rows import chunk_columns, shared_wins


@njit(cache=True)
def window_centre(frontier, meta, lmask, count: int, radius: int) -> tuple:
    """(cq, cr) of the action window, as the engine computes it (``lmask``: the legal moves)."""
    if meta[DK.M_PLACED] == 0:
        return 0, 0
    qmin, qmax, rmin, rmax = meta[DK.M_QMIN], meta[DK.M_QMAX], meta[DK.M_RMIN], meta[DK.M_RMAX]
    if max(qmax - qmin, rmax - rmin) > 2 * (radius - 1) and meta[DK.M_OVER] == 0 and count > 0:
        first = True
        for s in range(meta[DK.M_FRONT]):
            for rot in range(6):
                if lmask[s, rot]:
                    q = frontier[s] % DK.GRID_SIDE - DK.GRID_RADIUS
                    r = frontier[s] // DK.GRID_SIDE - DK.GRID_RADIUS
                    if first:
                        qmin, qmax, rmin, rmax = q, q, r, r
                        first = False
                    else:
                        qmin, qmax, rmin, rmax = min(qmin, q), max(qmax, q), min(rmin, r), max(rmax, r)
    return (qmin + qmax) // 2, (rmin + rmax) // 2


@njit(cache=True)
def _code(cell: int, rot: int, cq: int, cr: int, radius: int, side: int) -> int:
    """The action of placing at ``cell`` with ``rot`` in the window centred at (cq, cr); -1 outside."""
    wq = cell % DK.GRID_SIDE - DK.GRID_RADIUS - cq + radius
    wr = cell // DK.GRID_SIDE - DK.GRID_RADIUS - cr + radius
    if wq < 0 or wq >= side or wr < 0 or wr >= side:
        return -1
    return (wr * side + wq) * 6 + rot


@njit(cache=True)
def random_code(frontier, meta, lmask, cq: int, cr: int, radius: int, pcg_row: np.ndarray,
                slot_count: np.ndarray, row_count: np.ndarray) -> int:
    """:class:`agents.random.RandomAgent`'s action: the ``rng.integers(n)``-th of the ``n`` legal codes
    inside the window in ascending order, found without sorting them. Codes ascend with the board
    row, then the column, then the rotation, as cell numbers do, so the draw is located by row
    counts, then among that row's few frontier cells. ``slot_count``, ``row_count``: zeroed scratch
    (``row_count`` is left zeroed)."""
    side = 2 * radius + 1
    n = 0
    r_lo = DK.GRID_SIDE
    r_hi = -1
    for s in range(meta[DK.M_FRONT]):
        c = 0
        if _code(frontier[s], 0, cq, cr, radius, side) >= 0:
            for rot in range(6):
                if lmask[s, rot]:
                    c += 1
        slot_count[s] = c
        if c > 0:
            row = frontier[s] // DK.GRID_SIDE
            row_count[row] += c
            r_lo = min(r_lo, row)
            r_hi = max(r_hi, row)
            n += c
    if n == 0:
        raise ValueError("no legal action: the game should be over")
    k = integers(pcg_row, n)
    row = r_lo
    while k >= row_count[row]:
        k -= row_count[row]
        row += 1
    for r in range(r_lo, r_hi + 1):
        row_count[r] = 0
    previous = -1
    while True:  # this row's frontier cells in ascending order until the k-th code
        best = -1
        for s in range(meta[DK.M_FRONT]):
            cell = frontier[s]
            if slot_count[s] > 0 and cell // DK.GRID_SIDE == row and cell > previous and \
                    (best < 0 or cell < frontier[best]):
                best = s
        if k < slot_count[best]:
            for rot in range(6):
                if lmask[best, rot]:
                    if k == 0:
                        return _code(frontier[best], rot, cq, cr, radius, side)
                    k -= 1
        k -= slot_count[best]
        previous = frontier[best]


@njit(cache=True)
def dorfromantik_game(board, tb, policy: np.ndarray, weights: np.ndarray, radius: int, pcg: np.ndarray,
                      lmask: np.ndarray, gvalues: np.ndarray, codes: np.ndarray, values: np.ndarray,
                      decisions: np.ndarray) -> None:
    """Play the game on ``board`` (a :class:`envs.dorfromantik.kernels.DorfBoard`; ``tb`` the game's
    :class:`envs.dorfromantik.kernels.DorfTables`) to its end; seat ``i`` random (``policy[i]`` 0) or
    greedy with ``weights[i]``. ``lmask``, ``gvalues``, ``codes``, ``values``: scratch."""
    cells, frontier, placed, uf, tasks, deck, meta = board
    rot_edges, task_type, flag = tb.rot_edges, tb.task_type, tb.flag
    side = 2 * radius + 1
    players = meta[DK.M_PLAYERS]
    slot_count = np.zeros(DK.MAX_FRONTIER, np.int64)
    row_count = np.zeros(DK.GRID_SIDE, np.int64)
    while meta[DK.M_OVER] == 0:
        seat = meta[DK.M_TURN] % players
        if policy[seat] == 0:
            count = fast_legal_moves(cells, frontier, uf, meta, rot_edges, task_type, tb.tile_sig, lmask)
        else:  # the values of the legal moves, lmask filled by the same legal_moves
            count = GK.greedy_values(board, rot_edges, task_type, flag, weights[seat], lmask, gvalues)
        cq, cr = window_centre(frontier, meta, lmask, count, radius)
        n = 0
        if policy[seat] == 0:
            action = random_code(frontier, meta, lmask, cq, cr, radius, pcg[seat], slot_count, row_count)
        else:
            for s in range(meta[DK.M_FRONT]):
                for rot in range(6):
                    if lmask[s, rot]:
                        code = _code(frontier[s], rot, cq, cr, radius, side)
                        if code >= 0:
                            codes[n] = code
                            values[n] = gvalues[s, rot]
                            n += 1
            action = greedy_choice(codes, values, n, pcg[seat])
        decisions[seat] += 1
        index, rot = action // 6, action % 6
        q = cq + index % side - radius
        r = cr + index // side - radius
        cell = (r + DK.GRID_RADIUS) * DK.GRID_SIDE + (q + DK.GRID_RADIUS)
        DK.place(cells, frontier, placed, uf, tasks, meta, rot_edges, task_type, cell, rot)
        DK.advance(cells, frontier, deck, meta, rot_edges, task_type)


@njit(cache=True)
def dorfromantik_chunk(seeds: np.ndarray, stacks_crc: int, seat_crcs: np.ndarray, tb, policy: np.ndarray,
                       weights: np.ndarray, radius: int, scores: np.ndarray, facts: np.ndarray,
                       decisions: np.ndarray) -> None:
    """Play one game per seed as ``game.new_game(seed)`` and the seats' agents would, on one set of
    arrays cleared between games (``tb``: the game's :class:`envs.dorfromantik.kernels.DorfTables`):
    ``scores[g]`` gets the engine's score breakdown, ``facts[g]`` the completed, failed and open tasks
    and the tiles placed, ``decisions[g, seat]`` the decisions."""
    board = _fresh_arrays()
    cells, frontier, placed, uf, tasks, deck, meta = board
    rot_edges, task_type, flag = tb.rot_edges, tb.task_type, tb.flag
    players = policy.shape[0]
    stream = np.zeros(1, np.uint64)
    pcg = np.zeros((players, 6), np.uint64)
    lmask = np.zeros((DK.MAX_FRONTIER, 6), np.bool_)
    gvalues = np.zeros((DK.MAX_FRONTIER, 6), np.float64)
    codes = np.zeros(DK.MAX_FRONTIER * 6, np.int64)
    values = np.zeros(DK.MAX_FRONTIER * 6, np.float64)
    for g in range(seeds.shape[0]):
        DK.clear_game(cells, frontier, placed, meta)
        frontier[:] = 0
        placed[:] = 0
        uf[:] = 0
        tasks[:] = 0
        stream[0] = derive_seed_crc(seeds[g], stacks_crc)
        DK.setup(cells, frontier, placed, uf, tasks, deck, meta, tb.markers, tb.rules, players, stream)
        DK.advance(cells, frontier, deck, meta, rot_edges, task_type)
        for i in range(players):
            seed_pcg(seeds[g], seat_crcs[i], pcg[i])
        dorfromantik_game(board, tb, policy, weights, radius, pcg, lmask, gvalues, codes, values,
                          decisions[g])
        DK.score_breakdown(cells, placed, uf, meta, flag, scores[g])
        facts[g, 0] = meta[DK.M_DONE]
        facts[g, 1] = meta[DK.M_FAILED]
        facts[g, 2] = meta[DK.M_OPEN_TASKS]
        facts[g, 3] = meta[DK.M_PLACED]


@njit(cache=True)
def _fresh_arrays():
    """The arrays of one empty game as a :class:`envs.dorfromantik.kernels.DorfBoard`, as
    ``DK.new_arrays`` makes them."""
    cells = np.full((DK.GRID_CELLS, 4), -1, np.int16)
    cells[:, 1:3] = 0
    return DK.DorfBoard(cells, np.zeros(DK.MAX_FRONTIER, np.int32), np.zeros((DK.MAX_PLACED, 3), np.int32),
                        np.zeros((3, DK.MAX_NODES), np.int16), np.zeros((DK.NUM_TASK, 4), np.int16),
                        np.zeros(DK.DECK_SIZE, np.int16), np.zeros(DK.META_SIZE, np.int32))


def dorfromantik_columns(game: Any, agents: list[str], seeds: list[int], index: int,
                          policy: np.ndarray, weights: np.ndarray) -> dict[str, list[Any]]:
    """A whole Dorfromantik chunk in one compiled call (setup, play, score breakdown per seed)."""
    players, games = len(agents), len(seeds)
    scores = np.zeros((games, DK.SCORE_SIZE), np.int64)
    facts = np.zeros((games, 4), np.int64)
    decisions = np.zeros((games, players), np.int64)
    dorfromantik_chunk(np.asarray(seeds, np.int64), zlib.crc32(b"dorfromantik/stacks"), seat_crcs(players),
                       game.tb, policy, weights, game.window_radius, scores, facts, decisions)
    total = scores[:, DK.S_TOTAL]
    categories = {"tasks": scores[:, DK.S_TASKS:DK.S_TASKS + 5].sum(axis=1),
                  "flags": scores[:, DK.S_FLAGS:DK.S_FLAGS + 3].sum(axis=1),
                  "longest_rail": scores[:, DK.S_RAIL], "longest_river": scores[:, DK.S_RIVER]}
    extras = {f"tasks_{name}": scores[:, DK.S_TASKS + t] for t, name in enumerate(TASK_TYPES)}
    extras.update({f"flags_{name}": scores[:, DK.S_FLAGS + t] for t, name in enumerate(TASK_TYPES[:3])})
    extras.update(completed_tasks=facts[:, 0], failed_tasks=facts[:, 1], open_tasks=facts[:, 2],
                  tiles_placed=facts[:, 3])
    shared = np.repeat(total[:, None].astype(np.float64), players, axis=1)
    return chunk_columns(index, seeds, [agent_label(a) for a in agents], shared, decisions,
                         shared_wins(shared) if players > 1 else None, categories, extras)
