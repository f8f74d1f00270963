"""Numba kernels of the Cascadia candidate view (:mod:`agents.learned.cascadia`): the feature
columns, the candidate turns of a market decision and one feature row per turn by definition
(:func:`list_turns_by_option`, :func:`turn_features_by_turn`: the references of the shared-figure kernels
the policy plays with, :func:`agents.learned.cascadia_listing.list_turns` and
:func:`agents.learned.cascadia_features.turn_features`), and the helpers both sides use.

Feature columns (indices ``F_*``; names and meanings in :data:`agents.learned.cascadia.FEATURES`):
the eleven terms of the greedy turn value, unweighted (``F_CORRIDOR`` .. ``F_NATURE_SPENT``,
computed exactly as :func:`agents.greedy.cascadia.plan_turn` does: the look-ahead of a token on a
hex already placed does not see the new tile, the one of a token on the new hex sees it), then
descriptors of the acting seat's board after the turn's tile and token (``F_TURNS_LEFT`` ..
``F_TILES``). Nothing hidden is read: the refill after the turn is never drawn.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.greedy.cascadia import NATURE_COST, edge_matches, own_turns_after, pattern_count, plan_turn
from envs.cascadia import kernels as K

# ---- feature columns ---------------------------------------------------------------------------
F_CORRIDOR = 0  # corridor gain
F_WILDLIFE = 1  # wildlife gain
F_NATURE_EARNED = 2  # keystone match (with the supply not empty)
F_BEAR_SINGLE = 3
F_ELK_LINE = 4  # open elk axes / 3
F_SALMON_RUN = 5
F_FOX_ROOM = 6
F_HAWK_ROOM = 7
F_EDGE_MATCH = 8
F_OPEN_SPOT = 9
F_NATURE_SPENT = 10
F_TURNS_LEFT = 11
F_TOKENS = 12  # 5 columns, per animal
F_WILD_SCORE = 17  # 5 columns, per animal
F_CORRIDOR_SIZE = 22  # 5 columns, per habitat
F_MAJORITY_GAP = 27  # 5 columns, per habitat
F_EMPTY_SPOTS = 32  # 5 columns, per animal
F_NATURE_HELD = 37
F_TILES = 38
NUM_FEATURES = 39


@njit(cache=True)
def pattern_terms(p, c, w, tiles, tokens, nbr, kind_info, row) -> None:
    """The look-ahead term of animal w on cell c (the token not on the board), unweighted, into
    ``row`` (``F_BEAR_SINGLE`` .. ``F_HAWK_ROOM``): the greedy agent's
    :func:`agents.greedy.cascadia.pattern_count` (elk: open axes / 3)."""
    put_pattern(w, pattern_count(p, c, w, tiles, tokens, nbr, kind_info), row)


@njit(cache=True)
def put_pattern(w, count, row) -> None:
    """Write animal w's look-ahead pattern ``count`` into its column of ``row`` (elk: open axes / 3)."""
    if w == K.BEAR:
        row[F_BEAR_SINGLE] = count
    elif w == K.ELK:
        row[F_ELK_LINE] = count / 3.0
    elif w == K.SALMON:
        row[F_SALMON_RUN] = count
    elif w == K.HAWK:
        row[F_HAWK_ROOM] = count
    else:
        row[F_FOX_ROOM] = count


@njit(cache=True)
def market_options(b):
    """The market options of the seat to move in the turn search's order: int64[n, 3] rows
    (action, tile slot, token slot): each pair, then with a nature token every tile/token choice."""
    p = b.ctl[K.C_CUR]
    opts = np.empty((16, 3), np.int64)
    n = 0
    for i in range(4):
        if b.market[0, i] >= 0:
            opts[n, 0] = K.A_PAIR + i
            opts[n, 1] = i
            opts[n, 2] = i
            n += 1
    if b.pinfo[p, K.P_NATURE] > 0:
        for i in range(4):
            for j in range(4):
                if j != i and b.market[0, i] >= 0:
                    opts[n, 0] = K.A_FREE + 4 * i + j
                    opts[n, 1] = i
                    opts[n, 2] = j
                    n += 1
    return opts[:n]


@njit(cache=True)
def spot_count(mask) -> int:
    """How many animals a tile's wildlife mask takes."""
    n = 0
    for x in range(5):
        n += (mask >> x) & 1
    return n


@njit(cache=True)
def add_row(turns, values, which, row_of, n, s, o, f, a, tile_a, token_a, value) -> int:
    """Append the turn (a, tile_a, token_a) that weight set s plans for market option o and frontier
    hex f, unless an earlier set planned the same there; return the new row count."""
    for s2 in range(s):
        r2 = row_of[s2, o, f]
        if r2 >= 0 and turns[r2, 1] == tile_a and turns[r2, 2] == token_a:
            return n
    row_of[s, o, f] = n
    turns[n, 0] = a
    turns[n, 1] = tile_a
    turns[n, 2] = token_a
    values[n] = value
    which[n] = s
    return n + 1


@njit(cache=True)
def in_set_order(turns, values, which, n, nsets):
    """The first n rows, each weight set's rows together in set order, best value first within a set
    (stable): (turns, values, which)."""
    order = np.empty(n, np.int64)
    m = 0
    for s in range(nsets):
        idx = np.nonzero(which[:n] == s)[0]
        sub = idx[np.argsort(-values[idx], kind="mergesort")]
        order[m:m + sub.shape[0]] = sub
        m += sub.shape[0]
    return turns[order], values[order], which[order]


@njit(cache=True)
def decode_turn(b, turn):
    """A whole turn (market, tile, token action) of the seat to move, read: (market tile slot, 1 if a
    nature token pays for it, tile kind, animal (-1: none), hex, rotation, token hex (-1: none))."""
    a = turn[0]
    if a >= K.A_FREE:
        i = (a - K.A_FREE) // 4
        j = (a - K.A_FREE) % 4
    else:
        i = a - K.A_PAIR
        j = i
    c = (turn[1] - K.A_TILE) // 6
    r = (turn[1] - K.A_TILE) % 6
    t = turn[2] - K.A_TOKEN if K.A_TOKEN <= turn[2] < K.A_RETURN else -1
    return i, 1 if a >= K.A_FREE else 0, b.market[0, i], b.market[1, j], c, r, t


@njit(cache=True)
def others_largest(b, nbr, p, mark):
    """Per habitat, the largest corridor among the seats other than p (-1 solo)."""
    others = np.full(5, -1, np.int32)
    corr = np.zeros(5, np.int32)
    cwork = K.corridor_work()
    for q in range(b.ctl[K.C_PLAYERS]):
        if q != p:
            K.corridor_sizes_into(q, b.edges, b.cells, b.pinfo, nbr, mark, cwork, corr)
            for h in range(5):
                others[h] = max(others[h], corr[h])
    return others


@njit(cache=True)
def list_turns_by_option(b, tb, weight_sets):
    """Candidate turns of a market decision by definition, one greedy ``plan_turn`` per weight set
    and market option (the reference of :func:`agents.learned.cascadia_listing.list_turns`, which
    gives the same from figures computed once per board): (int64[n, 3] turns (market, tile, token
    action; -1 when the pair has no token), float64[n] planned values, int64[n] listing weight set).

    For each weight set (already scaled by ``turn_weights``) the rows are exactly those of
    :func:`agents.search.turn.candidate_turns`: per market option and frontier cell, the best
    rotation and the token target :func:`agents.greedy.cascadia.plan_turn` plans with it, best
    value first (stable). Rows of a later set that an earlier set already lists are left out;
    each set's new rows follow the earlier sets' rows. ``b`` a :class:`envs.cascadia.kernels.CascadiaBoard`,
    ``tb`` its game's :class:`envs.cascadia.kernels.CascadiaTables`."""
    p = b.ctl[K.C_CUR]
    supply = b.ctl[K.C_SUPPLY]
    nfront = b.pinfo[p, K.P_NFRONT]
    opts = market_options(b)
    nopt = opts.shape[0]
    nsets = weight_sets.shape[0]
    cap = max(nsets * nopt * nfront, 1)
    turns = np.empty((cap, 3), np.int64)
    values = np.empty(cap)
    which = np.empty(cap, np.int64)
    row_of = np.full((nsets, max(nopt, 1), max(nfront, 1)), -1, np.int64)
    tile_values = np.empty(K.NUM_ACTIONS)
    token_actions = np.empty(K.NUM_ACTIONS, np.int64)
    n = 0
    for k in range(nsets):
        wts = weight_sets[k]
        for o in range(nopt):
            a = opts[o, 0]
            kind = b.market[0, opts[o, 1]]
            w = b.market[1, opts[o, 2]]
            for f in range(nfront):
                base = K.A_TILE + 6 * b.flist[p, f]
                for r in range(6):
                    tile_values[base + r] = -np.inf
            plan_turn(p, kind, w, b, tb, supply, wts, tile_values, token_actions)
            cost = wts[NATURE_COST] if a >= K.A_FREE else 0.0
            for f in range(nfront):
                base = K.A_TILE + 6 * b.flist[p, f]
                best = -np.inf
                best_r = -1
                for r in range(6):
                    if tile_values[base + r] > best:
                        best = tile_values[base + r]
                        best_r = r
                if best_r < 0:
                    continue
                tile_a = base + best_r
                token_a = token_actions[tile_a] if w >= 0 else -1
                n = add_row(turns, values, which, row_of, n, k, o, f, a, tile_a, token_a, best - cost)
    return in_set_order(turns, values, which, n, nsets)


@njit(cache=True)
def turn_features_by_turn(b, turns, tb, out) -> None:
    """One feature row per turn (``turns``: int64[n, 3], market-phase actions of the seat to
    move) into ``out`` (float32[n, NUM_FEATURES]) by definition, each turn's tile and token put on
    the board and the board measured (the reference of
    :func:`agents.learned.cascadia_features.turn_features`, which gives the same from figures
    computed once per board); ``b`` is left unchanged (``tb`` its game's
    :class:`envs.cascadia.kernels.CascadiaTables`)."""
    nbr, kind_edges, kind_info, tables = tb.nbr, tb.kind_edges, tb.kind_info, tb.tables
    p = b.ctl[K.C_CUR]
    players = b.ctl[K.C_PLAYERS]
    supply = b.ctl[K.C_SUPPLY]
    nature = b.pinfo[p, K.P_NATURE]
    turns_left = own_turns_after(b.ctl)
    tiles = b.tiles.copy()
    edges = b.edges.copy()
    tokens = b.tokens.copy()
    cells = b.cells.copy()
    pinfo = b.pinfo.copy()
    mark = np.zeros(nbr.shape[0], np.int32)
    members = np.empty(K.MAX_CELLS, np.int32)
    work = K.elk_work(K.MAX_CELLS)
    cwork = K.corridor_work()
    queue = np.empty(K.MAX_CELLS, np.int32)
    stats = np.zeros(7, np.int32)
    wild = np.zeros(7, np.int32)
    K.wildlife_stats_into(p, tokens, cells, pinfo, nbr, tables, mark, members, work, stats)
    largest = np.zeros(5, np.int32)
    K.corridor_sizes_into(p, edges, cells, pinfo, nbr, mark, cwork, largest)
    others = others_largest(b, nbr, p, mark)
    corr = np.zeros(5, np.int32)
    row = np.zeros(NUM_FEATURES)
    for k in range(turns.shape[0]):
        row[:] = 0.0
        i, free, kind, w, c, r, t = decode_turn(b, turns[k])
        # the greedy terms, on the board before the turn
        row[F_CORRIDOR] = K.corridor_gain(p, c, kind, r, edges, nbr, kind_edges, largest, mark, queue)
        row[F_EDGE_MATCH] = edge_matches(p, c, kind, r, edges, nbr, kind_edges)
        row[F_NATURE_SPENT] = free
        keystone = False
        if t >= 0:
            if t == c:
                tiles[p, c] = kind  # the look-ahead of a token on the new hex sees it
            row[F_WILDLIFE] = K.token_gain_into(p, t, w, tokens, nbr, tables, stats, mark, members, work)
            pattern_terms(p, t, w, tiles, tokens, nbr, kind_info, row)
            keystone = kind_info[tiles[p, t], 1] == w
            if t == c:
                tiles[p, c] = -1
            if keystone and supply > 0:
                row[F_NATURE_EARNED] = 1.0
        if t != c:  # the new hex stays empty: a spot per animal it takes
            mask = kind_info[kind, 0]
            for x in range(5):
                row[F_OPEN_SPOT] += (mask >> x) & 1
        # the board after the tile and the token
        ncell = pinfo[p, K.P_NCELLS]
        tiles[p, c] = kind
        for d in range(6):
            edges[p, c, d] = kind_edges[kind, r, d]
        cells[p, ncell] = c
        pinfo[p, K.P_NCELLS] = ncell + 1
        if t >= 0:
            tokens[p, t] = w
        row[F_TURNS_LEFT] = turns_left
        K.wildlife_stats_into(p, tokens, cells, pinfo, nbr, tables, mark, members, work, wild)
        K.corridor_sizes_into(p, edges, cells, pinfo, nbr, mark, cwork, corr)
        for x in range(5):
            row[F_WILD_SCORE + x] = wild[x]
            row[F_CORRIDOR_SIZE + x] = corr[x]
            if players > 1:
                row[F_MAJORITY_GAP + x] = corr[x] - others[x]
        for m in range(ncell + 1):
            cell = cells[p, m]
            if tokens[p, cell] >= 0:
                row[F_TOKENS + tokens[p, cell]] += 1.0
            else:
                mask = kind_info[tiles[p, cell], 0]
                for x in range(5):
                    row[F_EMPTY_SPOTS + x] += (mask >> x) & 1
        earned = 1 if keystone and supply + free > 0 else 0
        row[F_NATURE_HELD] = nature - free + earned
        row[F_TILES] = ncell + 1
        # undo
        if t >= 0:
            tokens[p, t] = -1
        tiles[p, c] = -1
        for d in range(6):
            edges[p, c, d] = -1
        pinfo[p, K.P_NCELLS] = ncell
        for x in range(NUM_FEATURES):
            out[k, x] = row[x]
