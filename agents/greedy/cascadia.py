"""A greedy Cascadia agent: the best whole turn by immediate score change plus cheap look-ahead.

For every market option (each pair, and with a nature token every tile/token combination) the
agent plans the turn in one numba kernel: every frontier position x rotation for the tile and
every matching empty hex (or the bag) for the token, scored with the incremental kernels of
:mod:`envs.cascadia.kernels` (no board is rescored). The value of a turn is

* the immediate score change: corridor gain (``corridor_gain``) + wildlife gain (``token_gain``)
  + 1 per nature token earned on a keystone;
* look-ahead features (weights in :data:`DEFAULT_WEIGHTS`, all overridable as options):
  ``bear_single``: a lone bear with an empty bear hex beside it that touches no other bear (a pair
  to come); ``elk_line``: per axis, an elk line through the token that an empty elk hex can
  extend; ``salmon_run``: a salmon with at most one salmon neighbour and an empty salmon hex next
  to it; ``fox_room``: per empty neighbour hex of a fox (more animals to see); ``hawk_room``:
  a lone hawk keeps its neighbours free of hawks; ``edge_match``: per edge of the new tile that
  matches its neighbour's habitat (corridors that will join later); ``open_spot``: per animal an
  empty new tile can still take (future token spots);
* nature-token thrift: spending a token costs ``nature_cost`` (its end-game point plus the
  flexibility it keeps); earning one is worth ``nature_gain``;
* ``endgame_turns`` H (0: off): in a seat's last H turns the look-ahead fades out (with t more
  turns to come, every look-ahead weight is scaled by t / H and the nature weights move toward
  the token's end-game point), so with H = 1 its last turn is valued by the exact score change.

``preset=selfplay`` (:data:`PRESETS`) sets the weights tuned on 4-player greedy self-play (seeds
0-999, base score): ``bear_single`` 3.375, ``salmon_run`` and ``open_spot`` 0, the rest as the
defaults; ``meeplelab tune-greedy`` reproduces it. ``preset=endgame`` is ``selfplay`` with
``endgame_turns`` 1. Their measured gains are in docs/search.md. Single options override a preset.

``free_redraw`` 1 (0 by default and in every preset) takes the free three-of-a-kind redraw whenever
the rules offer it, before the turn is chosen; the nature-token redraws are never used. The agent is
deterministic: ``rng`` only breaks exact ties (it is not used; the first best wins).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from agents.explain import ranked_values
from agents.greedy import check_game, parse_weights
from envs.cascadia import kernels as K
from envs.core.errors import ConfigError
from envs.core.game import Game
from envs.core.rng import derive_seed, randint

DEFAULT_WEIGHTS: dict[str, float] = {
    "bear_single": 1.5,
    "elk_line": 0.9,
    "salmon_run": 0.9,
    "fox_room": 0.25,
    "hawk_room": 0.3,
    "edge_match": 0.35,
    "open_spot": 0.15,
    "nature_cost": 1.4,
    "nature_gain": 1.3,
    "endgame_turns": 0.0,
    "free_redraw": 0.0,
}
#: tuned for self-play: coordinate search (x0, x0.5, x1.5, x2 per weight, two rounds) on 4-player
#: greedy games in all seats, seeds 0-999, mean base score (see :data:`PRESETS`)
SELFPLAY_WEIGHTS: dict[str, float] = dict(DEFAULT_WEIGHTS, bear_single=3.375, salmon_run=0.0, open_spot=0.0)
#: the self-play weights with the exact score change on each seat's last turn (``endgame_turns`` 1)
ENDGAME_WEIGHTS: dict[str, float] = dict(SELFPLAY_WEIGHTS, endgame_turns=1.0)
#: named weight sets: ``greedy:preset=NAME`` and the turn search's ``greedy=NAME``
PRESETS: dict[str, dict[str, float]] = {"default": DEFAULT_WEIGHTS, "selfplay": SELFPLAY_WEIGHTS,
                                        "endgame": ENDGAME_WEIGHTS}
W_NAMES = tuple(DEFAULT_WEIGHTS)
(BEAR_SINGLE, ELK_LINE, SALMON_RUN, FOX_ROOM, HAWK_ROOM, EDGE_MATCH, OPEN_SPOT, NATURE_COST, NATURE_GAIN,
 ENDGAME_TURNS, FREE_REDRAW) = range(11)


@njit(cache=True)
def own_turns_after(ctl) -> int:
    """How many more turns the seat to move gets after this one (multiplayer: each turn draws one
    tile and the game ends when none is left; solo: two per turn, it ends below two)."""
    left = ctl[K.C_STACK_LEN] - ctl[K.C_STACK_POS]
    return left // (2 if ctl[K.C_PLAYERS] == 1 else ctl[K.C_PLAYERS])


@njit(cache=True)
def turn_weights(weights, ctl):
    """The weights for the seat to move: ``weights`` itself, except in its last
    ``endgame_turns`` = H > 0 turns, where with t more turns to come every look-ahead weight is
    scaled by t / H and the nature-token weights move toward the token's end-game point (1) by
    1 - t / H (the last turn: the exact score change)."""
    horizon = weights[ENDGAME_TURNS]
    if horizon <= 0.0:
        return weights
    scale = own_turns_after(ctl) / horizon
    if scale >= 1.0:
        return weights
    out = weights * scale
    out[NATURE_COST] += 1.0 - scale
    out[NATURE_GAIN] += 1.0 - scale
    out[ENDGAME_TURNS] = horizon
    if weights.shape[0] > FREE_REDRAW:
        out[FREE_REDRAW] = weights[FREE_REDRAW]
    return out


@njit(cache=True, inline="always")
def takes_free_redraw(board, weights) -> bool:
    """Whether the seat to move takes the free three-of-a-kind redraw now: ``free_redraw`` > 0 and
    the rules offer it (:func:`envs.cascadia.kernels.market_options`). Weight vectors saved before
    the weight existed (10 entries) never take it."""
    if weights.shape[0] <= FREE_REDRAW or weights[FREE_REDRAW] <= 0.0:
        return False
    three = K.market_options(board.pinfo, board.market, board.bag, board.ctl)[5]
    return three == 1


@njit(cache=True)
def _allows(tiles, tokens, kind_info, p, c, w) -> bool:
    """Cell c of seat p is an empty hex that can take animal w."""
    if c < 0 or tiles[p, c] < 0 or tokens[p, c] >= 0:
        return False
    return (kind_info[tiles[p, c], 0] >> w) & 1 == 1


@njit(cache=True)
def pattern_count(p, c, w, tiles, tokens, nbr, kind_info) -> int:
    """The look-ahead pattern of animal w on cell c (the token not on the board), counted: 1 or 0
    for ``bear_single`` (a lone bear with an empty bear hex beside it touching no other bear),
    ``salmon_run`` (at most one salmon neighbour and an empty salmon hex next to it) and
    ``hawk_room`` (no hawk neighbour); the open axes for ``elk_line`` (each weighs a third); the
    empty neighbour hexes for ``fox_room``."""
    if w == K.BEAR:
        for d in range(6):
            nb = nbr[c, d]
            if nb >= 0 and tokens[p, nb] == K.BEAR:
                return 0
        for d in range(6):
            nb = nbr[c, d]
            if _allows(tiles, tokens, kind_info, p, nb, K.BEAR):
                clear = True
                for e in range(6):
                    nb2 = nbr[nb, e]
                    if nb2 >= 0 and nb2 != c and tokens[p, nb2] == K.BEAR:
                        clear = False
                if clear:
                    return 1
        return 0
    count = 0
    if w == K.ELK:
        for a in range(3):
            fwd = nbr[c, a]
            back = nbr[c, a + 3]
            fwd_elk = fwd >= 0 and tokens[p, fwd] == K.ELK
            back_elk = back >= 0 and tokens[p, back] == K.ELK
            fwd_open = _allows(tiles, tokens, kind_info, p, fwd, K.ELK)
            back_open = _allows(tiles, tokens, kind_info, p, back, K.ELK)
            if (
                (fwd_open and not back_elk)
                or (back_open and not fwd_elk)
                or (fwd_elk and back_open)
                or (back_elk and fwd_open)
            ):
                count += 1
    elif w == K.SALMON:
        for d in range(6):
            nb = nbr[c, d]
            if nb >= 0 and tokens[p, nb] == K.SALMON:
                count += 1
        if count > 1:
            return 0
        for d in range(6):
            if _allows(tiles, tokens, kind_info, p, nbr[c, d], K.SALMON):
                return 1
        return 0
    elif w == K.HAWK:
        for d in range(6):
            nb = nbr[c, d]
            if nb >= 0 and tokens[p, nb] == K.HAWK:
                return 0
        return 1
    else:
        for d in range(6):
            nb = nbr[c, d]
            if nb >= 0 and tiles[p, nb] >= 0 and tokens[p, nb] < 0:
                count += 1
    return count


@njit(cache=True)
def _pattern_bonus(p, c, w, tiles, tokens, nbr, kind_info, weights) -> float:
    """Look-ahead value of animal w on cell c (the token is not on the board): its
    :func:`pattern_count` times the weight, added one unit at a time (bit for bit the sums the
    weights were tuned with)."""
    count = pattern_count(p, c, w, tiles, tokens, nbr, kind_info)
    if w == K.BEAR:
        unit = weights[BEAR_SINGLE]
    elif w == K.ELK:
        unit = weights[ELK_LINE] / 3.0
    elif w == K.SALMON:
        unit = weights[SALMON_RUN]
    elif w == K.HAWK:
        unit = weights[HAWK_ROOM]
    else:
        unit = weights[FOX_ROOM]
    v = 0.0
    for _ in range(count):
        v += unit
    return v


class Figures(NamedTuple):
    """Seat p's board figures for the incremental gains, from :func:`_board_figures`: ``mark``
    int32[cells] flood marks (all zero between uses), ``members`` int32[MAX_CELLS] a group's cells,
    ``stats`` int32[7] :func:`envs.cascadia.kernels.wildlife_stats` of the board (bear pairs, lonely
    hawks, ...), ``work`` the elk scratch (:func:`envs.cascadia.kernels.elk_work`)."""

    mark: np.ndarray
    members: np.ndarray
    stats: np.ndarray
    work: np.ndarray


@njit(cache=True)
def _token_value(p, c, w, tiles, tokens, tb, fig, supply, weights, kind) -> float:
    """Value of animal w on the empty hex c of seat p, the hex showing tile ``kind``: wildlife gain,
    look-ahead, and the nature token earned on a matching keystone (``tb`` the game's
    :class:`envs.cascadia.kernels.CascadiaTables`, ``fig`` the board's :class:`Figures`). The
    hottest helper of the planner: it takes the two state arrays it reads, not the whole board
    (each array argument of a compiled call is reference counted)."""
    nbr, kind_info = tb.nbr, tb.kind_info
    v = K.token_gain_into(p, c, w, tokens, nbr, tb.tables, fig.stats, fig.mark, fig.members, fig.work)
    v += _pattern_bonus(p, c, w, tiles, tokens, nbr, kind_info, weights)
    if kind_info[kind, 1] == w and supply > 0:
        v += weights[NATURE_GAIN]
    return v


@njit(cache=True)
def _board_figures(p, tokens, cells, pinfo, nbr, tables):
    """Scratch and current wildlife figures of seat p's board for the incremental gains, a
    :class:`Figures` record (mark, members, wildlife stats as
    :func:`envs.cascadia.kernels.wildlife_stats`, elk scratch). The caller adds the largest
    corridor per habitat (``corridor_sizes``, or the labels of :func:`corridor_components`, which
    give it too)."""
    mark = np.zeros(nbr.shape[0], dtype=np.int32)
    members = np.empty(K.MAX_CELLS, dtype=np.int32)
    stats = np.zeros(7, dtype=np.int32)
    K.wildlife_stats(p, tokens, cells, pinfo, nbr, tables, mark, stats)
    return Figures(mark, members, stats, K.elk_work(K.MAX_CELLS))


@njit(cache=True)
def corridor_components(p, edges, cells, pinfo, nbr, comp, size, largest) -> None:
    """Label seat p's corridors once: ``comp[cell, h]`` receives the root node of the habitat-h
    corridor through that placed cell, ``size[root]`` its size in cells (``size``: int32 of
    5 * MAX_CELLS) and ``largest[h]`` the largest habitat-h corridor, as
    :func:`envs.cascadia.kernels.corridor_sizes` gives it (one union-find,
    :func:`envs.cascadia.kernels.corridor_union`, for both)."""
    work = K.corridor_work()
    index = np.empty(nbr.shape[0], dtype=np.int32)
    K.corridor_union(p, edges, cells, pinfo, nbr, index, work)
    largest[:] = 0
    for k in range(pinfo[p, K.P_NCELLS]):
        c = cells[p, k]
        shown = 0
        for d in range(6):
            shown |= 1 << edges[p, c, d]
        for h in range(5):
            root = K._root(work[0], 5 * k + h)
            comp[c, h] = root
            size[root] = work[1, root]
            if (shown >> h) & 1 and size[root] > largest[h]:
                largest[h] = size[root]


@njit(cache=True, inline="always")
def corridor_joined(p, c, kind, r, h, edges, nbr, kind_edges, comp, size, roots) -> int:
    """Cells of the habitat-h corridor that ``kind`` placed at c with rotation r (showing h) would
    belong to: itself and the distinct corridors its matching habitat-h edges touch, from the labels
    of :func:`corridor_components` (``roots``: int32[6] scratch)."""
    joined = 1
    nroots = 0
    for e in range(6):
        nb = nbr[c, e]
        if kind_edges[kind, r, e] != h or nb < 0 or edges[p, nb, (e + 3) % 6] != h:
            continue
        root = comp[nb, h]
        seen = False
        for i in range(nroots):
            if roots[i] == root:
                seen = True
        if not seen:
            roots[nroots] = root
            nroots += 1
            joined += size[root]
    return joined


@njit(cache=True)
def corridor_gain_labelled(p, c, kind, r, edges, nbr, kind_edges, largest, comp, size, roots) -> int:
    """:func:`envs.cascadia.kernels.corridor_gain` from the labels of :func:`corridor_components`:
    each habitat of the new tile joins the distinct corridors its matching edges touch, so no
    corridor is flooded (``roots``: int32[6] scratch)."""
    gain = 0
    done = 0
    for d in range(6):
        h = kind_edges[kind, r, d]
        if (done >> h) & 1:
            continue
        done |= 1 << h
        joined = corridor_joined(p, c, kind, r, h, edges, nbr, kind_edges, comp, size, roots)
        if joined > largest[h]:
            gain += joined - largest[h]
    return gain


@njit(cache=True)
def edge_matches(p, c, kind, r, edges, nbr, kind_edges) -> int:
    """Edges of ``kind`` at cell c with rotation r that match a placed neighbour's habitat."""
    matched = 0
    for d in range(6):
        nb = nbr[c, d]
        if nb >= 0 and edges[p, nb, 0] >= 0 and edges[p, nb, (d + 3) % 6] == kind_edges[kind, r, d]:
            matched += 1
    return matched


@njit(cache=True)
def _best_placed_hex(p, w, tiles, tokens, cells, pinfo, tb, fig, supply, weights):
    """Best (value, token action) for animal w on a hex already placed; (0, the bag) if none is
    worth more than 0."""
    kind_info = tb.kind_info
    best = 0.0
    action = K.A_RETURN
    for k in range(pinfo[p, K.P_NCELLS]):
        c = cells[p, k]
        if tokens[p, c] < 0 and (kind_info[tiles[p, c], 0] >> w) & 1:
            v = _token_value(p, c, w, tiles, tokens, tb, fig, supply, weights, tiles[p, c])
            if v > best:
                best = v
                action = K.A_TOKEN + c
    return best, action


@njit(cache=True)
def plan_turn(p, kind, w, board, tb, supply, weights, tile_values=None, token_actions=None):
    """Best (value, tile action, token action) for tile ``kind`` and animal ``w`` (w < 0: none) on
    ``board`` (a :class:`envs.cascadia.kernels.CascadiaBoard`; ``tb`` its game's
    :class:`envs.cascadia.kernels.CascadiaTables`). ``tile_values`` (float64[num_actions],
    optional) receives the planned value of every placement and ``token_actions``
    (int64[num_actions], optional) the token action planned with it."""
    tiles, edges, tokens, cells = board.tiles, board.edges, board.tokens, board.cells
    flist, pinfo = board.flist, board.pinfo
    nbr, kind_edges, kind_info = tb.nbr, tb.kind_edges, tb.kind_info
    fig = _board_figures(p, tokens, cells, pinfo, nbr, tb.tables)
    mark = fig.mark
    queue = np.empty(K.MAX_CELLS, dtype=np.int32)
    largest = np.zeros(5, dtype=np.int32)
    K.corridor_sizes(p, edges, cells, pinfo, nbr, mark, largest)
    best_else = 0.0
    best_else_action = K.A_RETURN
    if w >= 0:
        best_else, best_else_action = _best_placed_hex(p, w, tiles, tokens, cells, pinfo, tb, fig, supply,
                                                       weights)
    new_ok = w >= 0 and (kind_info[kind, 0] >> w) & 1
    nrot = int(kind_info[kind, 2])
    best = -1e9
    best_tile = -1
    best_token = K.A_RETURN
    for f in range(pinfo[p, K.P_NFRONT]):
        c = flist[p, f]
        token_v = best_else
        token_a = best_else_action
        if new_ok:
            tiles[p, c] = kind  # so the pattern look-ahead sees the new hex as part of the area
            v = _token_value(p, c, w, tiles, tokens, tb, fig, supply, weights, kind)
            tiles[p, c] = -1
            if v > token_v:
                token_v = v
                token_a = K.A_TOKEN + c
        spots = 0
        if token_a != K.A_TOKEN + c:
            mask = kind_info[kind, 0]
            for x in range(5):
                spots += (mask >> x) & 1
        for r in range(nrot):
            v = K.corridor_gain(p, c, kind, r, edges, nbr, kind_edges, largest, mark, queue)
            matched = edge_matches(p, c, kind, r, edges, nbr, kind_edges)
            total = v + weights[EDGE_MATCH] * matched + weights[OPEN_SPOT] * spots + token_v
            if tile_values is not None:
                tile_values[K.A_TILE + 6 * c + r] = total
            if token_actions is not None:
                token_actions[K.A_TILE + 6 * c + r] = token_a
            if total > best:
                best = total
                best_tile = K.A_TILE + 6 * c + r
                best_token = token_a
    return best, best_tile, best_token


@njit(cache=True)
def market_values(p, board, tb, supply, weights) -> np.ndarray:
    """Planned value of taking tile i with token j (j != i costs a nature token); -1e9 if unavailable
    (:func:`market_plans` without the planned placements)."""
    return market_plans(p, board, tb, supply, weights, np.empty((4, 4), dtype=np.int64))


@njit(cache=True)
def market_plans(p, board, tb, supply, weights, best_tiles) -> np.ndarray:
    """Planned value of taking tile i with token j (j != i costs a nature token); -1e9 if unavailable,
    for seat p on ``board`` (a :class:`envs.cascadia.kernels.CascadiaBoard`; ``tb`` its game's
    :class:`envs.cascadia.kernels.CascadiaTables`). ``best_tiles[i, j]`` receives the tile action
    :func:`plan_turn` plans with that option (-1 if none).

    Equal, bit for bit, to one :func:`plan_turn` per option (:func:`market_values_reference`), but
    the work the options share is done once: the board's wildlife and corridor figures (its
    corridors labelled, so a placement's corridor gain floods nothing), each tile's placements
    (corridor gain and edge matches per frontier hex and rotation), each animal's best hex
    already on the board and its value on each frontier hex (the look-ahead never reads the new
    hex's own tile, so none is put down). A nature token in hand (16 options) is the common case:
    about 80% of a 4-player greedy game's market decisions. ``bench agents`` times both kernels."""
    tiles, edges, tokens, cells, flist, pinfo, market = (board.tiles, board.edges, board.tokens, board.cells,
                                                         board.flist, board.pinfo, board.market)
    nbr, kind_edges, kind_info, tables = tb.nbr, tb.kind_edges, tb.kind_info, tb.tables
    fig = _board_figures(p, tokens, cells, pinfo, nbr, tables)
    mark, members, stats, work = fig
    values = np.full((4, 4), -1e9)
    free = pinfo[p, K.P_NATURE] > 0
    nfront = pinfo[p, K.P_NFRONT]
    else_value = np.zeros(5)  # per animal: best value on a hex already placed (0: the bag)
    else_action = np.full(5, K.A_RETURN, dtype=np.int64)
    else_done = np.zeros(5, dtype=np.bool_)
    new_value = np.empty((5, max(nfront, 1)))  # per animal and frontier hex, before the keystone bonus
    new_done = np.zeros(5, dtype=np.bool_)
    placed = np.empty((max(nfront, 1), 6))  # corridor gain + edge matches per frontier hex and rotation
    comp = np.empty((nbr.shape[0], 5), dtype=np.int32)
    comp_size = np.empty(5 * K.MAX_CELLS, dtype=np.int32)
    largest = np.zeros(5, dtype=np.int32)
    corridor_components(p, edges, cells, pinfo, nbr, comp, comp_size, largest)
    roots = np.empty(6, dtype=np.int32)
    for i in range(4):
        kind = market[0, i]
        if kind < 0:
            continue
        nrot = int(kind_info[kind, 2])
        for f in range(nfront):
            c = flist[p, f]
            for r in range(nrot):
                v = corridor_gain_labelled(p, c, kind, r, edges, nbr, kind_edges, largest, comp, comp_size,
                                           roots)
                matched = edge_matches(p, c, kind, r, edges, nbr, kind_edges)
                placed[f, r] = v + weights[EDGE_MATCH] * matched
        mask = kind_info[kind, 0]
        spots_all = 0
        for x in range(5):
            spots_all += (mask >> x) & 1
        for j in range(4):
            if j != i and not free:
                continue
            w = market[1, j]
            best_else = 0.0
            best_else_action = K.A_RETURN
            if w >= 0:
                if not else_done[w]:
                    else_value[w], else_action[w] = _best_placed_hex(p, w, tiles, tokens, cells, pinfo, tb,
                                                                     fig, supply, weights)
                    else_done[w] = True
                best_else = else_value[w]
                best_else_action = else_action[w]
            new_ok = w >= 0 and (mask >> w) & 1
            if new_ok and not new_done[w]:
                for f in range(nfront):
                    c = flist[p, f]
                    v = K.token_gain_into(p, c, w, tokens, nbr, tables, stats, mark, members, work)
                    v += _pattern_bonus(p, c, w, tiles, tokens, nbr, kind_info, weights)
                    new_value[w, f] = v
                new_done[w] = True
            keystone = new_ok and kind_info[kind, 1] == w and supply > 0
            best = -1e9
            best_tile = -1
            for f in range(nfront):
                c = flist[p, f]
                token_v = best_else
                token_a = best_else_action
                if new_ok:
                    v = new_value[w, f]
                    if keystone:
                        v += weights[NATURE_GAIN]
                    if v > token_v:
                        token_v = v
                        token_a = K.A_TOKEN + c
                spots = spots_all if token_a != K.A_TOKEN + c else 0
                for r in range(nrot):
                    total = placed[f, r] + weights[OPEN_SPOT] * spots + token_v
                    if total > best:
                        best = total
                        best_tile = K.A_TILE + 6 * c + r
            values[i, j] = best if j == i else best - weights[NATURE_COST]
            best_tiles[i, j] = best_tile
    return values


@njit(cache=True)
def market_values_reference(p, board, tb, supply, weights) -> np.ndarray:
    """:func:`market_values` by its definition: one :func:`plan_turn` per market option (the plain
    reference the shared-work kernel is tested against)."""
    market = board.market
    values = np.full((4, 4), -1e9)
    for i in range(4):
        if market[0, i] < 0:
            continue
        for j in range(4):
            if j != i and board.pinfo[p, K.P_NATURE] == 0:
                continue
            v, _, _ = plan_turn(p, market[0, i], market[1, j], board, tb, supply, weights)
            values[i, j] = v if j == i else v - weights[NATURE_COST]
    return values


@njit(cache=True, inline="always")
def choose_market(p, board, tb, supply, weights) -> int:
    """The market action (a pair, or a nature-token pick) with the best planned turn."""
    action, _ = choose_market_planned(p, board, tb, supply, weights)
    return action


@njit(cache=True, inline="always")
def choose_market_planned(p, board, tb, supply, weights):
    """(:func:`choose_market`'s action, the tile action :func:`plan_turn` plans with it)."""
    tiles_planned = np.empty((4, 4), dtype=np.int64)
    values = market_plans(p, board, tb, supply, weights, tiles_planned)
    best = -1e9
    best_action = K.A_PAIR
    planned = tiles_planned[0, 0]
    for i in range(4):
        if values[i, i] > best:
            best = values[i, i]
            best_action = K.A_PAIR + i
            planned = tiles_planned[i, i]
    for i in range(4):
        for j in range(4):
            if j != i and values[i, j] > best:
                best = values[i, j]
                best_action = K.A_FREE + 4 * i + j
                planned = tiles_planned[i, j]
    return best_action, planned


@njit(cache=True)
def token_values(p, w, board, tb, supply, weights, out_cells, out_values) -> int:
    """Value of every empty hex of seat p that takes animal w; returns how many were written."""
    tiles, tokens, cells, pinfo = board.tiles, board.tokens, board.cells, board.pinfo
    nbr, kind_info, tables = tb.nbr, tb.kind_info, tb.tables
    mark = np.zeros(nbr.shape[0], dtype=np.int32)
    members = np.empty(K.MAX_CELLS, dtype=np.int32)
    stats = np.zeros(7, dtype=np.int32)
    work = K.elk_work(K.MAX_CELLS)
    K.wildlife_stats(p, tokens, cells, pinfo, nbr, tables, mark, stats)
    fig = Figures(mark, members, stats, work)
    n = 0
    for k in range(pinfo[p, K.P_NCELLS]):
        c = cells[p, k]
        if tokens[p, c] < 0 and (kind_info[tiles[p, c], 0] >> w) & 1:
            out_cells[n] = c
            out_values[n] = _token_value(p, c, w, tiles, tokens, tb, fig, supply, weights, tiles[p, c])
            n += 1
    return n


@njit(cache=True, inline="always")
def choose_token(p, w, board, tb, supply, weights) -> int:
    """The best hex for the token in hand, or the bag when no hex is worth more than 0."""
    out_cells = np.empty(K.MAX_CELLS, dtype=np.int32)
    out_values = np.empty(K.MAX_CELLS)
    n = token_values(p, w, board, tb, supply, weights, out_cells, out_values)
    best = 0.0
    action = K.A_RETURN
    for k in range(n):
        if out_values[k] > best:
            best = out_values[k]
            action = K.A_TOKEN + out_cells[k]
    return action


@njit(cache=True)
def greedy_action(tiles, rots, edges, tokens, front, cells, flist, pinfo, market, stack, bag, ctl, rng, tb,
                  weights) -> int:
    """:func:`greedy_on_board` with the 13 state arrays spread (``CascadiaState`` order): the entry
    point from Python, once per decision. A board record passed from Python costs numba 2-3 us
    more to type than the spread arrays (a greedy decision from Python takes about 10 us, a
    Python greedy game's decision with ``legal_mask`` and ``step`` about 24 us: 23% more with the
    record built by ``board_args()``); compiled code calls :func:`greedy_on_board`."""
    board = K.CascadiaBoard(tiles, rots, edges, tokens, front, cells, flist, pinfo, market, stack, bag, ctl,
                            rng)
    return greedy_on_board(board, tb, weights)


@njit(cache=True, inline="always")
def greedy_on_board(board, tb, weights) -> int:
    """The greedy decision for the current player of ``board`` (a
    :class:`envs.cascadia.kernels.CascadiaBoard`; ``tb`` its game's
    :class:`envs.cascadia.kernels.CascadiaTables`)."""
    ctl = board.ctl
    weights = turn_weights(weights, ctl)
    p = ctl[K.C_CUR]
    supply = ctl[K.C_SUPPLY]
    phase = ctl[K.C_PHASE]
    if phase == K.PHASE_MARKET:
        if takes_free_redraw(board, weights):
            return K.A_THREE
        return choose_market(p, board, tb, supply, weights)
    if phase == K.PHASE_TILE:
        _, tile_a, _ = plan_turn(p, ctl[K.C_HAND_TILE], ctl[K.C_HAND_TOKEN], board, tb, supply, weights)
        return tile_a
    return choose_token(p, ctl[K.C_HAND_TOKEN], board, tb, supply, weights)


@njit(cache=True)
def play_greedy(board, tb, weights, epsilon, agent_rng) -> int:
    """Finish the game on ``board`` (a :class:`envs.cascadia.kernels.CascadiaBoard`: from Python,
    ``state.board_args()``; ``tb`` its game's :class:`envs.cascadia.kernels.CascadiaTables`) with
    the greedy policy (a uniformly random legal action with probability ``epsilon``, drawn from
    ``agent_rng``); return the number of decisions.

    The placement a greedy market choice planned is played without planning it again (the same
    action :func:`greedy_on_board` would choose: the board and the hand are the same), unless the
    nature supply went from empty to not, which can change a keystone's value."""
    tiles, tokens, cells, flist = board.tiles, board.tokens, board.cells, board.flist
    pinfo, market, bag, ctl = board.pinfo, board.market, board.bag, board.ctl
    nbr, kind_edges, kind_info = tb.nbr, tb.kind_edges, tb.kind_info
    out = np.empty(K.MAX_LEGAL, dtype=np.int32)
    steps = 0
    planned_tile = -1
    supply_planned = 0
    while ctl[K.C_PHASE] != K.PHASE_OVER:
        phase = ctl[K.C_PHASE]
        if epsilon > 0.0 and randint(agent_rng, 1 << 30) < epsilon * (1 << 30):
            a = K.random_action(
                tiles, tokens, cells, flist, pinfo, market, bag, ctl, kind_info, agent_rng, out
            )
            planned_tile = -1
        elif phase == K.PHASE_MARKET and takes_free_redraw(board, weights):
            a = K.A_THREE
        elif phase == K.PHASE_MARKET:
            supply_planned = ctl[K.C_SUPPLY]
            a, planned_tile = choose_market_planned(ctl[K.C_CUR], board, tb, supply_planned,
                                                    turn_weights(weights, ctl))
        elif phase == K.PHASE_TILE and planned_tile >= 0 and (ctl[K.C_SUPPLY] > 0) == (supply_planned > 0):
            a = planned_tile
        else:
            a = greedy_on_board(board, tb, weights)
        if phase != K.PHASE_MARKET:
            planned_tile = -1
        K.apply_on_board(a, board, nbr, kind_edges, kind_info)
        steps += 1
    return steps


def greedy_rollout(game: Game, state, seed: int, epsilon: float = 0.1) -> np.ndarray:
    """Compiled greedy playout of ``state`` (a determinized copy: it is consumed) for MCTS;
    final totals per seat (float64). ``epsilon`` of the decisions are random (seeded by ``seed``)."""
    weights = np.array(list(DEFAULT_WEIGHTS.values()))
    agent = np.array([derive_seed(seed, "greedy-rollout")], dtype=np.uint64)
    if not game.is_over(state):
        play_greedy(state.board_args(), game.tb, weights, float(epsilon), agent)
    return game.returns(state)


def preset_weights(preset: str) -> np.ndarray:
    """The weight vector (in :data:`W_NAMES` order) of a named preset (:data:`PRESETS`)."""
    if preset not in PRESETS:
        raise ConfigError(f"greedy (cascadia): unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    return np.array([PRESETS[preset][name] for name in W_NAMES])


class CascadiaGreedyAgent:
    """Greedy Cascadia agent (see the module docstring for the features and options)."""

    name = "greedy"

    def __init__(self, game: Game, preset: str = "default", **options: Any):
        check_game(game, "cascadia")
        self.game = game
        self.weights = parse_weights("cascadia", options, list(DEFAULT_WEIGHTS), preset_weights(preset))
        #: how often the planned action was not legal and the first legal one was played instead
        self.fallbacks = 0
        #: set by a recorder: ``act`` then leaves its planned values in ``last_explanation``
        self.explaining = False
        self.last_explanation: dict[str, Any] | None = None

    def act(self, state, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        s = state
        action = int(greedy_action(s.tiles, s.rots, s.edges, s.tokens, s.front, s.cells, s.flist, s.pinfo,
                                   s.market, s.stack, s.bag, s.ctl, s.rng, self.game.tb, self.weights))
        if not legal_mask[action]:  # never expected; stay legal whatever happens
            self.fallbacks += 1
            action = int(np.flatnonzero(legal_mask)[0])
        if self.explaining:
            legal = np.flatnonzero(legal_mask)
            self.last_explanation = ranked_values("greedy", legal, self._planned_values(state)[legal], action)
        return action

    def rank_actions(self, state, legal_mask: np.ndarray) -> np.ndarray:
        """Legal actions best first: market options, tile placements and token targets by planned
        value (the greedy choice always first)."""
        legal = np.flatnonzero(legal_mask)
        score = self._planned_values(state)
        best = self.act(state, legal_mask, np.random.default_rng(0))
        score[best] = 1e12
        order = legal[np.argsort(-score[legal], kind="stable")]
        return order

    def _planned_values(self, state) -> np.ndarray:
        """Planned value of every action of the current phase (-1e12 for the others)."""
        g, s = self.game, state
        p = int(s.ctl[K.C_CUR])
        supply = int(s.ctl[K.C_SUPPLY])
        weights = turn_weights(self.weights, s.ctl)
        score = np.full(g.num_actions, -1e12)
        phase = int(s.ctl[K.C_PHASE])
        if phase == K.PHASE_MARKET:
            values = market_values(p, s.board_args(), g.tb, supply, weights)
            for i in range(4):
                score[K.A_PAIR + i] = values[i, i]
                for j in range(4):
                    if j != i:
                        score[K.A_FREE + 4 * i + j] = values[i, j]
        elif phase == K.PHASE_TOKEN:
            cells = np.empty(K.MAX_CELLS, dtype=np.int32)
            vals = np.empty(K.MAX_CELLS)
            n = token_values(p, int(s.ctl[K.C_HAND_TOKEN]), s.board_args(), g.tb, supply, weights, cells,
                             vals)
            score[K.A_TOKEN + cells[:n]] = vals[:n]
            score[K.A_RETURN] = 0.0
        elif phase == K.PHASE_TILE:
            values = np.full(g.num_actions, -1e12)
            plan_turn(p, int(s.ctl[K.C_HAND_TILE]), int(s.ctl[K.C_HAND_TOKEN]), s.board_args(), g.tb, supply,
                      weights, values)
            score[:] = values
        return score


GreedyAgent = CascadiaGreedyAgent
