"""numba kernels of the compiled Dorfromantik search (``agents.search.placement``).

* :func:`determinize_deck` resamples the hidden order (unseen landscape tiles, the three set
  aside unseen among them; unseen task tiles; each type's unseen markers) from the sorted unseen
  sets, so the result depends only on what the players know and the search's stream.
* :func:`playout` plays one candidate placement on one sampled future to the end (greedy or
  random) and returns the shared final score; the future is fixed by a 64-bit seed, so every
  candidate can be played on the same futures (paired comparisons).
* :func:`hopeless_tasks` and :func:`failed_tasks` find open tasks that no unseen tile can
  extend any more, and the placements that end (fail) an open task: the candidates that free a
  task slot so a fresh task tile is drawn.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.greedy import dorfromantik_kernels as GK
from envs.core.rng import shuffle_prefix
from envs.dorfromantik import kernels as K


@njit(cache=True)
def _shuffle_sorted(deck, lo: int, hi: int, stream) -> None:
    """Sort ``deck[lo:hi]`` (forgetting the real order), then shuffle it with ``stream``."""
    if hi - lo < 2:
        return
    part = np.sort(deck[lo:hi])
    shuffle_prefix(part, hi - lo, stream)
    deck[lo:hi] = part


@njit(cache=True)
def determinize_deck(src_deck, meta, deck, stream) -> None:
    """Write into ``deck`` a copy of ``src_deck`` whose unseen parts are resampled (module doc)."""
    deck[:] = src_deck
    unseen = meta[K.M_UNSEEN]
    land_pos = meta[K.M_LAND_POS]
    n_land = unseen + K.NUM_LAND - land_pos
    pool = np.empty(n_land, deck.dtype)
    for i in range(unseen):
        pool[i] = src_deck[i]
    for i in range(land_pos, K.NUM_LAND):
        pool[unseen + i - land_pos] = src_deck[i]
    pool = np.sort(pool)
    shuffle_prefix(pool, n_land, stream)
    for i in range(unseen):
        deck[i] = pool[i]
    for i in range(land_pos, K.NUM_LAND):
        deck[i] = pool[unseen + i - land_pos]
    _shuffle_sorted(deck, K.DECK_TASK + meta[K.M_TASK_POS], K.DECK_MARKER, stream)
    for t in range(5):
        base = K.DECK_MARKER + 5 * t
        _shuffle_sorted(deck, base + meta[K.M_MARKER_POS + t], base + 5, stream)


@njit(cache=True)
def start_playout(board, work, cell: int, rot: int, future_seed: np.uint64, rot_edges, task_type):
    """The start every playout shares: copy ``board`` into ``work`` (both
    :class:`envs.dorfromantik.kernels.DorfBoard`), resample its hidden future from ``future_seed``,
    place the drawn tile at ``cell``/``rot`` and draw the next; returns the stream, which the
    playout's own chance continues.

    ``work`` is scratch that only playouts use (``new_arrays()``): off a position's tiles and
    frontier every cell is as on an empty grid, so the previous playout's cells are cleared and only
    ``board``'s tiles and frontier copied (a 70-tile game touches a few hundred of the 21,025 cells)."""
    K.clear_game(work.cells, work.frontier, work.placed, work.meta)
    for p in range(board.meta[K.M_PLACED]):
        work.cells[board.placed[p, 0]] = board.cells[board.placed[p, 0]]
    for i in range(board.meta[K.M_FRONT]):
        work.cells[board.frontier[i]] = board.cells[board.frontier[i]]
    work.frontier[:] = board.frontier
    work.placed[:] = board.placed
    work.uf[:] = board.uf
    work.tasks[:] = board.tasks
    work.meta[:] = board.meta
    stream = np.empty(1, np.uint64)
    stream[0] = future_seed
    determinize_deck(board.deck, board.meta, work.deck, stream)
    K.place(work.cells, work.frontier, work.placed, work.uf, work.tasks, work.meta, rot_edges, task_type,
            cell, rot)
    K.advance(work.cells, work.frontier, work.deck, work.meta, rot_edges, task_type)
    return stream


@njit(cache=True)
def playout(board, work, cell: int, rot: int, future_seed: np.uint64, greedy: bool, rot_edges, task_type,
            flag, weights, mask, score) -> int:
    """Copy ``board`` into ``work`` (both :class:`envs.dorfromantik.kernels.DorfBoard`), resample
    its hidden future from ``future_seed``, place the drawn tile at ``cell``/``rot``, play to the
    end and return the final total. The playout's own chance (greedy ties, random moves) continues
    the same stream, so candidates compared on one seed see the same future."""
    stream = start_playout(board, work, cell, rot, future_seed, rot_edges, task_type)
    if greedy:
        GK.play_greedy_board(work, rot_edges, task_type, flag, weights, stream, mask)
    else:
        K.play_random(work.cells, work.frontier, work.placed, work.uf, work.tasks, work.deck, work.meta,
                      rot_edges, task_type, stream, mask, np.zeros((0, 2), np.int32))
    K.score_breakdown(work.cells, work.placed, work.uf, work.meta, flag, score)
    return score[K.S_TOTAL]


@njit(cache=True)
def _unseen_tiles(deck, meta, out) -> int:
    """Every tile not yet drawn (unseen landscape tiles, set-aside ones included, and task tiles)."""
    n = 0
    for i in range(meta[K.M_UNSEEN]):
        out[n] = deck[i]
        n += 1
    for i in range(meta[K.M_LAND_POS], K.NUM_LAND):
        out[n] = deck[i]
        n += 1
    for i in range(K.DECK_TASK + meta[K.M_TASK_POS], K.DECK_MARKER):
        out[n] = deck[i]
        n += 1
    return n


@njit(cache=True)
def _extendable(cells, rot_edges, tiles, n_tiles: int, cell: int, d: int, terr: int) -> bool:
    """Whether some tile of ``tiles[:n_tiles]`` fits at the empty ``cell`` with a ``terr`` edge facing
    direction ``d`` (the neighbour holding the group's open edge)."""
    for i in range(n_tiles):
        t = tiles[i]
        for rot in range(6):
            if rot_edges[t, rot, d] == terr and K.fits(cells, rot_edges, t, rot, cell):
                return True
    return False


@njit(cache=True)
def hopeless_tasks(cells, placed, uf, tasks, deck, meta, rot_edges) -> int:
    """Bit k set: open task k has open edges but none that any unseen tile could extend (its group
    can never grow to the target; it can only be closed, which fails it and frees its slot).
    The unseen tiles are a public set, so this reads no hidden order."""
    tiles = np.empty(K.NUM_LAND + K.NUM_TASK, np.int64)
    n_tiles = _unseen_tiles(deck, meta, tiles)
    bits = 0
    for k in range(meta[K.M_TASKS]):
        if tasks[k, 3] != 0:
            continue
        terr = tasks[k, 1]
        root = K.uf_root(uf, tasks[k, 0])
        if uf[2, root] == 0:
            continue
        alive = False
        for p in range(meta[K.M_PLACED]):
            if alive:
                break
            if K.uf_root(uf, p * 5 + terr - 1) != root or uf[1, p * 5 + terr - 1] == 0:
                continue
            cell = placed[p, 0]
            for d in range(6):
                n = cell + K.DIR_OFFSETS[d]
                if cells[n, 0] >= 0 or rot_edges[placed[p, 1], placed[p, 2], d] != terr:
                    continue
                if _extendable(cells, rot_edges, tiles, n_tiles, n, (d + 3) % 6, terr):
                    alive = True
                    break
        if not alive:
            bits |= 1 << k
    return bits


@njit(cache=True)
def failed_tasks(cells, uf, tasks, meta, rot_edges, cell: int, rot: int, out2) -> int:
    """Bit k set: placing the drawn tile at ``cell``/``rot`` makes open task k fail (its group
    overshoots the target or is closed below it)."""
    tile = meta[K.M_DRAWN]
    bits = 0
    for k in range(meta[K.M_TASKS]):
        if tasks[k, 3] != 0:
            continue
        terr = tasks[k, 1]
        target = tasks[k, 2]
        root = K.uf_root(uf, tasks[k, 0])
        joined = False
        faced = 0
        for d in range(6):
            n = cell + K.DIR_OFFSETS[d]
            nt = cells[n, 0]
            if nt < 0 or rot_edges[nt, cells[n, 1], (d + 3) % 6] != terr:
                continue
            if K.uf_root(uf, cells[n, 2] * 5 + terr - 1) != root:
                continue
            faced += 1
            if rot_edges[tile, rot, d] == terr:
                joined = True
        if faced == 0:
            continue
        if joined:
            K.group_after(cells, uf, rot_edges, tile, rot, cell, terr, out2)
            size, open_edges = out2[0], out2[1]
        else:
            size, open_edges = uf[1, root], uf[2, root] - faced
        if size > target or (open_edges == 0 and size != target):
            bits |= 1 << k
    return bits
