"""Pattern tables of Cascadia: a learned value of each hex's neighbourhood beside the linear model.

A window is a hex of the seat's area and its six neighbours. Each cell reads as one of
:data:`N_GENERIC` codes (no tile, a token of each animal, or an empty tile with the set of animals
it takes), and per animal ``a`` as one of five: no tile, an empty tile that takes ``a``, an empty
tile that does not, a token ``a``, another token. The window's pattern for ``a`` is its seven codes
up to the hex's rotations and reflections (the wildlife cards score lines, groups and neighbours,
all symmetric): one of :data:`N_PATTERNS` classes. A table (float64[:data:`N_TABLES`, layers,
:data:`N_PATTERNS`]) holds one weight per (animal, stage, class); the stage is how many own turns
the seat has after this one (1-3, 4-9, 10 or more: :func:`stage`). A second layer (a table's
``rings`` 2 in the model file's common form) adds the habitat windows: per habitat ``h``, a tiled
hex's window reads each of its six sides as one of five codes (no tile beyond and the hex's edge is
``h``: an open end; no tile beyond, edge not ``h``; the neighbour joins ``h`` across the side; the
edge is ``h`` and the neighbour's facing edge is not; the edge is not ``h`` beside a tile), up to
the same symmetries: one of :data:`N_HABITAT_PATTERNS` classes (an untiled hex: class 0), one weight
per (habitat, stage, class) in layer 1. The board's pattern value is the sum over every window,
animal and habitat, and a candidate turn's value is the linear model's plus the change of this
value that its tile and token make (:func:`turn_deltas`: only the windows around the two changed
hexes). On the seat's last turn the table adds nothing: its change of score is exact.
:func:`fit_table` fits a table to the residuals of the distillation's labels, as
:func:`agents.learned.cartographers_patterns.fit_table` does for Cartographers maps.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.learned.cascadia_kernels import F_TURNS_LEFT, decode_turn
from agents.learned.fit import TableReport, fit_pattern_table
from envs.cascadia import kernels as K
from envs.cascadia.data import NUM_CELLS

N_ANIMALS = 5
N_HABITATS = 5
#: a labelled window's columns: its class per animal, then per habitat
N_COLUMNS = N_ANIMALS + N_HABITATS
#: cell codes: 0 no tile, 1..5 a token (animal + 1), 5 + mask an empty tile taking the animals of ``mask``
N_GENERIC = 37
#: per-animal codes: no tile, empty taking it, empty not taking it, its token, another token
N_CODES = 5
N_RAW = N_CODES ** 7
#: stages by the seat's own turns after this one: 1-3, 4-9, 10 or more (none on the last turn)
N_STAGES = 3
N_TABLES = N_ANIMALS * N_STAGES
#: the table's second axis (Cartographers' rings) is its layers: 1 the wildlife windows, 2 also the habitats'
MAX_RINGS = 2
DEFAULT_RINGS = 1
#: the most windows a turn changes (the tile's hex, the token's, and their neighbours)
MAX_WINDOWS = 14
#: the label key a table's fit reads besides the linear model's: per row the classes of the windows
#: the turn changes, before and after (:func:`turn_records`)
ROW_KEYS = ("windows",)


def _animal_codes() -> np.ndarray:
    """int8[N_ANIMALS, N_GENERIC]: each animal's code of each cell code."""
    out = np.zeros((N_ANIMALS, N_GENERIC), np.int8)
    for a in range(N_ANIMALS):
        for w in range(N_ANIMALS):
            out[a, 1 + w] = 3 if w == a else 4
        for mask in range(1, 32):
            out[a, 5 + mask] = 1 if (mask >> a) & 1 else 2
    return out


def _smallest_turn(ring: np.ndarray) -> np.ndarray:
    """int64[n]: the smallest of ``sum ring[:, d] * 5^d`` over the 12 rotations and reflections of each
    row of ``ring`` (int64[n, 6], one code per direction)."""
    powers = N_CODES ** np.arange(6, dtype=np.int64)
    best = ring @ powers
    for k in range(6):
        for mirror in (False, True):
            order = [(k - i) % 6 if mirror else (i + k) % 6 for i in range(6)]
            best = np.minimum(best, ring[:, order] @ powers)
    return best


def _classes(centred: bool) -> tuple[np.ndarray, int]:
    """Each raw window to its class under the hex's 12 symmetries, classes numbered 0.. in order of
    their smallest raw window, and the count: with ``centred`` (wildlife) raw = centre + 5 * sum of
    neighbour d's code * 5^d over N_RAW windows, else (habitats) sum of side d's code * 5^d."""
    size = N_RAW if centred else N_CODES ** 6
    raw = np.arange(size, dtype=np.int64)
    digits = np.stack([(raw // N_CODES ** i) % N_CODES for i in range(7 if centred else 6)], axis=1)
    best = digits[:, 0] + N_CODES * _smallest_turn(digits[:, 1:]) if centred else _smallest_turn(digits)
    smallest, index = np.unique(best, return_inverse=True)
    return index.astype(np.int32), int(smallest.size)


ANIMAL_CODE = _animal_codes()
CLASS_OF, N_PATTERNS = _classes(True)
HABITAT_CLASS_OF, N_HABITAT_PATTERNS = _classes(False)


def table_shape(rings: int = 1) -> tuple[int, int, int]:
    """The shape of a table of ``rings`` layers (1: wildlife windows; 2: also habitat windows)."""
    if isinstance(rings, bool) or not isinstance(rings, int | np.integer) or not 1 <= rings <= MAX_RINGS:
        raise ValueError(f"cascadia pattern tables have rings (layers) 1-{MAX_RINGS}, got {rings!r}")
    return N_TABLES, int(rings), N_PATTERNS


def trim_rows(rows: dict[str, np.ndarray], rings: int) -> dict[str, np.ndarray]:
    """``rows`` with only the window columns a table of ``rings`` layers reads (the labels record both
    layers' classes; a one-layer table reads the five animal columns, so its run keeps half)."""
    keep = N_ANIMALS * rings
    if "windows" not in rows or rows["windows"].shape[-1] <= keep:
        return rows
    return {**rows, "windows": np.ascontiguousarray(rows["windows"][..., :keep])}


def empty_table(rings: int = 1) -> np.ndarray:
    """The table of a model without patterns (no rows: every kernel then adds nothing)."""
    return np.zeros((0, table_shape(rings)[1], N_PATTERNS), np.float64)


@njit(cache=True)
def stage(turns_after: int) -> int:
    """The table stage of a turn with ``turns_after`` own turns after it (-1: the last turn)."""
    if turns_after <= 0:
        return -1
    return 0 if turns_after <= 3 else 1 if turns_after <= 9 else 2


@njit(cache=True)
def encode_area(tiles, tokens, kind_info, p, out) -> None:
    """``out`` (int8[NUM_CELLS]) := the cell codes of seat ``p``'s area."""
    for c in range(NUM_CELLS):
        k = tiles[p, c]
        if k < 0:
            out[c] = 0
        elif tokens[p, c] >= 0:
            out[c] = 1 + tokens[p, c]
        else:
            out[c] = 5 + kind_info[k, 0]


@njit(cache=True)
def window_class(board, nbr, x: int, a: int) -> int:
    """The class of animal ``a``'s window around hex ``x`` of the coded area ``board``."""
    raw = ANIMAL_CODE[a, board[x]]
    m = N_CODES
    for d in range(6):
        y = nbr[x, d]
        if y >= 0:
            raw += ANIMAL_CODE[a, board[y]] * m
        m *= N_CODES
    return CLASS_OF[raw]


@njit(cache=True)
def habitat_class(hab, nbr, x: int, h: int) -> int:
    """The class of habitat ``h``'s window around hex ``x`` of an area's edges ``hab`` (int8[cells, 6],
    -1 where no tile): 0 when ``x`` has no tile."""
    if hab[x, 0] < 0:
        return 0
    raw = 0
    m = 1
    for d in range(6):
        own = hab[x, d] == h
        y = nbr[x, d]
        if y < 0 or hab[y, 0] < 0:
            code = 1 if own else 0
        elif own:
            code = 2 if hab[y, (d + 3) % 6] == h else 3
        else:
            code = 4
        raw += code * m
        m *= N_CODES
    return HABITAT_CLASS_OF[raw]


@njit(cache=True)
def changed_windows(move, nbr, mark, out) -> int:
    """Write the window centres a move changes (the two hexes and their neighbours) into ``out`` and
    return their count (``mark`` bool[NUM_CELLS] is scratch, all False before and after)."""
    n = 0
    for j in (0, 2):
        c = move[j]
        if c < 0:
            continue
        for d in range(-1, 6):
            x = c if d < 0 else nbr[c, d]
            if x >= 0 and not mark[x]:
                mark[x] = True
                out[n] = x
                n += 1
    for i in range(n):
        mark[out[i]] = False
    return n


@njit(cache=True)
def _classes_of(board, hab, nbr, wins, n, layers: int, out) -> None:
    """``out[i]`` := the classes of window ``wins[i]``: per animal, then (``layers`` 2) per habitat."""
    for i in range(n):
        for a in range(N_ANIMALS):
            out[i, a] = window_class(board, nbr, wins[i], a)
        if layers > 1:
            for h in range(N_HABITATS):
                out[i, N_ANIMALS + h] = habitat_class(hab, nbr, wins[i], h)


@njit(cache=True)
def window_classes(board, hab, move, tb, wins, n, layers: int, before, after) -> None:
    """``before`` / ``after`` (int64[n, N_COLUMNS]) := the classes of the ``n`` windows ``wins`` before
    and after ``move`` (int64[6]: tile hex, its code, token hex or -1, its code, the tile's kind and
    rotation) on the coded area ``board`` and its edges ``hab`` (both left as they were); the habitat
    columns only with ``layers`` 2."""
    _classes_of(board, hab, tb.nbr, wins, n, layers, before)
    old_tile = board[move[0]]
    old_token = board[move[2]] if move[2] >= 0 else 0
    board[move[0]] = move[1]
    if move[2] >= 0:
        board[move[2]] = move[3]
    for d in range(6):
        hab[move[0], d] = tb.kind_edges[move[4], move[5], d]
    _classes_of(board, hab, tb.nbr, wins, n, layers, after)
    for d in range(6):
        hab[move[0], d] = -1
    if move[2] >= 0:
        board[move[2]] = old_token
    board[move[0]] = old_tile


@njit(cache=True)
def move_delta(table, board, hab, move, st: int, tb, mark, wins, before, after) -> float:
    """The pattern value change of ``move`` on the coded area ``board`` (edges ``hab``) at stage ``st``
    (0 at stage -1)."""
    if st < 0 or table.shape[0] == 0:
        return 0.0
    layers = table.shape[1]
    n = changed_windows(move, tb.nbr, mark, wins)
    window_classes(board, hab, move, tb, wins, n, layers, before, after)
    d = 0.0
    for i in range(n):
        for a in range(N_ANIMALS):
            t = a * N_STAGES + st
            d += table[t, 0, after[i, a]] - table[t, 0, before[i, a]]
        if layers > 1:
            for h in range(N_HABITATS):
                t = h * N_STAGES + st
                d += table[t, 1, after[i, N_ANIMALS + h]] - table[t, 1, before[i, N_ANIMALS + h]]
    return d


@njit(cache=True)
def turn_move(b, turn, kind_info, out) -> None:
    """``out`` (int64[6]) := the change a whole ``turn`` (market, tile, token action) makes to the
    coded area of the seat to move: (tile hex, its code, token hex or -1, the token's code, the tile's
    kind, its rotation)."""
    i, paid, kind, animal, c, r, t = decode_turn(b, turn)
    out[0] = c
    out[1] = 5 + kind_info[kind, 0]
    out[2] = t
    out[3] = 1 + animal if t >= 0 else 0
    out[4] = kind
    out[5] = r


@njit(cache=True)
def _scratch(b, kind_info):
    """The coded area of the seat to move of ``b``, a copy of its edges, and the scratch arrays of
    :func:`move_delta`."""
    p = b.ctl[K.C_CUR]
    board = np.empty(NUM_CELLS, np.int8)
    encode_area(b.tiles, b.tokens, kind_info, p, board)
    hab = b.edges[p].copy()
    mark = np.zeros(NUM_CELLS, np.bool_)
    wins = np.empty(MAX_WINDOWS, np.int64)
    before = np.empty((MAX_WINDOWS, N_COLUMNS), np.int64)
    after = np.empty((MAX_WINDOWS, N_COLUMNS), np.int64)
    return board, hab, mark, wins, before, after, np.empty(6, np.int64)


@njit(cache=True)
def turn_deltas(table, b, turns, tb, st: int, out) -> None:
    """``out[i]`` := the pattern value change of whole turn ``turns[i]`` for the seat to move of ``b``
    (``tb`` the game's :class:`~envs.cascadia.kernels.CascadiaTables`)."""
    board, hab, mark, wins, before, after, move = _scratch(b, tb.kind_info)
    for i in range(turns.shape[0]):
        turn_move(b, turns[i], tb.kind_info, move)
        out[i] = move_delta(table, board, hab, move, st, tb, mark, wins, before, after)


@njit(cache=True)
def turn_records(b, turns, tb, out) -> None:
    """The fit's rows of ``turns`` (``out``: int16[n, 2, MAX_WINDOWS, N_COLUMNS]): per turn, the classes
    (per animal, then per habitat) of the windows it changes in the area of the seat to move, before
    (``[:, 0]``) and after (``[:, 1]``), unused window slots -1."""
    board, hab, mark, wins, before, after, move = _scratch(b, tb.kind_info)
    out[:] = -1
    for i in range(turns.shape[0]):
        turn_move(b, turns[i], tb.kind_info, move)
        n = changed_windows(move, tb.nbr, mark, wins)
        window_classes(board, hab, move, tb, wins, n, 2, before, after)
        for j in range(n):
            for k in range(N_COLUMNS):
                out[i, 0, j, k] = before[j, k]
                out[i, 1, j, k] = after[j, k]


@njit(cache=True)
def record_delta(table, rec, st: int) -> float:
    """The pattern value change of recorded row ``rec`` (int16[2, MAX_WINDOWS, N_COLUMNS]) at stage ``st``."""
    if st < 0 or table.shape[0] == 0:
        return 0.0
    layers = table.shape[1]
    d = 0.0
    for i in range(MAX_WINDOWS):
        if rec[0, i, 0] < 0:
            break
        for a in range(N_ANIMALS):
            t = a * N_STAGES + st
            d += table[t, 0, rec[1, i, a]] - table[t, 0, rec[0, i, a]]
        if layers > 1:
            for h in range(N_HABITATS):
                t = h * N_STAGES + st
                d += table[t, 1, rec[1, i, N_ANIMALS + h]] - table[t, 1, rec[0, i, N_ANIMALS + h]]
    return d


@njit(cache=True)
def row_deltas(table, recs, stages) -> np.ndarray:
    """:func:`record_delta` of every labelled row (float64[rows])."""
    out = np.empty(recs.shape[0])
    for i in range(recs.shape[0]):
        out[i] = record_delta(table, recs[i], stages[i])
    return out


@njit(cache=True)
def _update(table, rec, st: int, error: float, lr: float, decay: float) -> None:
    """One normalised least-mean-squares step of a row's pattern weights against ``error``."""
    n = 0
    while n < MAX_WINDOWS and rec[0, n, 0] >= 0:
        n += 1
    layers = table.shape[1]
    step = lr / (2.0 * N_ANIMALS * layers * n + 1.0)
    for i in range(n):
        for k in range(N_ANIMALS * layers):  # layer k // 5: five columns each (animals, then habitats)
            pa, pb = rec[1, i, k], rec[0, i, k]
            if pa == pb:
                continue
            t = (k % N_ANIMALS) * N_STAGES + st
            layer = k // N_ANIMALS
            table[t, layer, pa] -= step * error + lr * decay * table[t, layer, pa]
            table[t, layer, pb] += step * error - lr * decay * table[t, layer, pb]


@njit(cache=True)
def fit_epoch(table, recs, stages, residual, starts, order, lr: float, decay: float) -> float:
    """One pass over the decisions ``order`` (rows ``starts[g]:starts[g + 1]``): the table's changes,
    centred per decision, are fitted to the residuals centred per decision (decisions of a seat's
    last turn skipped). Returns the squared error."""
    deltas = np.empty(np.max(starts[1:] - starts[:-1]))
    loss = 0.0
    for g in order:
        s, e = starts[g], starts[g + 1]
        if stages[s] < 0:
            continue
        mean_d = 0.0
        mean_r = 0.0
        for i in range(s, e):
            deltas[i - s] = record_delta(table, recs[i], stages[i])
            mean_d += deltas[i - s]
            mean_r += residual[i]
        mean_d /= e - s
        mean_r /= e - s
        for i in range(s, e):
            error = (deltas[i - s] - mean_d) - (residual[i] - mean_r)
            loss += error * error
            _update(table, recs[i], stages[i], error, lr, decay)
    return loss


def row_stages(features: np.ndarray) -> np.ndarray:
    """Each labelled row's stage (int64; -1 on the seat's last turn) from its ``turns_left`` column."""
    turns = np.rint(features[:, F_TURNS_LEFT]).astype(np.int64)
    return np.where(turns <= 0, -1, np.where(turns <= 3, 0, np.where(turns <= 9, 1, 2)))


def fit_table(rows: dict[str, np.ndarray], theta: np.ndarray, rings: int = 1, epochs: int = 20,
              lr: float = 0.01, decay: float = 1e-3, held_out: float = 0.25,
              seed: int = 0) -> tuple[np.ndarray, TableReport]:
    """Fit a pattern table to the labelled rows' targets minus the linear model ``theta``'s values
    (rows of a decision contiguous; keys ``group``, ``phase``, ``features``, ``target``, ``windows``)
    by :func:`agents.learned.fit.fit_pattern_table`, each epoch a shuffled pass of :func:`fit_epoch`;
    an empty table when no epoch gains on held-out decisions."""
    shape = table_shape(rings)
    stages = row_stages(rows["features"])
    recs = np.ascontiguousarray(rows["windows"], dtype=np.int16)
    if recs.shape[-1] < N_ANIMALS * rings:
        raise ValueError(f"cascadia patterns: {rings} layers read {N_ANIMALS * rings} window columns, the "
                         f"rows hold {recs.shape[-1]}")

    def epoch(table, residual, starts, order):
        fit_epoch(table, recs, stages, residual, starts, order, lr, decay)

    def deltas(table, held):
        return row_deltas(table, recs[held], stages[held])

    return fit_pattern_table(rows, theta, shape, epoch, deltas, epochs, held_out, seed)
