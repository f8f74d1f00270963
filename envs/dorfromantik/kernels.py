"""numba kernels of Dorfromantik: setup, placement masks, incremental regions, tasks, scoring, whole games.

Board: a fixed axial grid of radius :data:`GRID_RADIUS` (side :data:`GRID_SIDE`), cell index
``(r + R) * SIDE + (q + R)``. At most 70 tiles are placed (25 task + 45 landscape) and the first one sits
at the origin, so every tile is within 69 steps and every neighbour looked at within 71: the grid never
clips a legal move. Arrays of one game (all plain numpy, see :func:`new_arrays`):

* ``cells`` int16 (N, 4): tile id (-1 empty), rotation, placement index, frontier slot (-1 if none)
* ``frontier`` int32 (MAX_FRONTIER,): empty cells next to a tile (only the origin before the first tile)
* ``placed`` int32 (MAX_PLACED, 3): cell, tile, rotation in placement order
* ``uf`` int16 (3, MAX_NODES): union-find parent, tile count, open-edge count of every *piece*. A piece
  is the part of one placed tile in one terrain (decision 2: all same-terrain edges of a tile form one
  area, a rail or river is one line piece): node ``placement * 5 + terrain - 1``.
* ``tasks`` int16 (25, 4): node of the task tile's own piece, terrain, target, status (0 open, 1 done,
  2 failed)
* ``deck`` int16 (98,): landscape order [0:48] (the first ``meta[M_UNSEEN]`` are set aside unseen),
  task-tile order [48:73], marker values per type [73:98] (5 per type, shuffled per type)
* ``meta`` int32 (META_SIZE,): counters, see the ``M_*`` constants.

The kernels here take those arrays by name. The kernels that copy, play or value a whole position
take them as one :class:`DorfBoard` record instead (``new_arrays()`` returns one, ``DorfState.board()``
gives a state's; compiled code builds one with ``DorfBoard(cells, ..., meta)``): a ``typing.NamedTuple``
that numba compiles like a tuple, so ``board.deck`` is resolved at compile time and costs nothing at
run time. They are the placement search's :func:`agents.search.placement_kernels.start_playout` and
``playout``; the greedy valuation :func:`agents.greedy.dorfromantik_kernels.greedy_values`,
``evaluate_placement``, ``greedy_placement`` and ``play_greedy_board``; the learned
:func:`agents.learned.dorfromantik_kernels.candidate_features`, ``linear_placement``, ``play_linear``,
``playout_linear`` and ``label_playouts``; the batched env's ``observe``
(:mod:`envs.dorfromantik.vector_kernels`) and ``simulate``'s ``dorfromantik_game``. Python calls each
of them at most once per decision, playout, game or batch of playouts, where numba's check of a
record argument (it types a named tuple outside its C fast path, about 1.5 us more per call than
spread arrays) is a few percent of a 5-80 us valuation and nothing beside a playout. The kernels
Python calls for every placement or rollout (``place``, ``advance``, ``legal_moves``,
``play_random``) keep the arrays spread, and so does the greedy rollout ``play_greedy``, which builds
the record and calls ``play_greedy_board`` (Python's rollouts late in a game are a few placements
long). :class:`DorfTables` groups the game's constant tables for the kernels that take most of them.

Also here: the observation's board planes. The greedy agent's kernels are
:mod:`agents.greedy.dorfromantik_kernels`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from envs.core.rng import randint, shuffle_prefix

#: the small kernels every placement, mask and playout step calls (none allocates): compiled without
#: numba's reference counting, so a call with array arguments costs no atomic counter updates (the
#: search's greedy playouts 1.1x faster)
hot_jit = njit(cache=True, _nrt=False)

GRID_RADIUS = 72
GRID_SIDE = 2 * GRID_RADIUS + 1
GRID_CELLS = GRID_SIDE * GRID_SIDE
ORIGIN = GRID_RADIUS * GRID_SIDE + GRID_RADIUS
MAX_PLACED = 73
MAX_NODES = MAX_PLACED * 5
MAX_FRONTIER = 512
NUM_LAND = 48
NUM_TASK = 25
DECK_TASK = 48
DECK_MARKER = 73
DECK_SIZE = 98
RAIL = 4
RIVER = 5

#: offset of the neighbour in direction d (envs.core.hexgrid.HEX_DIRECTIONS order) in the flat grid
DIR_OFFSETS = np.array([1, 1 - GRID_SIDE, -GRID_SIDE, -1, GRID_SIDE - 1, GRID_SIDE], dtype=np.int64)

# meta slots
M_LAND_POS = 0        # next landscape position in deck (starts after the set-aside tiles)
M_TASK_POS = 1        # task tiles drawn so far
M_MARKER_POS = 2      # 5 slots: markers drawn per type
M_PLACED = 7
M_FRONT = 8
M_TASKS = 9           # task tiles on the board
M_OPEN_TASKS = 10
M_DRAWN = 11          # tile in hand (-1 when over)
M_MARKER = 12         # marker value on the drawn task tile (0 for landscape)
M_TURN = 13           # placements so far; the current seat is TURN % PLAYERS
M_OVER = 14
M_PLAYERS = 15
M_TASK_POINTS = 16    # 5 slots: completed marker points per type
M_MAX_RAIL = 21
M_MAX_RIVER = 22
M_SET_ASIDE = 23      # drawn tiles with no legal position (decision 5)
M_QMIN = 24
M_QMAX = 25
M_RMIN = 26
M_RMAX = 27
M_FAILED = 28
M_DONE = 29
M_UNSEEN = 30         # landscape tiles set aside unseen at setup
M_OPEN_LIMIT = 31
M_FORCED = 32         # turns that always draw a task tile
META_SIZE = 33

#: the data file's setup numbers, in the order of the ``rules`` array :func:`setup` takes
RULE_NAMES = ("set_aside_unseen", "open_task_limit", "forced_task_turns")

# score breakdown slots (see score_breakdown)
S_TASKS = 0           # 5 slots per task type
S_FLAGS = 5           # 3 slots: forest, field, village
S_RAIL = 8
S_RIVER = 9
S_TOTAL = 10
SCORE_SIZE = 11


class DorfBoard(NamedTuple):
    """The 7 arrays of one game by name, in this order (layouts above): the argument of the
    playout kernels. ``*board`` spreads them as positional arguments."""

    cells: np.ndarray
    frontier: np.ndarray
    placed: np.ndarray
    uf: np.ndarray
    tasks: np.ndarray
    deck: np.ndarray
    meta: np.ndarray

    def copy(self) -> DorfBoard:
        """An independent copy of every array."""
        return DorfBoard(*(a.copy() for a in self))


class DorfTables(NamedTuple):
    """The constant tables of one game (``DorfromantikGame.tb``), the argument of the kernels that read
    most of them (the batched env, ``simulate``'s compiled loop): ``rot_edges`` int8[tiles, 6, 6]
    terrain of each edge per rotation and direction (0 meadow .. 5 river), ``task_type`` int8[tiles]
    a task tile's terrain (0 for landscape tiles), ``flag`` int8[tiles] a flag's terrain (0 none),
    ``tile_sig`` int64[tiles, 6] the rail/river edge classes of
    :func:`envs.dorfromantik.legal.tile_signatures`, ``markers`` the (5, 5) marker values and
    ``rules`` int32[3] the setup numbers of :func:`setup`."""

    rot_edges: np.ndarray
    task_type: np.ndarray
    flag: np.ndarray
    tile_sig: np.ndarray
    markers: np.ndarray
    rules: np.ndarray


def new_arrays() -> DorfBoard:
    """Empty arrays of one game: cells, frontier, placed, uf, tasks, deck, meta (a :class:`DorfBoard`,
    e.g. the scratch board of the playouts)."""
    cells = np.full((GRID_CELLS, 4), -1, np.int16)
    cells[:, 1:3] = 0
    return DorfBoard(cells, np.zeros(MAX_FRONTIER, np.int32), np.zeros((MAX_PLACED, 3), np.int32),
                     np.zeros((3, MAX_NODES), np.int16), np.zeros((NUM_TASK, 4), np.int16),
                     np.zeros(DECK_SIZE, np.int16), np.zeros(META_SIZE, np.int32))


@njit(cache=True)
def cell_q(cell: int) -> int:
    return cell % GRID_SIDE - GRID_RADIUS


@njit(cache=True)
def cell_r(cell: int) -> int:
    return cell // GRID_SIDE - GRID_RADIUS


@njit(cache=True)
def setup(cells, frontier, placed, uf, tasks, deck, meta, markers, rules, players, stream) -> None:
    """Shuffle both stacks and the marker piles, set landscape tiles aside and open the origin;
    :func:`advance` then draws the first tile.

    ``markers`` is the (5, 5) marker-value table of the data file and ``rules`` its int32 (3,) setup
    numbers (:data:`RULE_NAMES`: tiles set aside unseen, open-task limit, forced task turns), both as
    ``DorfData`` gives them. ``cells`` must be empty (fresh or cleared with :func:`clear_game`).
    """
    for i in range(NUM_LAND):
        deck[i] = i
    for i in range(NUM_TASK):
        deck[DECK_TASK + i] = NUM_LAND + i
    for t in range(5):
        for k in range(5):
            deck[DECK_MARKER + 5 * t + k] = markers[t, k]
    shuffle_prefix(deck[0:NUM_LAND], NUM_LAND, stream)
    shuffle_prefix(deck[DECK_TASK:DECK_MARKER], NUM_TASK, stream)
    for t in range(5):
        shuffle_prefix(deck[DECK_MARKER + 5 * t:DECK_MARKER + 5 * t + 5], 5, stream)
    meta[:] = 0
    meta[M_UNSEEN] = rules[0]
    meta[M_OPEN_LIMIT] = rules[1]
    meta[M_FORCED] = rules[2]
    meta[M_LAND_POS] = rules[0]
    meta[M_PLAYERS] = players
    meta[M_DRAWN] = -1
    frontier[0] = ORIGIN
    cells[ORIGIN, 3] = 0
    meta[M_FRONT] = 1


@hot_jit
def clear_game(cells, frontier, placed, meta) -> None:
    """Empty the board of a finished game so its arrays can host the next one."""
    for i in range(meta[M_FRONT]):
        cells[frontier[i], 3] = -1
    for p in range(meta[M_PLACED]):
        c = placed[p, 0]
        cells[c, 0] = -1
        cells[c, 1] = 0
        cells[c, 2] = 0
        cells[c, 3] = -1
    meta[M_FRONT] = 0
    meta[M_PLACED] = 0


@hot_jit
def uf_root(uf, x: int) -> int:
    """Root of node x (path halving)."""
    while uf[0, x] != x:
        uf[0, x] = uf[0, uf[0, x]]
        x = uf[0, x]
    return x


@hot_jit
def uf_join(uf, a: int, b: int) -> None:
    """Merge the groups of a and b, adding tile counts and open-edge counts."""
    ra = uf_root(uf, a)
    rb = uf_root(uf, b)
    if ra == rb:
        return
    if uf[1, ra] < uf[1, rb]:
        ra, rb = rb, ra
    uf[0, rb] = ra
    uf[1, ra] += uf[1, rb]
    uf[2, ra] += uf[2, rb]


@hot_jit
def fits(cells, rot_edges, tile: int, rot: int, cell: int) -> bool:
    """Edge matching against every placed neighbour: a rail edge only against rail, a river edge only
    against river; forest, field, village and meadow meet anything."""
    for d in range(6):
        n = cell + DIR_OFFSETS[d]
        nt = cells[n, 0]
        if nt >= 0:
            a = rot_edges[tile, rot, d]
            b = rot_edges[nt, cells[n, 1], (d + 3) % 6]
            if (a >= RAIL or b >= RAIL) and a != b:
                return False
    return True


@hot_jit
def group_after(cells, uf, rot_edges, tile: int, rot: int, cell: int, terr: int, out) -> None:
    """Tile count and open-edge count of the ``terr`` group holding the piece of ``tile`` if it were
    placed at ``cell`` with ``rot`` (nothing is changed). ``out[0]`` = size, ``out[1]`` = open edges."""
    size = 1
    open_edges = 0
    # roots touched through a matching edge (joined) and the neighbours' terr edges facing the cell
    r0 = -1
    r1 = -1
    r2 = -1
    r3 = -1
    r4 = -1
    r5 = -1
    for d in range(6):
        n = cell + DIR_OFFSETS[d]
        nt = cells[n, 0]
        mine = rot_edges[tile, rot, d]
        if nt < 0:
            if mine == terr:
                open_edges += 1
            continue
        if mine != terr or rot_edges[nt, cells[n, 1], (d + 3) % 6] != terr:
            continue
        root = uf_root(uf, cells[n, 2] * 5 + terr - 1)
        if root == r0 or root == r1 or root == r2 or root == r3 or root == r4 or root == r5:
            open_edges -= 1
            continue
        size += uf[1, root]
        open_edges += uf[2, root] - 1
        if r0 < 0:
            r0 = root
        elif r1 < 0:
            r1 = root
        elif r2 < 0:
            r2 = root
        elif r3 < 0:
            r3 = root
        elif r4 < 0:
            r4 = root
        else:
            r5 = root
    # a joined group may also face the cell with a terr edge that meets another terrain of the new tile
    if r0 >= 0:
        for d in range(6):
            n = cell + DIR_OFFSETS[d]
            nt = cells[n, 0]
            if nt < 0 or rot_edges[tile, rot, d] == terr:
                continue
            if rot_edges[nt, cells[n, 1], (d + 3) % 6] != terr:
                continue
            root = uf_root(uf, cells[n, 2] * 5 + terr - 1)
            if root == r0 or root == r1 or root == r2 or root == r3 or root == r4 or root == r5:
                open_edges -= 1
    out[0] = size
    out[1] = open_edges


@hot_jit
def task_ok(cells, uf, rot_edges, tile: int, rot: int, cell: int, terr: int, target: int, out) -> bool:
    """Decision 4: a new task tile's own group may neither exceed its target nor close below it."""
    group_after(cells, uf, rot_edges, tile, rot, cell, terr, out)
    if out[0] > target:
        return False
    if out[1] == 0 and out[0] < target:
        return False
    return True


@njit(cache=True)
def legal_moves(cells, frontier, uf, meta, rot_edges, task_type, mask) -> int:
    """Fill ``mask[slot, rot]`` (bool, MAX_FRONTIER x 6) for the drawn tile over the frontier slots and
    return the number of legal placements. A task tile must respect decision 4 unless no placement
    can, in which case every edge-legal placement is allowed (its task then fails at once)."""
    tile = meta[M_DRAWN]
    n_front = meta[M_FRONT]
    for i in range(n_front):
        for rot in range(6):
            mask[i, rot] = False
    if tile < 0 or meta[M_OVER] != 0:
        return 0
    count = 0
    for i in range(n_front):
        cell = frontier[i]
        for rot in range(6):
            if fits(cells, rot_edges, tile, rot, cell):
                mask[i, rot] = True
                count += 1
    terr = task_type[tile]
    if terr == 0 or count == 0:
        return count
    out = np.zeros(2, np.int64)
    target = meta[M_MARKER]
    kept = 0
    for i in range(n_front):
        for rot in range(6):
            if mask[i, rot]:
                if task_ok(cells, uf, rot_edges, tile, rot, frontier[i], terr, target, out):
                    kept += 1
                else:
                    mask[i, rot] = False
    if kept > 0:
        return kept
    for i in range(n_front):  # decision 4 fallback: any edge-legal placement
        for rot in range(6):
            mask[i, rot] = fits(cells, rot_edges, tile, rot, frontier[i])
    return count


@hot_jit
def any_fit(cells, frontier, meta, rot_edges, tile: int) -> bool:
    for i in range(meta[M_FRONT]):
        for rot in range(6):
            if fits(cells, rot_edges, tile, rot, frontier[i]):
                return True
    return False


@hot_jit
def _frontier_remove(cells, frontier, meta, cell: int) -> None:
    slot = cells[cell, 3]
    last = meta[M_FRONT] - 1
    moved = frontier[last]
    frontier[slot] = moved
    cells[moved, 3] = slot
    cells[cell, 3] = -1
    meta[M_FRONT] = last


@hot_jit
def check_tasks(uf, tasks, meta) -> None:
    """Decision 6: every open task completes at exactly its target, fails above it or when closed below."""
    for k in range(meta[M_TASKS]):
        if tasks[k, 3] != 0:
            continue
        root = uf_root(uf, tasks[k, 0])
        size = uf[1, root]
        target = tasks[k, 2]
        if size == target:
            tasks[k, 3] = 1
            meta[M_TASK_POINTS + tasks[k, 1] - 1] += target
            meta[M_OPEN_TASKS] -= 1
            meta[M_DONE] += 1
        elif size > target or uf[2, root] == 0:
            tasks[k, 3] = 2
            meta[M_OPEN_TASKS] -= 1
            meta[M_FAILED] += 1


@hot_jit
def place(cells, frontier, placed, uf, tasks, meta, rot_edges, task_type, cell: int, rot: int) -> None:
    """Put the drawn tile on ``cell`` (must be legal), merge its pieces into the groups it touches,
    register a new task and run the task checks. Does not draw the next tile (see :func:`advance`)."""
    tile = meta[M_DRAWN]
    p = meta[M_PLACED]
    cells[cell, 0] = tile
    cells[cell, 1] = rot
    cells[cell, 2] = p
    placed[p, 0] = cell
    placed[p, 1] = tile
    placed[p, 2] = rot
    meta[M_PLACED] = p + 1
    _frontier_remove(cells, frontier, meta, cell)
    base = p * 5
    for t in range(5):
        uf[0, base + t] = base + t
        uf[1, base + t] = 0
        uf[2, base + t] = 0
    for d in range(6):
        a = rot_edges[tile, rot, d]
        if a > 0:
            uf[1, base + a - 1] = 1
    for d in range(6):
        a = rot_edges[tile, rot, d]
        n = cell + DIR_OFFSETS[d]
        nt = cells[n, 0]
        if nt < 0:
            if a > 0:
                uf[2, uf_root(uf, base + a - 1)] += 1
            if cells[n, 3] < 0:
                slot = meta[M_FRONT]
                frontier[slot] = n
                cells[n, 3] = slot
                meta[M_FRONT] = slot + 1
            continue
        b = rot_edges[nt, cells[n, 1], (d + 3) % 6]
        if b > 0:
            nb_node = cells[n, 2] * 5 + b - 1
            uf[2, uf_root(uf, nb_node)] -= 1
            if a == b:
                uf_join(uf, base + a - 1, nb_node)
    if uf[1, base + RAIL - 1] > 0:
        size = uf[1, uf_root(uf, base + RAIL - 1)]
        if size > meta[M_MAX_RAIL]:
            meta[M_MAX_RAIL] = size
    if uf[1, base + RIVER - 1] > 0:
        size = uf[1, uf_root(uf, base + RIVER - 1)]
        if size > meta[M_MAX_RIVER]:
            meta[M_MAX_RIVER] = size
    q = cell_q(cell)
    r = cell_r(cell)
    if p == 0:
        meta[M_QMIN] = q
        meta[M_QMAX] = q
        meta[M_RMIN] = r
        meta[M_RMAX] = r
    else:
        meta[M_QMIN] = min(meta[M_QMIN], q)
        meta[M_QMAX] = max(meta[M_QMAX], q)
        meta[M_RMIN] = min(meta[M_RMIN], r)
        meta[M_RMAX] = max(meta[M_RMAX], r)
    terr = task_type[tile]
    if terr > 0:
        k = meta[M_TASKS]
        tasks[k, 0] = base + terr - 1
        tasks[k, 1] = terr
        tasks[k, 2] = meta[M_MARKER]
        tasks[k, 3] = 0
        meta[M_TASKS] = k + 1
        meta[M_OPEN_TASKS] += 1
    check_tasks(uf, tasks, meta)
    meta[M_TURN] += 1
    meta[M_DRAWN] = -1
    meta[M_MARKER] = 0


@njit(cache=True)
def must_draw_task(meta) -> bool:
    """The draw rule: a task tile in the first turns, then whenever fewer than the limit of open tasks
    are on the board and task tiles remain (decision 7)."""
    if meta[M_TASK_POS] >= NUM_TASK:
        return False
    if meta[M_TURN] < meta[M_FORCED]:
        return True
    return meta[M_OPEN_TASKS] < meta[M_OPEN_LIMIT]


@njit(cache=True)
def advance(cells, frontier, deck, meta, rot_edges, task_type) -> None:
    """Draw by the draw rule until a tile with a legal position is in hand (a tile without any is set
    aside, decision 5) or a landscape tile is needed and none is left (the end, decision 7)."""
    while True:
        if must_draw_task(meta):
            tile = deck[DECK_TASK + meta[M_TASK_POS]]
            meta[M_TASK_POS] += 1
            t = np.int64(task_type[tile]) - 1
            marker = deck[DECK_MARKER + 5 * t + meta[M_MARKER_POS + t]]
            meta[M_MARKER_POS + t] += 1
        else:
            if meta[M_LAND_POS] >= NUM_LAND:
                meta[M_OVER] = 1
                meta[M_DRAWN] = -1
                meta[M_MARKER] = 0
                return
            tile = deck[meta[M_LAND_POS]]
            meta[M_LAND_POS] += 1
            marker = 0
        meta[M_DRAWN] = tile
        meta[M_MARKER] = marker
        if any_fit(cells, frontier, meta, rot_edges, tile):
            return
        meta[M_SET_ASIDE] += 1


@njit(cache=True)
def score_breakdown(cells, placed, uf, meta, flag, out) -> None:
    """Current score: ``out[0:5]`` task points per type, ``out[5:8]`` flag points (forest, field,
    village: a flag scores its area's tile count only when the area is closed), ``out[8]`` longest
    rail, ``out[9]`` longest river, ``out[10]`` the total."""
    for i in range(SCORE_SIZE):
        out[i] = 0
    for t in range(5):
        out[S_TASKS + t] = meta[M_TASK_POINTS + t]
    for p in range(meta[M_PLACED]):
        f = np.int64(flag[placed[p, 1]])
        if f > 0:
            root = uf_root(uf, p * 5 + f - 1)
            if uf[2, root] == 0:
                out[S_FLAGS + f - 1] += uf[1, root]
    out[S_RAIL] = meta[M_MAX_RAIL]
    out[S_RIVER] = meta[M_MAX_RIVER]
    total = 0
    for i in range(S_TOTAL):
        total += out[i]
    out[S_TOTAL] = total


@njit(cache=True)
def random_placement(cells, frontier, uf, meta, rot_edges, task_type, mask, stream, out2) -> int:
    """A uniformly random legal placement ``slot * 6 + rot`` of the drawn tile.

    Proposals are drawn uniformly over (frontier slot, rotation) and kept when legal, which is uniform
    over the legal set; after 24 rejections the full mask is built (this also covers decision 4's
    fallback, which rejection sampling alone cannot see)."""
    tile = meta[M_DRAWN]
    n_front = meta[M_FRONT]
    terr = task_type[tile]
    target = meta[M_MARKER]
    for _ in range(24):
        k = np.int64(randint(stream, n_front * 6))
        slot = k // 6
        rot = k - slot * 6
        cell = frontier[slot]
        if not fits(cells, rot_edges, tile, rot, cell):
            continue
        if terr > 0 and not task_ok(cells, uf, rot_edges, tile, rot, cell, terr, target, out2):
            continue
        return k
    count = legal_moves(cells, frontier, uf, meta, rot_edges, task_type, mask)
    k = np.int64(randint(stream, count))
    for i in range(n_front):
        for rot in range(6):
            if mask[i, rot]:
                if k == 0:
                    return i * 6 + rot
                k -= 1
    return -1


@njit(cache=True)
def play_random(cells, frontier, placed, uf, tasks, deck, meta, rot_edges, task_type, stream,
                mask, log) -> int:
    """Play the game to its end with uniformly random legal placements; ``log[i] = (cell, rot)`` of
    each placement made here. Returns the number of placements made."""
    out2 = np.zeros(2, np.int64)
    n = 0
    while meta[M_OVER] == 0:
        k = random_placement(cells, frontier, uf, meta, rot_edges, task_type, mask, stream, out2)
        cell = frontier[k // 6]
        rot = k % 6
        if n < log.shape[0]:
            log[n, 0] = cell
            log[n, 1] = rot
        n += 1
        place(cells, frontier, placed, uf, tasks, meta, rot_edges, task_type, cell, rot)
        advance(cells, frontier, deck, meta, rot_edges, task_type)
    return n


@njit(cache=True)
def run_random_games(n_games: int, seed_stream, markers, rules, rot_edges, task_type, flag, players: int,
                     totals) -> None:
    """Set up and play ``n_games`` whole random games from one stream (benchmarks, statistics);
    ``totals[g]`` receives game g's final score."""
    cells = np.full((GRID_SIDE * GRID_SIDE, 4), -1, np.int16)
    for c in range(cells.shape[0]):
        cells[c, 1] = 0
        cells[c, 2] = 0
    frontier = np.zeros(MAX_FRONTIER, np.int32)
    placed = np.zeros((MAX_PLACED, 3), np.int32)
    uf = np.zeros((3, MAX_NODES), np.int16)
    tasks = np.zeros((NUM_TASK, 4), np.int16)
    deck = np.zeros(DECK_SIZE, np.int16)
    meta = np.zeros(META_SIZE, np.int32)
    mask = np.zeros((MAX_FRONTIER, 6), np.bool_)
    log = np.zeros((0, 2), np.int32)
    out = np.zeros(SCORE_SIZE, np.int64)
    for g in range(n_games):
        clear_game(cells, frontier, placed, meta)
        setup(cells, frontier, placed, uf, tasks, deck, meta, markers, rules, players, seed_stream)
        advance(cells, frontier, deck, meta, rot_edges, task_type)
        play_random(cells, frontier, placed, uf, tasks, deck, meta, rot_edges, task_type, seed_stream,
                    mask, log)
        score_breakdown(cells, placed, uf, meta, flag, out)
        totals[g] = out[S_TOTAL]


# ---- greedy evaluation ----------------------------------------------------------------------------

@njit(cache=True)
def board_planes(placed, uf, tasks, meta, rot_edges, flag, cq: int, cr: int, radius: int, planes) -> None:
    """Fill the board planes of the observation (``planes`` float32 (34, side, side), zeroed here):
    0 occupied, 1 + 5*d + t-1 edge toward d has terrain t, 32 open task (tiles missing / 6), 33 flag.
    Plane 31 (legal positions) is left to the caller."""
    side = 2 * radius + 1
    planes[:] = 0.0
    for p in range(meta[M_PLACED]):
        cell = placed[p, 0]
        wq = cell % GRID_SIDE - GRID_RADIUS - cq + radius
        wr = cell // GRID_SIDE - GRID_RADIUS - cr + radius
        if wq < 0 or wq >= side or wr < 0 or wr >= side:
            continue
        tile = placed[p, 1]
        rot = placed[p, 2]
        planes[0, wr, wq] = 1.0
        for d in range(6):
            t = rot_edges[tile, rot, d]
            if t > 0:
                planes[1 + 5 * d + t - 1, wr, wq] = 1.0
        if flag[tile] > 0:
            planes[33, wr, wq] = 1.0
    for k in range(meta[M_TASKS]):
        if tasks[k, 3] != 0:
            continue
        cell = placed[tasks[k, 0] // 5, 0]
        wq = cell % GRID_SIDE - GRID_RADIUS - cq + radius
        wr = cell // GRID_SIDE - GRID_RADIUS - cr + radius
        if wq < 0 or wq >= side or wr < 0 or wr >= side:
            continue
        missing = tasks[k, 2] - uf[1, uf_root(uf, tasks[k, 0])]
        planes[32, wr, wq] = max(missing, 0) / 6.0
