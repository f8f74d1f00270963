"""The candidate turns of a Cascadia market decision with the work the listing presets and market
options share done once (:func:`list_turns`): the same rows, values and order as the listing by
definition, one greedy :func:`agents.greedy.cascadia.plan_turn` per weight set and market option
(:func:`agents.learned.cascadia_kernels.list_turns_by_option`, the reference it is tested against).

What no weight touches is computed once per board, as the greedy market choice
(:func:`agents.greedy.cascadia.market_plans`) does for one weight set: the corridors labelled, each
market tile's corridor gain and edge matches per frontier hex and rotation, and each market animal's
wildlife gain and look-ahead pattern count on every frontier hex and every empty hex already placed.
Each weight set then only adds weighted terms, in the order :func:`plan_turn` adds them (so every
value is bit for bit the same).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.greedy.cascadia import (
    BEAR_SINGLE,
    EDGE_MATCH,
    ELK_LINE,
    FOX_ROOM,
    HAWK_ROOM,
    NATURE_COST,
    NATURE_GAIN,
    OPEN_SPOT,
    SALMON_RUN,
    _board_figures,
    corridor_components,
    corridor_gain_labelled,
    edge_matches,
    pattern_count,
)
from agents.learned.cascadia_kernels import add_row, in_set_order, market_options, spot_count
from envs.cascadia import kernels as K


@njit(cache=True)
def pattern_units(weights):
    """float64[5]: the weight of one unit of each animal's look-ahead pattern count (elk: a third)."""
    units = np.empty(5)
    units[K.BEAR] = weights[BEAR_SINGLE]
    units[K.ELK] = weights[ELK_LINE] / 3.0
    units[K.SALMON] = weights[SALMON_RUN]
    units[K.HAWK] = weights[HAWK_ROOM]
    units[K.FOX] = weights[FOX_ROOM]
    return units


@njit(cache=True)
def token_value(gain, count, unit, keystone, nature_gain) -> float:
    """A token's planned value from its wildlife gain and pattern count, summed as the greedy
    planner sums them (the pattern one unit at a time, then the keystone's nature token)."""
    v = 0.0 + gain
    bonus = 0.0
    for _ in range(count):
        bonus += unit
    v += bonus
    if keystone:
        v += nature_gain
    return v


@njit(cache=True)
def _market_animals(b):
    """bool[5]: the animals on the market's tokens."""
    seen = np.zeros(5, np.bool_)
    for j in range(4):
        if b.market[1, j] >= 0:
            seen[b.market[1, j]] = True
    return seen


@njit(cache=True)
def _token_tables(b, tb, p, animals, fig):
    """Weight-free token figures of seat p for each market animal: on every frontier hex (wildlife
    gain, pattern count) and on every empty hex already placed that takes it (gain, count, whether
    the hex is its keystone, whether it takes the animal at all)."""
    tiles, tokens, cells, flist, pinfo = b.tiles, b.tokens, b.cells, b.flist, b.pinfo
    nbr, kind_info, tables = tb.nbr, tb.kind_info, tb.tables
    mark, members, stats, work = fig
    nfront = pinfo[p, K.P_NFRONT]
    ncell = pinfo[p, K.P_NCELLS]
    new_gain = np.zeros((5, max(nfront, 1)), np.int64)
    new_count = np.zeros((5, max(nfront, 1)), np.int64)
    old_ok = np.zeros((5, max(ncell, 1)), np.bool_)
    old_gain = np.zeros((5, max(ncell, 1)), np.int64)
    old_count = np.zeros((5, max(ncell, 1)), np.int64)
    old_key = np.zeros((5, max(ncell, 1)), np.bool_)
    for w in range(5):
        if not animals[w]:
            continue
        for f in range(nfront):
            c = flist[p, f]
            new_gain[w, f] = K.token_gain_into(p, c, w, tokens, nbr, tables, stats, mark, members, work)
            new_count[w, f] = pattern_count(p, c, w, tiles, tokens, nbr, kind_info)
        for k in range(ncell):
            c = cells[p, k]
            if tokens[p, c] < 0 and (kind_info[tiles[p, c], 0] >> w) & 1:
                old_ok[w, k] = True
                old_gain[w, k] = K.token_gain_into(p, c, w, tokens, nbr, tables, stats, mark, members, work)
                old_count[w, k] = pattern_count(p, c, w, tiles, tokens, nbr, kind_info)
                old_key[w, k] = kind_info[tiles[p, c], 1] == w
    return new_gain, new_count, old_ok, old_gain, old_count, old_key


@njit(cache=True)
def _placements(b, tb, p):
    """Weight-free placement figures of seat p: per market tile, frontier hex and rotation, the
    corridor gain and the edges matched (int64[4, fronts, 6] each)."""
    edges, cells, flist, pinfo, market = b.edges, b.cells, b.flist, b.pinfo, b.market
    nbr, kind_edges, kind_info = tb.nbr, tb.kind_edges, tb.kind_info
    nfront = pinfo[p, K.P_NFRONT]
    comp = np.empty((nbr.shape[0], 5), np.int32)
    comp_size = np.empty(5 * K.MAX_CELLS, np.int32)
    largest = np.zeros(5, np.int32)
    corridor_components(p, edges, cells, pinfo, nbr, comp, comp_size, largest)
    roots = np.empty(6, np.int32)
    gain = np.zeros((4, max(nfront, 1), 6), np.int64)
    matched = np.zeros((4, max(nfront, 1), 6), np.int64)
    for i in range(4):
        kind = market[0, i]
        if kind < 0:
            continue
        for f in range(nfront):
            c = flist[p, f]
            for r in range(int(kind_info[kind, 2])):
                gain[i, f, r] = corridor_gain_labelled(p, c, kind, r, edges, nbr, kind_edges, largest, comp,
                                                       comp_size, roots)
                matched[i, f, r] = edge_matches(p, c, kind, r, edges, nbr, kind_edges)
    return gain, matched


@njit(cache=True)
def list_turns(b, tb, weight_sets):
    """Candidate turns of a market decision: (int64[n, 3] turns (market, tile, token action; -1
    when the pair has no token), float64[n] planned values, int64[n] listing weight set), exactly
    :func:`agents.learned.cascadia_kernels.list_turns_by_option`'s (see there for the rows and
    their order), from figures computed once per board. ``b`` a
    :class:`envs.cascadia.kernels.CascadiaBoard`, ``tb`` its game's
    :class:`envs.cascadia.kernels.CascadiaTables`, ``weight_sets`` float64[sets, weights] already
    scaled by ``turn_weights``."""
    p = b.ctl[K.C_CUR]
    supply = b.ctl[K.C_SUPPLY]
    flist, pinfo, market = b.flist, b.pinfo, b.market
    kind_info = tb.kind_info
    nfront = pinfo[p, K.P_NFRONT]
    ncell = pinfo[p, K.P_NCELLS]
    opts = market_options(b)
    nopt = opts.shape[0]
    nsets = weight_sets.shape[0]
    fig = _board_figures(p, b.tokens, b.cells, pinfo, tb.nbr, tb.tables)
    gain, matched = _placements(b, tb, p)
    animals = _market_animals(b)
    new_gain, new_count, old_ok, old_gain, old_count, old_key = _token_tables(b, tb, p, animals, fig)
    cap = max(nsets * nopt * nfront, 1)
    turns = np.empty((cap, 3), np.int64)
    values = np.empty(cap)
    which = np.empty(cap, np.int64)
    row_of = np.full((nsets, max(nopt, 1), max(nfront, 1)), -1, np.int64)
    else_value = np.zeros(5)
    else_action = np.full(5, K.A_RETURN, np.int64)
    new_value = np.zeros((5, max(nfront, 1)))
    n = 0
    for s in range(nsets):
        wts = weight_sets[s]
        units = pattern_units(wts)
        for w in range(5):  # each animal's best hex already placed (0: the bag), and its new-hex values
            else_value[w] = 0.0
            else_action[w] = K.A_RETURN
            for k in range(ncell):
                if old_ok[w, k]:
                    v = token_value(old_gain[w, k], old_count[w, k], units[w], old_key[w, k] and supply > 0,
                                    wts[NATURE_GAIN])
                    if v > else_value[w]:
                        else_value[w] = v
                        else_action[w] = K.A_TOKEN + b.cells[p, k]
            for f in range(nfront):
                new_value[w, f] = token_value(new_gain[w, f], new_count[w, f], units[w], False, 0.0)
        for o in range(nopt):
            a = opts[o, 0]
            i = opts[o, 1]
            kind = market[0, i]
            w = market[1, opts[o, 2]]
            cost = wts[NATURE_COST] if a >= K.A_FREE else 0.0
            mask = kind_info[kind, 0]
            spots_all = spot_count(mask)
            new_ok = w >= 0 and (mask >> w) & 1
            keystone = new_ok and kind_info[kind, 1] == w and supply > 0
            nrot = int(kind_info[kind, 2])
            for f in range(nfront):
                c = flist[p, f]
                token_v = else_value[w] if w >= 0 else 0.0
                token_a = else_action[w] if w >= 0 else K.A_RETURN
                if new_ok:
                    v = new_value[w, f]
                    if keystone:
                        v += wts[NATURE_GAIN]
                    if v > token_v:
                        token_v = v
                        token_a = K.A_TOKEN + c
                spots = spots_all if token_a != K.A_TOKEN + c else 0
                best = -np.inf
                best_r = -1
                for r in range(nrot):
                    total = (gain[i, f, r] + wts[EDGE_MATCH] * matched[i, f, r] + wts[OPEN_SPOT] * spots
                             + token_v)
                    if total > best:
                        best = total
                        best_r = r
                if best_r < 0:
                    continue
                tile_a = K.A_TILE + 6 * c + best_r
                n = add_row(turns, values, which, row_of, n, s, o, f, a, tile_a, token_a if w >= 0 else -1,
                            best - cost)
    return in_set_order(turns, values, which, n, nsets)
