"""Dorfromantik's legal placements, the same mask as the engine's ``legal_moves``, computed faster.

The engine tests every (frontier cell, rotation) against the six neighbours one edge pair at a
time. Here each frontier cell is read once into a signature: per direction a 4-bit edge class of
the neighbour's facing edge (0: forest, field, village or meadow, which meet anything but rail and
river; 1 + k: rail or river kind k) and a mask of the directions that hold a tile. Each
(tile, rotation) has the same per-direction classes precomputed (:func:`tile_signatures`), so a
placement fits exactly when the classes agree on every occupied direction: one XOR and one AND.
Task tiles, whose decision 4 needs their groups, go through the engine's ``legal_moves`` itself.
Tested equal to ``legal_moves`` on the states of whole games.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from envs.dorfromantik import kernels as DK


def tile_signatures(rot_edges: np.ndarray) -> np.ndarray:
    """``sig[tile, rot]``: the 4-bit edge class of each direction ``d`` at bits ``4d``."""
    edges = np.asarray(rot_edges, np.int64)
    if edges.max() - DK.RAIL + 1 >= 16:
        raise ValueError("edge kinds do not fit the 4-bit classes")
    classes = np.where(edges >= DK.RAIL, edges - DK.RAIL + 1, 0)
    shifts = 4 * np.arange(6, dtype=np.int64)
    return np.ascontiguousarray((classes << shifts).sum(axis=2))


@njit(cache=True)
def _cell_signature(cells, rot_edges, cell: int) -> tuple:
    """(classes of the neighbours' facing edges, mask of occupied directions) of ``cell``."""
    sig = 0
    occupied = 0
    for d in range(6):
        n = cell + DK.DIR_OFFSETS[d]
        nt = cells[n, 0]
        if nt >= 0:
            b = np.int64(rot_edges[nt, cells[n, 1], (d + 3) % 6])
            cls = b - DK.RAIL + 1 if b >= DK.RAIL else 0
            sig |= cls << (4 * d)
            occupied |= 15 << (4 * d)
    return sig, occupied


@njit(cache=True)
def fast_legal_moves(cells, frontier, uf, meta, rot_edges, task_type, tile_sig, mask) -> int:
    """``DK.legal_moves`` (same mask, same count): landscape tiles by signatures, task tiles (whose
    decision 4 needs their groups) by the engine itself."""
    tile = meta[DK.M_DRAWN]
    if tile < 0 or meta[DK.M_OVER] != 0 or task_type[tile] > 0:
        return DK.legal_moves(cells, frontier, uf, meta, rot_edges, task_type, mask)
    count = 0
    for i in range(meta[DK.M_FRONT]):
        sig, occupied = _cell_signature(cells, rot_edges, frontier[i])
        for rot in range(6):
            ok = ((tile_sig[tile, rot] ^ sig) & occupied) == 0
            mask[i, rot] = ok
            if ok:
                count += 1
    return count
