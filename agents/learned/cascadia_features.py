"""Feature rows of Cascadia candidate turns from figures computed once per board
(:func:`turn_features`): the same rows, bit for bit, as placing each turn's tile and token and
measuring the board (:func:`agents.learned.cascadia_kernels.turn_features_by_turn`, the reference
it is tested against).

A turn is a tile placement and a token placement, and each column depends on one of them only: the
corridors after the turn on the tile (market slot, frontier hex, rotation; from the corridors
labelled once, so nothing is flooded per turn), the wildlife scores after it on the token (animal,
hex; measured once per distinct token placement: a market decision's few hundred turns share a few
dozen), and the token and empty-spot counts are the board's plus the turn's changes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.greedy.cascadia import (
    corridor_components,
    corridor_joined,
    edge_matches,
    own_turns_after,
    pattern_count,
)
from agents.learned.cascadia_kernels import (
    F_CORRIDOR,
    F_CORRIDOR_SIZE,
    F_EDGE_MATCH,
    F_EMPTY_SPOTS,
    F_MAJORITY_GAP,
    F_NATURE_EARNED,
    F_NATURE_HELD,
    F_NATURE_SPENT,
    F_OPEN_SPOT,
    F_TILES,
    F_TOKENS,
    F_TURNS_LEFT,
    F_WILD_SCORE,
    F_WILDLIFE,
    NUM_FEATURES,
    decode_turn,
    others_largest,
    put_pattern,
    spot_count,
)
from envs.cascadia import kernels as K


@njit(cache=True)
def corridors_after(p, c, kind, r, edges, nbr, kind_edges, largest, comp, size, roots, after) -> None:
    """The largest corridor per habitat (``after``: int64[5]) once ``kind`` is placed at ``c`` with
    rotation ``r``, from the labels of :func:`agents.greedy.cascadia.corridor_components` (``largest``
    the board's own)."""
    for h in range(5):
        after[h] = largest[h]
    done = 0
    for d in range(6):
        h = kind_edges[kind, r, d]
        if not (done >> h) & 1:
            done |= 1 << h
            joined = corridor_joined(p, c, kind, r, h, edges, nbr, kind_edges, comp, size, roots)
            after[h] = max(after[h], joined)


@njit(cache=True)
def _clear_marks(mark, cells, pinfo, p) -> None:
    """Zero the flood marks of seat p's hexes (the wildlife measure leaves its group stamps)."""
    for m in range(pinfo[p, K.P_NCELLS]):
        mark[cells[p, m]] = 0


@njit(cache=True)
def _board_counts(b, kind_info, p):
    """Seat p's tokens per animal and empty spots per animal (int64[5] each)."""
    tokens = np.zeros(5, np.int64)
    empty = np.zeros(5, np.int64)
    for m in range(b.pinfo[p, K.P_NCELLS]):
        cell = b.cells[p, m]
        if b.tokens[p, cell] >= 0:
            tokens[b.tokens[p, cell]] += 1
        else:
            mask = kind_info[b.tiles[p, cell], 0]
            for x in range(5):
                empty[x] += (mask >> x) & 1
    return tokens, empty


@njit(cache=True)
def turn_features(b, turns, tb, out) -> None:
    """One feature row per turn (``turns``: int64[n, 3], market-phase actions of the seat to move)
    into ``out`` (float32[n, NUM_FEATURES]), exactly
    :func:`agents.learned.cascadia_kernels.turn_features_by_turn`'s; ``b`` is left unchanged (``tb``
    its game's :class:`envs.cascadia.kernels.CascadiaTables`)."""
    nbr, kind_edges, kind_info, tables = tb.nbr, tb.kind_edges, tb.kind_info, tb.tables
    p = b.ctl[K.C_CUR]
    players = b.ctl[K.C_PLAYERS]
    supply = b.ctl[K.C_SUPPLY]
    nature = b.pinfo[p, K.P_NATURE]
    turns_left = own_turns_after(b.ctl)
    ncell = b.pinfo[p, K.P_NCELLS]
    nfront = b.pinfo[p, K.P_NFRONT]
    tokens = b.tokens.copy()
    cells = b.cells.copy()
    pinfo = b.pinfo.copy()
    mark = np.zeros(nbr.shape[0], np.int32)
    members = np.empty(K.MAX_CELLS, np.int32)
    work = K.elk_work(K.MAX_CELLS)
    stats = np.zeros(7, np.int32)
    K.wildlife_stats_into(p, tokens, cells, pinfo, nbr, tables, mark, members, work, stats)
    _clear_marks(mark, cells, pinfo, p)
    comp = np.empty((nbr.shape[0], 5), np.int32)
    comp_size = np.empty(5 * K.MAX_CELLS, np.int32)
    largest = np.zeros(5, np.int32)
    corridor_components(p, b.edges, cells, pinfo, nbr, comp, comp_size, largest)
    roots = np.empty(6, np.int32)
    others = others_largest(b, nbr, p, mark)
    tok_before, empty_before = _board_counts(b, kind_info, p)
    # where a hex sits: 0 .. ncell - 1 placed, ncell + f on the frontier
    slot_of = np.full(nbr.shape[0], -1, np.int64)
    for k in range(ncell):
        slot_of[cells[p, k]] = k
    for f in range(nfront):
        slot_of[b.flist[p, f]] = ncell + f
    nslot = ncell + nfront + 1  # the last: no token
    # per placement (market slot, frontier hex, rotation): corridors after, edges matched
    tile_done = np.zeros((4, max(nfront, 1), 6), np.bool_)
    tile_after = np.empty((4, max(nfront, 1), 6, 5), np.int64)
    tile_matched = np.empty((4, max(nfront, 1), 6), np.int64)
    # per token placement (animal, hex): wildlife gain, pattern count, wildlife stats after
    token_done = np.zeros((5, nslot), np.bool_)
    token_gain = np.empty((5, nslot), np.int64)
    token_count = np.empty((5, nslot), np.int64)
    token_wild = np.empty((5, nslot, 5), np.int64)
    after = np.zeros(5, np.int64)
    wild = np.zeros(7, np.int32)
    row = np.zeros(NUM_FEATURES)
    for k in range(turns.shape[0]):
        row[:] = 0.0
        i, free, kind, w, c, r, t = decode_turn(b, turns[k])
        f = slot_of[c] - ncell
        if not tile_done[i, f, r]:
            corridors_after(p, c, kind, r, b.edges, nbr, kind_edges, largest, comp, comp_size, roots, after)
            tile_after[i, f, r] = after
            tile_matched[i, f, r] = edge_matches(p, c, kind, r, b.edges, nbr, kind_edges)
            tile_done[i, f, r] = True
        gain = 0
        for h in range(5):
            gain += tile_after[i, f, r, h] - largest[h]
        row[F_CORRIDOR] = gain
        row[F_EDGE_MATCH] = tile_matched[i, f, r]
        row[F_NATURE_SPENT] = free
        keystone = False
        tw = w if t >= 0 else 0
        ts = slot_of[t] if t >= 0 else nslot - 1
        if not token_done[tw, ts]:
            if t >= 0:
                token_gain[tw, ts] = K.token_gain_into(p, t, w, tokens, nbr, tables, stats, mark, members,
                                                       work)
                token_count[tw, ts] = pattern_count(p, t, w, b.tiles, tokens, nbr, kind_info)
                tokens[p, t] = w
                if t == c:
                    cells[p, ncell] = c
                    pinfo[p, K.P_NCELLS] = ncell + 1
            K.wildlife_stats_into(p, tokens, cells, pinfo, nbr, tables, mark, members, work, wild)
            _clear_marks(mark, cells, pinfo, p)
            for x in range(5):
                token_wild[tw, ts, x] = wild[x]
            if t >= 0:
                tokens[p, t] = -1
                pinfo[p, K.P_NCELLS] = ncell
            token_done[tw, ts] = True
        if t >= 0:
            row[F_WILDLIFE] = token_gain[tw, ts]
            put_pattern(w, token_count[tw, ts], row)
            keystone = kind_info[kind if t == c else b.tiles[p, t], 1] == w
            if keystone and supply > 0:
                row[F_NATURE_EARNED] = 1.0
        if t != c:  # the new hex stays empty: a spot per animal it takes
            row[F_OPEN_SPOT] = spot_count(kind_info[kind, 0])
        row[F_TURNS_LEFT] = turns_left
        for x in range(5):
            row[F_WILD_SCORE + x] = token_wild[tw, ts, x]
            row[F_CORRIDOR_SIZE + x] = tile_after[i, f, r, x]
            if players > 1:
                row[F_MAJORITY_GAP + x] = tile_after[i, f, r, x] - others[x]
            row[F_TOKENS + x] = tok_before[x]
            row[F_EMPTY_SPOTS + x] = empty_before[x]
        if t >= 0:
            row[F_TOKENS + w] += 1.0
        if t != c:
            new_mask = kind_info[kind, 0]
            for x in range(5):
                row[F_EMPTY_SPOTS + x] += (new_mask >> x) & 1
            if t >= 0:
                old_mask = kind_info[b.tiles[p, t], 0]
                for x in range(5):
                    row[F_EMPTY_SPOTS + x] -= (old_mask >> x) & 1
        earned = 1 if keystone and supply + free > 0 else 0
        row[F_NATURE_HELD] = nature - free + earned
        row[F_TILES] = ncell + 1
        for x in range(NUM_FEATURES):
            out[k, x] = row[x]
