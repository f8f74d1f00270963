"""Numba kernels of Cascadia: setup, legal actions, apply, scoring, score deltas, a whole game.

Every function takes plain numpy arrays (see :class:`envs.cascadia.game.CascadiaState`), or the
record of them below:

* per seat ``p`` and window cell ``c``: ``tiles[p, c]`` kind or -1, ``rots[p, c]``,
  ``edges[p, c, d]`` habitat on edge d or -1, ``tokens[p, c]`` wildlife or -1,
  ``front[p, c]`` number of occupied neighbours; ``cells[p, :n]`` occupied cells in placement
  order, ``flist[p, :m]`` frontier cells sorted ascending; ``pinfo[p]`` = (n, m, nature, turns);
* shared: ``market[0, i]`` tile and ``market[1, i]`` token of slot i (slot 0 is next to the stack),
  ``stack`` with ``ctl[C_STACK_POS] .. ctl[C_STACK_LEN]`` still face down, ``bag[w]`` token counts,
  ``ctl`` the control scalars (indices ``C_*``), ``rng`` the chance stream;
* constants: ``nbr`` (cells x 6), ``kind_edges``, ``kind_info``, ``tables`` from :mod:`data`, or
  the record of them, :class:`CascadiaTables` (``CascadiaGame.tb``, with the solo habitat bonus).

The kernels that read or write the whole state take it as one :class:`CascadiaBoard` record (what
``CascadiaState.board_args()`` returns; compiled code builds one with ``CascadiaBoard(tiles, ...,
rng)``): a ``typing.NamedTuple`` that numba compiles like a tuple, so ``board.stack`` is resolved at
compile time and costs nothing at run time. They are :func:`place_tile`, :func:`deal_game`,
:func:`apply_tile`, :func:`apply_on_board` and :func:`play_random_into`, and the greedy planner
(:mod:`agents.greedy.cascadia`: ``plan_turn``, ``market_plans``, ``greedy_on_board``, the playout
``play_greedy``, ...) and the turn search's playouts (a call from Python plans a turn or plays
milliseconds, so its record's dispatch cost does not show). The entry points Python calls once per
step, game or rollout take the 13 arrays spread instead (``*state.board_args()``) and build the
record: :func:`setup_game`, :func:`apply_action`, :func:`play_random`, and the greedy agent's
``greedy_action``. Numba types a named-tuple argument outside its C fast
path, 1.3-1.7 us more per call: 12% of a bare Python ``legal_actions`` + ``step`` loop, 13% of a
late-game rollout. The small kernels that read a few arrays (``legal_actions``, ``score_all``, ...)
take those arrays by name. The kernels that read several constant tables besides a state (the
greedy planner, the turn search, :func:`random_games`, the batched env's ``observe_batch``, the
``simulate`` loop) take them as one :class:`CascadiaTables` record; a Python caller passes the
game's own, ``game.tb``, built once.

The action codec (one Discrete space, see ``seeds/cascadia-rules.md``):
``0..3`` take pair i; ``4 + 4 i + j`` pay a nature token for tile i and token j;
``19 + s`` pay a nature token to redraw the token subset s (bitmask 1..15); ``35`` free redraw of
three identical tokens; ``A_TILE + 6 c + k`` place the tile at cell c, rotation k;
``A_TOKEN + c`` put the token on cell c; ``A_RETURN`` return it to the bag.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from envs.cascadia.data import NUM_CELLS
from envs.core.rng import randint


class CascadiaBoard(NamedTuple):
    """The 13 state arrays by name, in this order (layouts above): the argument of the kernels
    that read or write the whole state. ``*board`` spreads them as positional arguments."""

    tiles: np.ndarray
    rots: np.ndarray
    edges: np.ndarray
    tokens: np.ndarray
    front: np.ndarray
    cells: np.ndarray
    flist: np.ndarray
    pinfo: np.ndarray
    market: np.ndarray
    stack: np.ndarray
    bag: np.ndarray
    ctl: np.ndarray
    rng: np.ndarray

    def copy(self) -> CascadiaBoard:
        """An independent copy of every array (scratch boards for the compiled searches)."""
        return CascadiaBoard(*(a.copy() for a in self))


class CascadiaTables(NamedTuple):
    """The constant tables of one game (``CascadiaGame.tb``), the argument of the kernels that read
    several of them (the greedy planner, the searches, the batched env, the compiled loops):
    ``nbr`` int32[cells, 6] neighbour cell per direction or -1, ``kind_edges`` int8[kinds, 6, 6]
    habitat per rotation and edge, ``kind_info`` int8[kinds, 3] (animals bitmask, keystone animal
    or -1, distinct rotations), ``tables`` int32[5, 9] wildlife scoring by count (bear pairs, elk,
    salmon, lonely hawks, fox), and the solo habitat bonus: ``solo_min`` tiles for ``solo_points``."""

    nbr: np.ndarray
    kind_edges: np.ndarray
    kind_info: np.ndarray
    tables: np.ndarray
    solo_min: int
    solo_points: int


# ---- action codec -----------------------------------------------------------------------------
A_PAIR = 0
A_FREE = 4
A_REDRAW = 19  # + subset 1..15
A_THREE = 35
A_TILE = 36
A_TOKEN = A_TILE + 6 * NUM_CELLS
A_RETURN = A_TOKEN + NUM_CELLS
NUM_ACTIONS = A_RETURN + 1

# ---- control scalars ---------------------------------------------------------------------------
C_PLAYERS = 0
C_CUR = 1
C_PHASE = 2
C_HAND_TILE = 3
C_HAND_TOKEN = 4
C_SLOT_TILE = 5
C_SLOT_TOKEN = 6
C_THREE_USED = 7
C_ACTED = 8
C_STACK_POS = 9
C_STACK_LEN = 10
C_SUPPLY = 11
C_TURN = 12
C_LAST_CELL = 13
C_TIE_MODE = 14
C_OVERPOP = 15  # how many four-of-a-kind redraws happened this turn (information)
NUM_CTL = 16

PHASE_MARKET = 0
PHASE_TILE = 1
PHASE_TOKEN = 2
PHASE_OVER = 3

P_NCELLS = 0
P_NFRONT = 1
P_NATURE = 2
P_TURNS = 3

MAX_CELLS = 32  # 23 in a real game; room for hand-built test positions
MAX_FRONT = 128
MAX_LEGAL = 6 * MAX_FRONT + 64

# score categories (columns of score_all's output)
CAT_WILDLIFE = 0  # 5 columns: bear, elk, salmon, hawk, fox
CAT_CORRIDOR = 5  # 5 columns, one per habitat
CAT_BONUS = 10  # 5 columns, one per habitat
CAT_NATURE = 15
CAT_BASE = 16
CAT_TOTAL = 17
NUM_CAT = 18

BEAR, ELK, SALMON, HAWK, FOX = 0, 1, 2, 3, 4

#: The decorator of every kernel that allocates nothing: compiled without numba's reference
#: counting. With it, each call of a compiled kernel increfs every array argument on entry and
#: decrefs it on exit (an atomic operation each, about 20 per call with the state's arrays), and
#: numba's pruning pass removes them only in simple control flow; that bookkeeping cost more than
#: the rules themselves (a random 4-player game took 190 us, 67 us without it). Such a kernel must
#: not create arrays (np.empty, np.zeros, ...); views and indexing of its arguments are fine.
step_jit = njit(cache=True, _nrt=False)
#: The small steps of a decision, called only from ``step_jit`` kernels: inlined into their callers
#: (numba IR inlining), so a decision does not pass the state's arrays down several calls (random
#: 4-player game 47 -> 41 us). An inlined kernel must only be called from ``step_jit`` ones: inlined
#: into a reference-counted caller it would bring the increfs back.
inline_jit = njit(cache=True, _nrt=False, inline="always")


# ---- chance ------------------------------------------------------------------------------------


@inline_jit
def draw_token(bag: np.ndarray, rng: np.ndarray) -> int:
    """Draw one token uniformly from the bag counts; -1 when the bag is empty."""
    total = 0
    for w in range(5):
        total += bag[w]
    if total == 0:
        return -1
    k = randint(rng, total)
    for w in range(5):
        if k < bag[w]:
            bag[w] -= 1
            return w
        k -= bag[w]
    return -1


@inline_jit
def resolve_overpopulation(market: np.ndarray, bag: np.ndarray, ctl: np.ndarray, rng: np.ndarray) -> None:
    """Four identical tokens: set them aside and redraw, repeatedly; then return the set-aside ones."""
    aside = 0  # four 8-bit counters per animal, packed (no allocation on the hot path)
    while True:
        w = market[1, 0]
        if w < 0 or market[1, 1] != w or market[1, 2] != w or market[1, 3] != w:
            break
        if bag[0] + bag[1] + bag[2] + bag[3] + bag[4] < 4:
            break
        for i in range(4):
            aside += 1 << (8 * int(w))
            market[1, i] = draw_token(bag, rng)
        ctl[C_OVERPOP] += 1
    for k in range(5):
        bag[k] += (aside >> (8 * k)) & 255


@inline_jit
def three_of_a_kind(market: np.ndarray) -> int:
    """The animal shown exactly three times among the four market tokens, or -1."""
    for w in range(5):
        n = 0
        for i in range(4):
            if market[1, i] == w:
                n += 1
        if n == 3:
            return w
    return -1


# ---- placing tiles -----------------------------------------------------------------------------


@inline_jit
def place_tile(p, cell, kind, rot, board, nbr, kind_edges):
    """Put ``kind`` at ``cell`` (rotation ``rot``) in seat p's area of ``board`` (a
    :class:`CascadiaBoard`) and update the frontier."""
    tiles, rots, edges, front, cells, flist, pinfo = (board.tiles, board.rots, board.edges, board.front,
                                                      board.cells, board.flist, board.pinfo)
    tiles[p, cell] = kind
    rots[p, cell] = rot
    for d in range(6):
        edges[p, cell, d] = kind_edges[kind, rot, d]
    cells[p, pinfo[p, P_NCELLS]] = cell
    pinfo[p, P_NCELLS] += 1
    # remove cell from the sorted frontier list
    m = pinfo[p, P_NFRONT]
    j = 0
    while j < m and flist[p, j] != cell:
        j += 1
    if j < m:
        for k in range(j, m - 1):
            flist[p, k] = flist[p, k + 1]
        m -= 1
    for d in range(6):
        nb = nbr[cell, d]
        if nb < 0:
            continue
        front[p, nb] += 1
        if tiles[p, nb] < 0 and front[p, nb] == 1:
            # a new frontier cell: insert keeping the list sorted
            k = m
            while k > 0 and flist[p, k - 1] > nb:
                flist[p, k] = flist[p, k - 1]
                k -= 1
            flist[p, k] = nb
            m += 1
    pinfo[p, P_NFRONT] = m


@step_jit
def setup_game(players, starter_order, tiles, rots, edges, tokens, front, cells, flist, pinfo,
               market, stack, bag, ctl, rng, nbr, kind_edges, starter_cells, num_tiles, tiles_used,
               per_animal, supply, tie_mode):
    """Deal a new game: starters, the shuffled stack of ``tiles_used`` tiles, the bag, the market.
    The entry point from Python, once per game (arrays spread); compiled code that deals many
    games clears what it used and calls :func:`deal_game`."""
    clear_areas(tiles, rots, edges, tokens, front, cells, flist)
    board = CascadiaBoard(tiles, rots, edges, tokens, front, cells, flist, pinfo, market, stack, bag, ctl,
                          rng)
    deal_game(players, starter_order, board, nbr, kind_edges, starter_cells, num_tiles, tiles_used,
              per_animal, supply, tie_mode)


@step_jit
def clear_areas(tiles, rots, edges, tokens, front, cells, flist):
    """Empty every seat's area (all cells of the window)."""
    tiles[:] = -1
    rots[:] = 0
    edges[:] = -1
    tokens[:] = -1
    front[:] = 0
    cells[:] = -1
    flist[:] = -1


@step_jit
def clear_used(players, tiles, rots, edges, tokens, front, cells, flist, pinfo, nbr):
    """Empty the areas of a finished deal by touching only what it wrote (its cells and their
    neighbours' counts): the same arrays as :func:`clear_areas` on areas that were empty before
    that deal, without writing the whole window (loops that deal many games)."""
    for p in range(players):
        for k in range(pinfo[p, P_NCELLS]):
            c = cells[p, k]
            tiles[p, c] = -1
            rots[p, c] = 0
            tokens[p, c] = -1
            front[p, c] = 0
            for d in range(6):
                edges[p, c, d] = -1
                nb = nbr[c, d]
                if nb >= 0:
                    front[p, nb] = 0
            cells[p, k] = -1
        flist[p, :] = -1


@step_jit
def deal_game(players, starter_order, board, nbr, kind_edges, starter_cells, num_tiles, tiles_used,
              per_animal, supply, tie_mode):
    """:func:`setup_game` on empty areas (``board`` a :class:`CascadiaBoard`)."""
    pinfo, market, stack, bag, ctl, rng = (board.pinfo, board.market, board.stack, board.bag, board.ctl,
                                           board.rng)
    pinfo[:] = 0
    ctl[:] = 0
    for s in range(starter_order.shape[0]):
        starter_order[s] = s
    for i in range(starter_order.shape[0] - 1, 0, -1):
        j = randint(rng, i + 1)
        t = starter_order[i]
        starter_order[i] = starter_order[j]
        starter_order[j] = t
    for p in range(players):
        for j in range(3):
            place_tile(p, starter_cells[j], num_tiles + 3 * starter_order[p] + j, 0, board, nbr, kind_edges)
    for t in range(num_tiles):
        stack[t] = t
    for i in range(num_tiles - 1, 0, -1):
        j = randint(rng, i + 1)
        t = stack[i]
        stack[i] = stack[j]
        stack[j] = t
    for w in range(5):
        bag[w] = per_animal
    ctl[C_PLAYERS] = players
    ctl[C_STACK_LEN] = tiles_used
    ctl[C_SUPPLY] = supply
    ctl[C_TIE_MODE] = tie_mode
    ctl[C_HAND_TILE] = -1
    ctl[C_HAND_TOKEN] = -1
    ctl[C_LAST_CELL] = -1
    for i in range(4):
        market[0, i] = stack[ctl[C_STACK_POS]]
        ctl[C_STACK_POS] += 1
    for i in range(4):
        market[1, i] = draw_token(bag, rng)
    ctl[C_PHASE] = PHASE_MARKET
    resolve_overpopulation(market, bag, ctl, rng)


# ---- legal actions -----------------------------------------------------------------------------



@inline_jit
def token_targets(tiles, tokens, cells, pinfo, p, w, kind_info, out, n) -> int:
    """Append ``A_TOKEN + c`` for every empty hex of seat p showing animal w (ascending c)."""
    bit = 1 << w
    start = n
    for k in range(pinfo[p, P_NCELLS]):
        c = cells[p, k]
        if tokens[p, c] < 0 and (kind_info[tiles[p, c], 0] & bit) != 0:
            a = A_TOKEN + c
            j = n
            while j > start and out[j - 1] > a:
                out[j] = out[j - 1]
                j -= 1
            out[j] = a
            n += 1
    return n


@inline_jit
def market_options(pinfo, market, bag, ctl):
    """The market decision's options as counts, in the codec's ascending order: (tiles, tokens,
    pairs, free, redraws, three) where ``tiles`` / ``tokens`` are the bitmasks of the slots that
    hold one, ``pairs`` the take-a-pair actions, ``free`` the paid free choices (4 per tile),
    ``redraws`` the paid redraws (every non-empty subset of ``tokens``), ``three`` 0 or 1."""
    p = ctl[C_CUR]
    tiles = 0
    tokens = 0
    for i in range(4):
        if market[0, i] >= 0:
            tiles |= 1 << i
        if market[1, i] >= 0:
            tokens |= 1 << i
    pairs = popcount5(tiles)
    in_bag = bag[0] + bag[1] + bag[2] + bag[3] + bag[4]
    free = 0
    redraws = 0
    if pinfo[p, P_NATURE] > 0:
        free = 4 * pairs
        if in_bag > 0:
            redraws = (1 << popcount5(tokens)) - 1
    three = 0
    if ctl[C_ACTED] == 0 and ctl[C_THREE_USED] == 0 and in_bag >= 3 and three_of_a_kind(market) >= 0:
        three = 1
    return tiles, tokens, pairs, free, redraws, three


@inline_jit
def nth_bit(mask, k) -> int:
    """Position of the k-th (from 0) set bit of ``mask``."""
    i = 0
    while True:
        if (mask >> i) & 1:
            if k == 0:
                return i
            k -= 1
        i += 1


@inline_jit
def market_option(k, tiles, tokens, pairs, free, redraws) -> int:
    """The k-th market action in ascending order (the counts from :func:`market_options`)."""
    if k < pairs:
        return A_PAIR + nth_bit(tiles, k)
    k -= pairs
    if k < free:
        return A_FREE + 4 * nth_bit(tiles, k // 4) + k % 4
    k -= free
    if k < redraws:
        # the (k+1)-th subset of ``tokens`` in ascending order: the bits of k + 1 spread over it
        bits = k + 1
        s = 0
        for i in range(4):
            if (tokens >> i) & 1:
                if bits & 1:
                    s |= 1 << i
                bits >>= 1
        return A_REDRAW + s
    return A_THREE


@step_jit
def legal_actions(tiles, tokens, cells, flist, pinfo, market, bag, ctl, kind_info, out) -> int:
    """Write the legal actions of the current decision into ``out`` in ascending order; return
    how many. The order matters: the random policy picks ``out[randint(n)]`` everywhere."""
    phase = ctl[C_PHASE]
    p = ctl[C_CUR]
    n = 0
    if phase == PHASE_MARKET:
        held, shown, pairs, free, redraws, three = market_options(pinfo, market, bag, ctl)
        n = pairs + free + redraws + three
        for k in range(n):
            out[k] = market_option(k, held, shown, pairs, free, redraws)
    elif phase == PHASE_TILE:
        nrot = int(kind_info[ctl[C_HAND_TILE], 2])
        for k in range(pinfo[p, P_NFRONT]):
            c = flist[p, k]
            for r in range(nrot):
                out[n] = A_TILE + 6 * c + r
                n += 1
    elif phase == PHASE_TOKEN:
        n = token_targets(tiles, tokens, cells, pinfo, p, ctl[C_HAND_TOKEN], kind_info, out, 0)
        out[n] = A_RETURN
        n += 1
    return n


@njit(cache=True)
def legal_mask(tiles, tokens, cells, flist, pinfo, market, bag, ctl, kind_info, mask) -> int:
    """Fill the boolean ``mask`` (length NUM_ACTIONS); return the number of legal actions."""
    mask[:] = False
    out = np.empty(MAX_LEGAL, dtype=np.int32)
    n = legal_actions(tiles, tokens, cells, flist, pinfo, market, bag, ctl, kind_info, out)
    for k in range(n):
        mask[out[k]] = True
    return n


# ---- applying actions --------------------------------------------------------------------------


@inline_jit
def redraw_slots(slots, market, bag, rng):
    """Set aside the tokens of the slot bitmask, draw replacements slot by slot, return the rest."""
    aside = 0  # packed 8-bit counters per animal
    for i in range(4):
        if (slots >> i) & 1 and market[1, i] >= 0:
            aside += 1 << (8 * int(market[1, i]))
            market[1, i] = draw_token(bag, rng)
    for w in range(5):
        bag[w] += (aside >> (8 * w)) & 255


@inline_jit
def end_turn(pinfo, market, stack, bag, ctl, rng):
    """Count the turn, refill the market (solo: discard and slide first), pass or end the game."""
    p = ctl[C_CUR]
    pinfo[p, P_TURNS] += 1
    ctl[C_TURN] += 1
    ctl[C_HAND_TILE] = -1
    ctl[C_HAND_TOKEN] = -1
    left = ctl[C_STACK_LEN] - ctl[C_STACK_POS]
    if ctl[C_PLAYERS] == 1:
        # remove the remaining tile and token farthest from the stack (highest slot)
        for row in range(2):
            for i in range(3, -1, -1):
                if market[row, i] >= 0:
                    market[row, i] = -1
                    break
        if left < 2:
            ctl[C_PHASE] = PHASE_OVER
            return
        for row in range(2):
            # slide the two survivors to the far end, keeping their order
            dst = 3
            for i in range(3, -1, -1):
                v = market[row, i]
                if v >= 0:
                    market[row, i] = -1
                    market[row, dst] = v
                    dst -= 1
        for i in range(2):
            market[0, i] = stack[ctl[C_STACK_POS]]
            ctl[C_STACK_POS] += 1
        for i in range(2):
            market[1, i] = draw_token(bag, rng)
    else:
        if left < 1:
            ctl[C_PHASE] = PHASE_OVER
            return
        market[0, ctl[C_SLOT_TILE]] = stack[ctl[C_STACK_POS]]
        ctl[C_STACK_POS] += 1
        market[1, ctl[C_SLOT_TOKEN]] = draw_token(bag, rng)
        ctl[C_CUR] = p + 1 if p + 1 < ctl[C_PLAYERS] else 0  # (p + 1) % players, without a division
    ctl[C_PHASE] = PHASE_MARKET
    ctl[C_THREE_USED] = 0
    ctl[C_ACTED] = 0
    ctl[C_OVERPOP] = 0
    resolve_overpopulation(market, bag, ctl, rng)


@inline_jit
def apply_market(action, pinfo, market, bag, ctl, rng):
    """Apply a legal market ``action``: take a pair or a free choice, or redraw tokens."""
    p = ctl[C_CUR]
    if action < A_FREE:
        i = action - A_PAIR
        ctl[C_HAND_TILE] = market[0, i]
        ctl[C_HAND_TOKEN] = market[1, i]
        ctl[C_SLOT_TILE] = i
        ctl[C_SLOT_TOKEN] = i
    elif action < A_REDRAW + 1:
        i = (action - A_FREE) // 4
        j = (action - A_FREE) % 4
        pinfo[p, P_NATURE] -= 1
        ctl[C_SUPPLY] += 1
        ctl[C_HAND_TILE] = market[0, i]
        ctl[C_HAND_TOKEN] = market[1, j]
        ctl[C_SLOT_TILE] = i
        ctl[C_SLOT_TOKEN] = j
    elif action < A_THREE:
        pinfo[p, P_NATURE] -= 1
        ctl[C_SUPPLY] += 1
        ctl[C_ACTED] = 1
        redraw_slots(action - A_REDRAW, market, bag, rng)
        return
    else:
        w = three_of_a_kind(market)
        slots = 0
        for i in range(4):
            if market[1, i] == w:
                slots |= 1 << i
        redraw_slots(slots, market, bag, rng)
        ctl[C_THREE_USED] = 1
        ctl[C_ACTED] = 1
        resolve_overpopulation(market, bag, ctl, rng)
        return
    market[0, ctl[C_SLOT_TILE]] = -1
    market[1, ctl[C_SLOT_TOKEN]] = -1
    ctl[C_PHASE] = PHASE_TILE


@inline_jit
def apply_tile(action, board, nbr, kind_edges):
    """Place the tile in hand as the legal ``action`` says (the turn ends if no token came with it)."""
    ctl = board.ctl
    k = action - A_TILE
    cell = k // 6
    place_tile(ctl[C_CUR], cell, ctl[C_HAND_TILE], k % 6, board, nbr, kind_edges)
    ctl[C_LAST_CELL] = cell
    if ctl[C_HAND_TOKEN] >= 0:
        ctl[C_PHASE] = PHASE_TOKEN
    else:
        end_turn(board.pinfo, board.market, board.stack, board.bag, ctl, board.rng)


@inline_jit
def apply_token(action, tiles, tokens, pinfo, market, stack, bag, ctl, rng, kind_info):
    """Put the token in hand on a hex or back in the bag (legal ``action``), then end the turn."""
    p = ctl[C_CUR]
    w = ctl[C_HAND_TOKEN]
    if action == A_RETURN:
        bag[w] += 1
    else:
        cell = action - A_TOKEN
        tokens[p, cell] = w
        if kind_info[tiles[p, cell], 1] == w and ctl[C_SUPPLY] > 0:
            ctl[C_SUPPLY] -= 1
            pinfo[p, P_NATURE] += 1
    end_turn(pinfo, market, stack, bag, ctl, rng)


@step_jit
def apply_action(action, tiles, rots, edges, tokens, front, cells, flist, pinfo, market, stack, bag,
                 ctl, rng, nbr, kind_edges, kind_info):
    """:func:`apply_on_board` with the arrays spread: the entry point from Python, once per step
    (see the module docstring); compiled code calls :func:`apply_on_board`."""
    board = CascadiaBoard(tiles, rots, edges, tokens, front, cells, flist, pinfo, market, stack, bag, ctl,
                          rng)
    apply_inline(action, board, nbr, kind_edges, kind_info)


@step_jit
def apply_on_board(action, board, nbr, kind_edges, kind_info):
    """Apply a legal ``action`` for the current player on ``board`` (a :class:`CascadiaBoard`;
    legality is the caller's job)."""
    apply_inline(action, board, nbr, kind_edges, kind_info)


@inline_jit
def apply_inline(action, board, nbr, kind_edges, kind_info):
    """The body of :func:`apply_on_board` and :func:`apply_action`, inlined into both: with
    apply_action calling apply_on_board (the record passed by value) a step from Python took
    0.2 us more."""
    b = board
    phase = b.ctl[C_PHASE]
    if phase == PHASE_MARKET:
        apply_market(action, b.pinfo, b.market, b.bag, b.ctl, b.rng)
    elif phase == PHASE_TILE:
        apply_tile(action, b, nbr, kind_edges)
    elif phase == PHASE_TOKEN:
        apply_token(action, b.tiles, b.tokens, b.pinfo, b.market, b.stack, b.bag, b.ctl, b.rng, kind_info)


# ---- scoring -----------------------------------------------------------------------------------


@step_jit
def _group(p, start, w, tokens, nbr, mark, stamp, members) -> int:
    """Flood the group of animal w containing ``start``; write members; return its size."""
    mark[start] = stamp
    members[0] = start
    size = 1
    head = 0
    while head < size:
        c = members[head]
        head += 1
        for d in range(6):
            nb = nbr[c, d]
            if nb >= 0 and mark[nb] != stamp and tokens[p, nb] == w:
                mark[nb] = stamp
                members[size] = nb
                size += 1
    return size


# columns of the elk search's work array (one row per elk, sorted by cell, and per search depth)
EW_NXT = 0  # 3 columns: row of the next elk towards E, SE, SW, or -1
EW_CELL = 3  # the elk's cell
EW_MASK = 4  # per depth: the rows still to split (bitmask)
EW_COUNT = 5  # per depth: how many rows that is
EW_ACC = 6  # per depth: points of the lines taken so far
EW_NOPT = 7  # per depth: how many choices were listed
EW_POS = 8  # per depth: the next choice to try
EW_OPT_MASK = 9  # 10 columns: rows left after each choice
EW_OPT_TAKE = 19  # 10 columns: length of each choice's line
ELK_WORK_COLS = 29


@njit(cache=True)
def elk_work(elk) -> np.ndarray:
    """Scratch for :func:`elk_group_score` on groups of up to ``elk`` animals (any content; reused
    across groups and boards)."""
    return np.empty((elk + 1, ELK_WORK_COLS), dtype=np.int64)


@step_jit
def elk_best_split(size, work, table) -> int:
    """Best split of ``size`` elk (rows of ``work`` sorted by cell, ``work[k, EW_NXT + a]`` the
    next elk towards E, SE or SW) into straight lines of 1-4, by an exact depth-first branch and
    bound.

    The lowest remaining elk is always the top-left end of its line (lower cells come earlier), so
    lines only grow from it towards E, SE or SW: at most 10 choices per step, longest first. A
    branch is cut when even the card's best rate per elk cannot beat the best total found, so the
    search stays exact. Iterative (an explicit stack in ``work``): no recursion, no allocation."""
    ratio = 0.0
    for length in range(1, 5):
        if table[length] / length > ratio:
            ratio = table[length] / length
    best = 0
    depth = 0
    work[0, EW_MASK] = (np.int64(1) << size) - 1
    work[0, EW_COUNT] = size
    work[0, EW_ACC] = 0
    fresh = True
    while depth >= 0:
        if fresh:
            fresh = False
            m = work[depth, EW_MASK]
            if m == 0:
                if work[depth, EW_ACC] > best:
                    best = work[depth, EW_ACC]
                depth -= 1
                continue
            i = 0
            while not (m >> i) & 1:
                i += 1
            rest = m & ~(np.int64(1) << i)
            n = 0
            for a in range(3):
                seg = rest
                j = i
                length = 1
                while length < 4:
                    j = work[j, EW_NXT + a]
                    if j < 0 or not (rest >> j) & 1:
                        break
                    seg = seg & ~(np.int64(1) << j)
                    length += 1
                    work[depth, EW_OPT_MASK + n] = seg
                    work[depth, EW_OPT_TAKE + n] = length
                    n += 1
            work[depth, EW_OPT_MASK + n] = rest
            work[depth, EW_OPT_TAKE + n] = 1
            work[depth, EW_NOPT] = n + 1
            work[depth, EW_POS] = 0
        if (work[depth, EW_POS] >= work[depth, EW_NOPT]
                or work[depth, EW_ACC] + ratio * work[depth, EW_COUNT] <= best):
            depth -= 1
            continue
        k = work[depth, EW_POS]
        work[depth, EW_POS] += 1
        take = work[depth, EW_OPT_TAKE + k]
        work[depth + 1, EW_MASK] = work[depth, EW_OPT_MASK + k]
        work[depth + 1, EW_COUNT] = work[depth, EW_COUNT] - take
        work[depth + 1, EW_ACC] = work[depth, EW_ACC] + table[take]
        depth += 1
        fresh = True
    return best


@step_jit
def elk_group_score(p, members, size, tokens, nbr, table, work) -> int:
    """Exact elk A score of one connected elk group given by its cells (``work``: :func:`elk_work`)."""
    for k in range(size):
        c = members[k]
        j = k
        while j > 0 and work[j - 1, EW_CELL] > c:
            work[j, EW_CELL] = work[j - 1, EW_CELL]
            j -= 1
        work[j, EW_CELL] = c
    for k in range(size):
        for a in range(3):
            work[k, EW_NXT + a] = -1
            nb = nbr[work[k, EW_CELL], a + 1]  # E, SE, SW: the directions towards later cells
            if nb >= 0 and tokens[p, nb] == ELK:
                for m in range(k + 1, size):
                    if work[m, EW_CELL] == nb:
                        work[k, EW_NXT + a] = m
                        break
    return elk_best_split(size, work, table)


@step_jit
def salmon_group_score(p, members, size, tokens, nbr, table) -> int:
    """Salmon A score of one connected salmon group (0 when a salmon touches 3 or more)."""
    for k in range(size):
        c = members[k]
        cnt = 0
        for d in range(6):
            nb = nbr[c, d]
            if nb >= 0 and tokens[p, nb] == SALMON:
                cnt += 1
        if cnt > 2:
            return 0
    return table[min(size, 7)]


@step_jit
def fox_types(p, c, tokens, nbr) -> int:
    """Bitmask of the animals on the neighbours of cell c."""
    seen = 0
    for d in range(6):
        nb = nbr[c, d]
        if nb >= 0 and tokens[p, nb] >= 0:
            seen |= 1 << tokens[p, nb]
    return seen


@step_jit
def popcount5(x) -> int:
    return (x & 1) + ((x >> 1) & 1) + ((x >> 2) & 1) + ((x >> 3) & 1) + ((x >> 4) & 1)


@njit(cache=True)
def wildlife_stats(p, tokens, cells, pinfo, nbr, tables, mark, out) -> None:
    """Wildlife scores of seat p into out[0:5], and out[5] bear pairs, out[6] lonely hawks."""
    wildlife_stats_into(p, tokens, cells, pinfo, nbr, tables, mark, np.empty(MAX_CELLS, dtype=np.int32),
                        elk_work(MAX_CELLS), out)


@step_jit
def wildlife_stats_into(p, tokens, cells, pinfo, nbr, tables, mark, members, work, out) -> None:
    """:func:`wildlife_stats` with its scratch given (``members``: MAX_CELLS cells, ``work``:
    :func:`elk_work`)."""
    n = pinfo[p, P_NCELLS]
    for k in range(n):
        mark[cells[p, k]] = 0
    pairs = 0
    elk = 0
    salmon = 0
    lonely = 0
    fox = 0
    stamp = 0
    for k in range(n):
        c = cells[p, k]
        w = tokens[p, c]
        if w < 0:
            continue
        if w == HAWK:
            alone = True
            for d in range(6):
                nb = nbr[c, d]
                if nb >= 0 and tokens[p, nb] == HAWK:
                    alone = False
            if alone:
                lonely += 1
        elif w == FOX:
            fox += tables[4, popcount5(fox_types(p, c, tokens, nbr))]
        elif mark[c] == 0:
            stamp += 1
            size = _group(p, c, w, tokens, nbr, mark, stamp, members)
            if w == BEAR:
                if size == 2:
                    pairs += 1
            elif w == ELK:
                elk += elk_group_score(p, members, size, tokens, nbr, tables[1], work)
            else:
                salmon += salmon_group_score(p, members, size, tokens, nbr, tables[2])
    for k in range(n):
        mark[cells[p, k]] = 0
    out[BEAR] = tables[0, min(pairs, 8)]
    out[ELK] = elk
    out[SALMON] = salmon
    out[HAWK] = tables[3, min(lonely, 8)]
    out[FOX] = fox
    out[5] = pairs
    out[6] = lonely


@step_jit
def corridor_from(p, start, h, edges, nbr, mark, stamp, queue) -> int:
    """Size of the habitat-h corridor that contains ``start`` (marking its cells with ``stamp``)."""
    mark[start] = stamp
    queue[0] = start
    size = 1
    head = 0
    while head < size:
        c = queue[head]
        head += 1
        for d in range(6):
            if edges[p, c, d] != h:
                continue
            nb = nbr[c, d]
            if nb >= 0 and mark[nb] != stamp and edges[p, nb, (d + 3) % 6] == h:
                mark[nb] = stamp
                queue[size] = nb
                size += 1
    return size


@njit(cache=True)
def corridor_sizes(p, edges, cells, pinfo, nbr, mark, out) -> None:
    """Largest corridor per habitat of seat p into out[0:5]."""
    corridor_sizes_into(p, edges, cells, pinfo, nbr, mark, corridor_work(), out)


@njit(cache=True)
def corridor_work() -> np.ndarray:
    """Scratch for :func:`corridor_sizes_into`: parent and size of each (hex, habitat) node."""
    return np.empty((2, 5 * MAX_CELLS), dtype=np.int32)


@step_jit
def _root(parent, x) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@step_jit
def corridor_union(p, edges, cells, pinfo, nbr, mark, work) -> None:
    """Seat p's corridors as a union-find in ``work`` (:func:`corridor_work`: parent and size of
    node 5 * k + h, the habitat-h side of the k-th placed hex): every shared edge whose two sides
    show habitat h joins the two hexes' h nodes (union by size). ``mark[cell]`` is left holding
    the cell's placement index k."""
    parent = work[0]
    size = work[1]
    n = pinfo[p, P_NCELLS]
    for k in range(n):
        mark[cells[p, k]] = k
        for h in range(5):
            parent[5 * k + h] = 5 * k + h
            size[5 * k + h] = 1
    for k in range(n):
        c = cells[p, k]
        for d in range(3):  # NE, E, SE: every shared edge is seen once, from one of its hexes
            h = edges[p, c, d]
            nb = nbr[c, d]
            if nb >= 0 and edges[p, nb, d + 3] == h:  # an empty cell's edges are -1
                x = _root(parent, 5 * k + h)
                y = _root(parent, 5 * mark[nb] + h)
                if x != y:
                    if size[x] < size[y]:
                        x, y = y, x
                    parent[y] = x
                    size[x] += size[y]


@step_jit
def corridor_sizes_into(p, edges, cells, pinfo, nbr, mark, work, out) -> None:
    """:func:`corridor_sizes` with its scratch given (:func:`corridor_work`), in one pass over the
    union-find of :func:`corridor_union`. ``mark`` is zero again on return."""
    corridor_union(p, edges, cells, pinfo, nbr, mark, work)
    parent = work[0]
    size = work[1]
    n = pinfo[p, P_NCELLS]
    for h in range(5):
        out[h] = 0
    for k in range(n):
        c = cells[p, k]
        shown = 0
        for d in range(6):
            shown |= 1 << edges[p, c, d]
        for h in range(5):
            if (shown >> h) & 1:
                r = size[_root(parent, 5 * k + h)]
                if r > out[h]:
                    out[h] = r
        mark[c] = 0


@step_jit
def habitat_bonuses(corr, players, tie_mode, solo_min, solo_points, out) -> None:
    """Majority bonus per seat and habitat (solo: ``solo_points`` for a corridor >= ``solo_min``).

    2 players: 2 to the larger, 1 each when tied. 3-4 players: 3 to a unique largest and 1 to the
    second; two tied for largest get 2 each, three or more 1 each, and then nobody gets the second
    bonus; players tied for second get 0 (tie_mode 0, rules decision 1) or 1 each (tie_mode 1)."""
    for p in range(players):
        for h in range(5):
            out[p, h] = 0
    for h in range(5):
        if players == 1:
            if corr[0, h] >= solo_min:
                out[0, h] = solo_points
            continue
        top = -1
        for p in range(players):
            if corr[p, h] > top:
                top = corr[p, h]
        nfirst = 0
        for p in range(players):
            if corr[p, h] == top:
                nfirst += 1
        if players == 2:
            for p in range(players):
                if corr[p, h] == top:
                    out[p, h] = 2 if nfirst == 1 else 1
            continue
        if nfirst >= 2:
            for p in range(players):
                if corr[p, h] == top:
                    out[p, h] = 2 if nfirst == 2 else 1
            continue
        second = -1
        for p in range(players):
            if corr[p, h] < top and corr[p, h] > second:
                second = corr[p, h]
        nsecond = 0
        for p in range(players):
            if corr[p, h] == second:
                nsecond += 1
        for p in range(players):
            if corr[p, h] == top:
                out[p, h] = 3
            elif corr[p, h] == second and (nsecond == 1 or tie_mode == 1):
                out[p, h] = 1


@njit(cache=True)
def score_scratch(ncell):
    """Scratch for :func:`score_all_into`, for any table of up to 4 seats on ``ncell`` cells:
    (mark, members, elk work, corridor work, wildlife stats, corridors, bonuses)."""
    return (np.zeros(ncell, dtype=np.int32), np.empty(MAX_CELLS, dtype=np.int32), elk_work(MAX_CELLS),
            corridor_work(), np.empty(7, dtype=np.int32), np.empty((4, 5), dtype=np.int32),
            np.empty((4, 5), dtype=np.int32))


@njit(cache=True)
def score_all(edges, tokens, cells, pinfo, ctl, nbr, tables, solo_min, solo_points, out) -> None:
    """Full score of every seat into ``out[p, NUM_CAT]`` (columns CAT_*)."""
    score_all_into(edges, tokens, cells, pinfo, ctl, nbr, tables, solo_min, solo_points, out,
                   score_scratch(nbr.shape[0]))


@step_jit
def score_all_into(edges, tokens, cells, pinfo, ctl, nbr, tables, solo_min, solo_points, out,
                   scratch) -> None:
    """:func:`score_all` with its scratch given (:func:`score_scratch`; loops that score many
    tables allocate it once)."""
    mark, members, work, cwork, wild, corr, bonus = scratch
    players = ctl[C_PLAYERS]
    for p in range(players):
        wildlife_stats_into(p, tokens, cells, pinfo, nbr, tables, mark, members, work, wild)
        corridor_sizes_into(p, edges, cells, pinfo, nbr, mark, cwork, corr[p])
        for k in range(5):
            out[p, CAT_WILDLIFE + k] = wild[k]
            out[p, CAT_CORRIDOR + k] = corr[p, k]
    habitat_bonuses(corr, players, ctl[C_TIE_MODE], solo_min, solo_points, bonus)
    for p in range(players):
        base = pinfo[p, P_NATURE]
        extra = 0
        for k in range(5):
            out[p, CAT_BONUS + k] = bonus[p, k]
            base += out[p, CAT_WILDLIFE + k] + out[p, CAT_CORRIDOR + k]
            extra += bonus[p, k]
        out[p, CAT_NATURE] = pinfo[p, P_NATURE]
        out[p, CAT_BASE] = base
        out[p, CAT_TOTAL] = base + extra


# ---- score change of one candidate, without rescoring the board --------------------------------


@step_jit
def corridor_gain(p, cell, kind, rot, edges, nbr, kind_edges, largest, mark, queue) -> int:
    """Points the corridors of seat p gain if ``kind`` is placed at ``cell`` with ``rot``.

    ``largest`` holds the current largest corridor per habitat; only the new tile's corridors
    are flooded. The board is restored before returning."""
    for d in range(6):
        edges[p, cell, d] = kind_edges[kind, rot, d]
    gain = 0
    done = 0
    for d in range(6):
        h = kind_edges[kind, rot, d]
        if (done >> h) & 1:
            continue
        done |= 1 << h
        size = corridor_from(p, cell, h, edges, nbr, mark, 1, queue)
        for k in range(size):
            mark[queue[k]] = 0
        if size > largest[h]:
            gain += size - largest[h]
    for d in range(6):
        edges[p, cell, d] = -1
    return gain


@njit(cache=True)
def token_gain(p, cell, w, tokens, nbr, tables, stats, mark, members) -> int:
    """Wildlife points seat p gains by putting animal w on the empty hex ``cell``.

    ``stats`` is :func:`wildlife_stats`' output for the current board (bear pairs, lonely hawks);
    only the groups touching ``cell`` are flooded. ``mark`` must be all zero; it is left so."""
    return token_gain_into(p, cell, w, tokens, nbr, tables, stats, mark, members,
                           elk_work(MAX_CELLS if w == ELK else 0))


@njit(cache=True)
def token_gain_into(p, cell, w, tokens, nbr, tables, stats, mark, members, work) -> int:
    """:func:`token_gain` with its elk scratch given (``work``: :func:`elk_work` of MAX_CELLS; loops
    that value many hexes allocate it once)."""
    gain = 0
    if w == BEAR or w == ELK or w == SALMON:
        old = 0
        old_pairs = 0
        for d in range(6):
            nb = nbr[cell, d]
            if nb >= 0 and tokens[p, nb] == w and mark[nb] != 1:
                size = _group(p, nb, w, tokens, nbr, mark, 1, members)
                if w == BEAR:
                    if size == 2:
                        old_pairs += 1
                elif w == ELK:
                    old += elk_group_score(p, members, size, tokens, nbr, tables[1], work)
                else:
                    old += salmon_group_score(p, members, size, tokens, nbr, tables[2])
        tokens[p, cell] = w
        size = _group(p, cell, w, tokens, nbr, mark, 2, members)
        if w == BEAR:
            pairs = stats[5] - old_pairs + (1 if size == 2 else 0)
            gain = tables[0, min(pairs, 8)] - tables[0, min(stats[5], 8)]
        elif w == ELK:
            gain = elk_group_score(p, members, size, tokens, nbr, tables[1], work) - old
        else:
            gain = salmon_group_score(p, members, size, tokens, nbr, tables[2]) - old
        tokens[p, cell] = -1
        for k in range(size):
            mark[members[k]] = 0
    elif w == HAWK:
        adjacent = 0
        lost = 0
        for d in range(6):
            nb = nbr[cell, d]
            if nb >= 0 and tokens[p, nb] == HAWK:
                adjacent += 1
                alone = True
                for e in range(6):
                    nb2 = nbr[nb, e]
                    if nb2 >= 0 and tokens[p, nb2] == HAWK:
                        alone = False
                if alone:
                    lost += 1
        lonely = stats[6] - lost + (1 if adjacent == 0 else 0)
        gain = tables[3, min(lonely, 8)] - tables[3, min(stats[6], 8)]
    for d in range(6):
        nb = nbr[cell, d]
        if nb >= 0 and tokens[p, nb] == FOX:
            seen = fox_types(p, nb, tokens, nbr)
            if not (seen >> w) & 1:
                k = popcount5(seen)
                gain += tables[4, k + 1] - tables[4, k]
    if w == FOX:
        gain += tables[4, popcount5(fox_types(p, cell, tokens, nbr))]
    return gain


# ---- whole games -------------------------------------------------------------------------------


@inline_jit
def random_market_action(pinfo, market, bag, ctl, agent_rng) -> int:
    """A uniformly random market action: the k-th of the listed ones for k = randint(number)."""
    tiles, tokens, pairs, free, redraws, three = market_options(pinfo, market, bag, ctl)
    return market_option(randint(agent_rng, pairs + free + redraws + three), tiles, tokens, pairs, free,
                         redraws)


@inline_jit
def random_tile_action(flist, pinfo, ctl, kind_info, agent_rng) -> int:
    """A uniformly random placement: the k-th of frontier x rotations, indexed arithmetically."""
    p = ctl[C_CUR]
    nrot = int(kind_info[ctl[C_HAND_TILE], 2])
    k = randint(agent_rng, pinfo[p, P_NFRONT] * nrot)
    if nrot == 6:  # a constant divisor is a multiply; a variable one a slow hardware division
        return A_TILE + 6 * flist[p, k // 6] + k % 6
    return A_TILE + 6 * flist[p, k // nrot] + k % nrot


@inline_jit
def random_token_action(tiles, tokens, cells, pinfo, ctl, kind_info, agent_rng, out) -> int:
    """A uniformly random target for the token in hand, or its return to the bag: the k-th of
    :func:`token_targets`' ascending list for k = randint(number + 1), found without sorting.

    The matching hexes are collected in placement order without a branch per hex (whether a hex
    is empty and shows the animal is unpredictable, and those mispredictions cost more than the
    rest of the decision), then the one with exactly k smaller matches is the k-th."""
    p = ctl[C_CUR]
    bit = 1 << ctl[C_HAND_TOKEN]
    n = 0
    for i in range(pinfo[p, P_NCELLS]):
        c = cells[p, i]
        out[n] = c
        n += (tokens[p, c] < 0) & ((kind_info[tiles[p, c], 0] & bit) != 0)
    k = randint(agent_rng, n + 1)
    if k == n:
        return A_RETURN
    for i in range(n):
        c = out[i]
        rank = 0
        for j in range(n):
            rank += out[j] < c
        if rank == k:
            return A_TOKEN + c
    return A_RETURN


@step_jit
def random_action(tiles, tokens, cells, flist, pinfo, market, bag, ctl, kind_info, agent_rng, out) -> int:
    """The k-th legal action (ascending) for k = randint(number legal): the same draw as
    ``random_true_index`` over the mask, without listing the market or the placements."""
    phase = ctl[C_PHASE]
    if phase == PHASE_MARKET:
        return random_market_action(pinfo, market, bag, ctl, agent_rng)
    if phase == PHASE_TILE:
        return random_tile_action(flist, pinfo, ctl, kind_info, agent_rng)
    return random_token_action(tiles, tokens, cells, pinfo, ctl, kind_info, agent_rng, out)


@njit(cache=True)
def play_random(tiles, rots, edges, tokens, front, cells, flist, pinfo, market, stack, bag, ctl, rng,
                nbr, kind_edges, kind_info, agent_rng) -> int:
    """Play uniformly random legal actions until the game ends; return the number of decisions
    taken. Identical to the Python engine driven by ``random_true_index`` over the mask. The entry
    point from Python, once per rollout (arrays spread: see the module docstring); compiled code
    calls :func:`play_random_into`."""
    board = CascadiaBoard(tiles, rots, edges, tokens, front, cells, flist, pinfo, market, stack, bag, ctl,
                          rng)
    return play_random_into(board, nbr, kind_edges, kind_info, agent_rng, np.empty(MAX_LEGAL, dtype=np.int32))


@step_jit
def play_random_into(board, nbr, kind_edges, kind_info, agent_rng, out) -> int:
    """:func:`play_random` with its action buffer given. Each decision is random_action then
    apply_action, phase by phase, so each call passes only the arrays its phase uses."""
    tiles, tokens, cells, flist, pinfo = board.tiles, board.tokens, board.cells, board.flist, board.pinfo
    market, stack, bag, ctl, rng = board.market, board.stack, board.bag, board.ctl, board.rng
    steps = 0
    while True:
        phase = ctl[C_PHASE]
        if phase == PHASE_MARKET:
            a = random_market_action(pinfo, market, bag, ctl, agent_rng)
            apply_market(a, pinfo, market, bag, ctl, rng)
        elif phase == PHASE_TILE:
            a = random_tile_action(flist, pinfo, ctl, kind_info, agent_rng)
            apply_tile(a, board, nbr, kind_edges)
        elif phase == PHASE_TOKEN:
            a = random_token_action(tiles, tokens, cells, pinfo, ctl, kind_info, agent_rng, out)
            apply_token(a, tiles, tokens, pinfo, market, stack, bag, ctl, rng, kind_info)
        else:
            return steps
        steps += 1


@njit(cache=True)
def random_games(games, players, seed, tb, starter_cells, num_tiles, tiles_used, per_animal, supply,
                 totals) -> int:
    """Deal and play ``games`` random games in a row (benchmarks, simulation; ``tb`` a
    :class:`CascadiaTables`); write each seat's full total into ``totals[g, p]``; return the number
    of decisions taken."""
    nbr, kind_edges, kind_info = tb.nbr, tb.kind_edges, tb.kind_info
    if tiles_used > num_tiles or (players == 1 and tiles_used > 2 * (MAX_CELLS - 3) + 3) \
            or (players > 1 and tiles_used > players * (MAX_CELLS - 3) + 3):
        raise ValueError("random_games: tiles_used too large for this player count")
    ncell = nbr.shape[0]
    tiles = np.empty((players, ncell), dtype=np.int16)
    rots = np.empty((players, ncell), dtype=np.int8)
    edges = np.empty((players, ncell, 6), dtype=np.int8)
    tokens = np.empty((players, ncell), dtype=np.int8)
    front = np.empty((players, ncell), dtype=np.int8)
    cells = np.empty((players, MAX_CELLS), dtype=np.int16)
    flist = np.empty((players, MAX_FRONT), dtype=np.int16)
    pinfo = np.empty((players, 4), dtype=np.int32)
    market = np.empty((2, 4), dtype=np.int16)
    stack = np.empty(num_tiles, dtype=np.int16)
    bag = np.empty(5, dtype=np.int32)
    ctl = np.empty(NUM_CTL, dtype=np.int32)
    order = np.empty(5, dtype=np.int16)
    rng = np.empty(1, dtype=np.uint64)
    agent = np.empty(1, dtype=np.uint64)
    score = np.empty((players, NUM_CAT), dtype=np.int32)
    scratch = score_scratch(ncell)
    out = np.empty(MAX_LEGAL, dtype=np.int32)
    board = CascadiaBoard(tiles, rots, edges, tokens, front, cells, flist, pinfo, market, stack, bag, ctl,
                          rng)
    steps = 0
    clear_areas(tiles, rots, edges, tokens, front, cells, flist)
    for g in range(games):
        rng[0] = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(2 * g + 1)
        agent[0] = rng[0] ^ np.uint64(0xD1B54A32D192ED03)
        deal_game(players, order, board, nbr, kind_edges, starter_cells, num_tiles, tiles_used, per_animal,
                  supply, 0)
        steps += play_random_into(board, nbr, kind_edges, kind_info, agent, out)
        score_all_into(edges, tokens, cells, pinfo, ctl, nbr, tb.tables, tb.solo_min, tb.solo_points, score,
                       scratch)
        for p in range(players):
            totals[g, p] = score[p, CAT_TOTAL]
        clear_used(players, tiles, rots, edges, tokens, front, cells, flist, pinfo, nbr)
    return steps


@step_jit
def observation_planes(p, tiles, edges, tokens, front, cells, flist, pinfo, kind_info, planes) -> None:
    """Write seat p's 24 features per cell into ``planes`` (cells x 24, zeroed by the caller):
    occupied, habitats shown (5), edge habitats (6, (h+1)/5), token one-hot (5), animals allowed
    (5), keystone, frontier."""
    for k in range(pinfo[p, P_NCELLS]):
        c = cells[p, k]
        kind = tiles[p, c]
        planes[c, 0] = 1.0
        for d in range(6):
            h = edges[p, c, d]
            planes[c, 1 + h] = 1.0
            planes[c, 6 + d] = (h + 1) / 5.0
        w = tokens[p, c]
        if w >= 0:
            planes[c, 12 + w] = 1.0
        for x in range(5):
            if (kind_info[kind, 0] >> x) & 1:
                planes[c, 17 + x] = 1.0
        if kind_info[kind, 1] >= 0:
            planes[c, 22] = 1.0
    for k in range(pinfo[p, P_NFRONT]):
        planes[flist[p, k], 23] = 1.0
