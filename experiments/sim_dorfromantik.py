"""The Dorfromantik whole-game loop for ``simulate`` (random and greedy seats, any mix).

Dorfromantik's actions are window offsets from a centre that follows the board
(:meth:`envs.dorfromantik.game.DorfromantikGame.window_centre`), so the loop recomputes that centre
each turn exactly as the engine does (the floor midpoint of the placed tiles' bounding box, or of
the legal positions when the board outgrows the window) and codes each legal placement inside the
window as ``(wr * side + wq) * 6 + rot``. The random seat takes the ``rng.integers(n)``-th code in
ascending order, as :class:`agents.random.RandomAgent` does on the legal mask; the greedy seat
values the placements with the engine's ``greedy_values`` and picks among the best in the order
:class:`agents.greedy.dorfromantik.DorfromantikGreedyAgent` lists them (frontier slot, then
rotation), ties broken by ``rng.integers``. Rows equal the Python engine's (tested).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from envs.dorfromantik import kernels as DK
from experiments.sim_choices import greedy_choice
from experiments.sim_pcg import integers


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
def dorfromantik_game(cells, frontier, placed, uf, tasks, deck, meta, rot_edges, task_type, flag,
                      policy: np.ndarray, weights: np.ndarray, radius: int, pcg: np.ndarray,
                      lmask: np.ndarray, gvalues: np.ndarray, codes: np.ndarray, values: np.ndarray,
                      decisions: np.ndarray) -> None:
    """Play the game to its end; seat ``i`` random (``policy[i]`` 0) or greedy with ``weights[i]``."""
    side = 2 * radius + 1
    players = meta[DK.M_PLAYERS]
    while meta[DK.M_OVER] == 0:
        seat = meta[DK.M_TURN] % players
        if policy[seat] == 0:
            count = DK.legal_moves(cells, frontier, uf, meta, rot_edges, task_type, lmask)
        else:  # the values of the legal moves, lmask filled by the same legal_moves
            count = DK.greedy_values(cells, frontier, placed, uf, tasks, meta, rot_edges, task_type, flag,
                                     weights[seat], lmask, gvalues)
        cq, cr = window_centre(frontier, meta, lmask, count, radius)
        n = 0
        if policy[seat] == 0:
            for s in range(meta[DK.M_FRONT]):
                for rot in range(6):
                    if lmask[s, rot]:
                        code = _code(frontier[s], rot, cq, cr, radius, side)
                        if code >= 0:
                            codes[n] = code
                            n += 1
            if n == 0:
                raise ValueError("no legal action: the game should be over")
            action = np.sort(codes[:n])[integers(pcg[seat], n)]
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
