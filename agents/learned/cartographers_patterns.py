"""Pattern tables of Cartographers: a learned value of the map's 2x2 windows, added to the linear model.

The map (11 x 11) has 100 windows of 2 x 2 cells. Each cell reads as one of :data:`N_CODES` codes
(empty, the seven terrains, or an empty ruins cell), so a window is one of :data:`N_PATTERNS`
patterns. A pattern table (float64[:data:`N_TABLES`, rings, :data:`N_PATTERNS`]) holds one weight per
(table, ring, pattern): tables ``0..15`` belong to the scoring cards, ``16..19`` to the seasons; the
ring of a window is its distance from the map's border (0: it touches the border), capped at
``rings - 1``. The map's pattern value at a decision of season ``s`` is

    sum over windows w of
        sum_e scorings_e * table[card_e, ring(w), pattern(w)] + table[16 + s, ring(w), pattern(w)]

where ``card_e`` is edict ``e``'s scoring card and ``scorings_e`` how many season ends from ``s`` on
score it (this one included). A candidate's value is the linear model's plus the change of this
value that its drawing makes (:func:`pattern_delta`: only the windows it touches change), so the
linear model stays the base and the table learns what its columns miss (an n-tuple network's
lookup over local patterns, per scoring card). :func:`fit_table` fits a table to the residuals of
the distillation's labels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.learned.fit import TableReport, fit_pattern_table
from envs.cartographers.kernels import (
    AMBUSH_BASE,
    C_SHAPE,
    C_TERR,
    EMPTY,
    FALLBACK_BASE,
    FOREST,
    N_CELLS,
    decode_place,
)

#: cell codes: the grid's own values 0-7 (empty, forest, village, farm, water, monster, mountain,
#: wasteland) and 8 for an empty ruins cell
N_CODES = 9
N_PATTERNS = N_CODES ** 4
#: 2 x 2 windows by their top-left cell (row, column) in 0..9
N_WINDOWS = 100
#: one table per scoring card (16), then one per season (4)
N_CARD_TABLES = 16
N_TABLES = N_CARD_TABLES + 4
MAX_RINGS = 5
#: the rings of a ``patterns:`` section that names none
DEFAULT_RINGS = 3
#: the label keys a table's fit reads besides the linear model's (:func:`fit_table`)
ROW_KEYS = ("befores", "afters", "scoring")


def window_rings(rings: int) -> np.ndarray:
    """Each window's ring (int64[N_WINDOWS]): its distance from the border, capped at ``rings - 1``."""
    if isinstance(rings, bool) or not isinstance(rings, int | np.integer) or not 1 <= rings <= MAX_RINGS:
        raise ValueError(f"pattern table rings must be an integer in [1, {MAX_RINGS}], got {rings!r}")
    out = np.empty(N_WINDOWS, np.int64)
    for r in range(10):
        for c in range(10):
            out[r * 10 + c] = min(r, 9 - r, c, 9 - c, rings - 1)
    return out


def table_shape(rings: int) -> tuple[int, int, int]:
    """The shape of a table of ``rings`` rings (ValueError outside 1..MAX_RINGS)."""
    window_rings(rings)
    return N_TABLES, int(rings), N_PATTERNS


def empty_table() -> np.ndarray:
    """The table of a model without patterns (no rows: every kernel then adds nothing)."""
    return np.zeros((0, 1, N_PATTERNS), np.float64)


def trim_rows(rows: dict[str, np.ndarray], rings: int) -> dict[str, np.ndarray]:
    """``rows`` as a table with ``rings`` reads them: unchanged (a table of any window size reads the
    whole coded maps)."""
    return rows


@njit(cache=True)
def encode_map(grid: np.ndarray, ruins: np.ndarray, out: np.ndarray) -> None:
    """``out`` (int8[121]) := the cell codes of ``grid`` (an empty ruins cell reads 8)."""
    for c in range(N_CELLS):
        v = grid[c]
        out[c] = 8 if (v == EMPTY and ruins[c]) else v


@njit(cache=True)
def window_pattern(board: np.ndarray, w: int) -> int:
    """The pattern index of window ``w`` on the coded map ``board``."""
    a = (w // 10) * 11 + w % 10
    return board[a] + N_CODES * (board[a + 1] + N_CODES * (board[a + 11] + N_CODES * board[a + 12]))


@njit(cache=True)
def changed_windows(before: np.ndarray, after: np.ndarray, mark: np.ndarray, out: np.ndarray) -> int:
    """Write the windows holding a cell that differs between the coded maps into ``out`` and return
    their count (``mark`` bool[N_WINDOWS] is scratch, all False before and after)."""
    n = 0
    for cell in range(N_CELLS):
        if before[cell] == after[cell]:
            continue
        r, c = cell // 11, cell % 11
        for wr in range(max(r - 1, 0), min(r, 9) + 1):
            for wc in range(max(c - 1, 0), min(c, 9) + 1):
                w = wr * 10 + wc
                if not mark[w]:
                    mark[w] = True
                    out[n] = w
                    n += 1
    for i in range(n):
        mark[out[i]] = False
    return n


@njit(cache=True)
def pattern_delta(table: np.ndarray, ring: np.ndarray, before: np.ndarray, after: np.ndarray,
                  scoring: np.ndarray, season: int, mark: np.ndarray, wins: np.ndarray) -> float:
    """The pattern value of coded map ``after`` minus that of ``before`` at a decision of ``season``;
    ``scoring`` int8[8] holds the four edicts' cards, then how many season ends score each from
    ``season`` on (``mark`` and ``wins`` int64[N_WINDOWS] are scratch)."""
    n = changed_windows(before, after, mark, wins)
    d = 0.0
    for i in range(n):
        w = wins[i]
        k = ring[w]
        pa, pb = window_pattern(after, w), window_pattern(before, w)
        for e in range(4):
            if scoring[4 + e] != 0:
                d += scoring[4 + e] * (table[scoring[e], k, pa] - table[scoring[e], k, pb])
        d += table[N_CARD_TABLES + season, k, pa] - table[N_CARD_TABLES + season, k, pb]
    return d


@njit(cache=True)
def decision_scoring(edicts: np.ndarray, seasons: np.ndarray, season: int, out: np.ndarray) -> None:
    """``out`` (int8[8]) := the edicts' cards, then how many season ends from ``season`` on score each
    (``seasons`` is the table of which two edicts each season scores)."""
    for e in range(4):
        out[e] = edicts[e]
        out[4 + e] = 0
    for s in range(season, 4):
        out[4 + seasons[s, 1]] += 1
        out[4 + seasons[s, 2]] += 1


@njit(cache=True)
def explore_cells(tb, card: int, action: int, cells: np.ndarray) -> tuple[int, int]:
    """The cells (into ``cells``) and the terrain that exploring ``action`` draws for ``card``:
    ``(count, terrain)``, decoded as the engine's :func:`envs.cartographers.kernels.apply_decision`."""
    cards, pl_cells, pl_index = tb[2], tb[5], tb[7]
    if action >= FALLBACK_BASE:
        rel = action - FALLBACK_BASE
        cells[0] = rel % N_CELLS
        return 1, FOREST + rel // N_CELLS
    t, k, o, anchor = decode_place(action)
    pid = pl_index[cards[card, C_SHAPE + k], o, anchor]
    n = pl_cells[pid, 7]
    for j in range(n):
        cells[j] = pl_cells[pid, j]
    return n, cards[card, C_TERR + t]


@njit(cache=True)
def draw_coded(tb, card: int, action: int, board: np.ndarray) -> None:
    """Draw exploring ``action`` of ``card`` on the coded map ``board`` (in place)."""
    cells = np.empty(8, np.int64)
    n, terrain = explore_cells(tb, card, action, cells)
    for j in range(n):
        board[cells[j]] = terrain


@njit(cache=True)
def candidate_deltas(table: np.ndarray, ring: np.ndarray, tb, grid: np.ndarray, card: int,
                     scoring: np.ndarray, season: int, actions: np.ndarray, n: int, out: np.ndarray) -> None:
    """``out[i]`` := the pattern value change of drawing exploring ``actions[i]`` of ``card`` on the
    map ``grid``, for the first ``n`` actions (none of them an ambush)."""
    before = np.empty(N_CELLS, np.int8)
    encode_map(grid, tb[0], before)
    after = before.copy()
    cells = np.empty(8, np.int64)
    mark = np.zeros(N_WINDOWS, np.bool_)
    wins = np.empty(N_WINDOWS, np.int64)
    for i in range(n):
        assert actions[i] < AMBUSH_BASE
        m, terrain = explore_cells(tb, card, actions[i], cells)
        for j in range(m):
            after[cells[j]] = terrain
        out[i] = pattern_delta(table, ring, before, after, scoring, season, mark, wins)
        for j in range(m):
            after[cells[j]] = before[cells[j]]


@njit(cache=True)
def row_deltas(table: np.ndarray, ring: np.ndarray, befores: np.ndarray, afters: np.ndarray,
               scoring: np.ndarray, phases: np.ndarray) -> np.ndarray:
    """:func:`pattern_delta` of every labelled row (float64[rows])."""
    mark = np.zeros(N_WINDOWS, np.bool_)
    wins = np.empty(N_WINDOWS, np.int64)
    out = np.empty(befores.shape[0])
    for i in range(befores.shape[0]):
        out[i] = pattern_delta(table, ring, befores[i], afters[i], scoring[i], phases[i], mark, wins)
    return out


@njit(cache=True)
def _update(table: np.ndarray, ring: np.ndarray, before: np.ndarray, after: np.ndarray, scoring: np.ndarray,
            season: int, error: float, lr: float, decay: float, mark: np.ndarray, wins: np.ndarray) -> None:
    """One normalised least-mean-squares step of a row's pattern weights against ``error``."""
    n = changed_windows(before, after, mark, wins)
    norm = 1.0
    for e in range(4):
        norm += scoring[4 + e] * scoring[4 + e]
    step = lr / (2.0 * n * norm + 1.0)
    for j in range(n):
        w = wins[j]
        k = ring[w]
        pa, pb = window_pattern(after, w), window_pattern(before, w)
        for e in range(4):
            m = scoring[4 + e]
            if m != 0:
                t = scoring[e]
                table[t, k, pa] -= step * error * m + lr * decay * table[t, k, pa]
                table[t, k, pb] += step * error * m - lr * decay * table[t, k, pb]
        t = N_CARD_TABLES + season
        table[t, k, pa] -= step * error + lr * decay * table[t, k, pa]
        table[t, k, pb] += step * error - lr * decay * table[t, k, pb]


@njit(cache=True)
def fit_epoch(table: np.ndarray, ring: np.ndarray, befores: np.ndarray, afters: np.ndarray,
              scoring: np.ndarray, phases: np.ndarray, residual: np.ndarray, starts: np.ndarray,
              order: np.ndarray, lr: float, decay: float) -> float:
    """One pass over the decisions ``order`` (rows ``starts[g]:starts[g + 1]``): the table's changes,
    centred per decision, are fitted to the residuals centred per decision. Returns the squared error."""
    mark = np.zeros(N_WINDOWS, np.bool_)
    wins = np.empty(N_WINDOWS, np.int64)
    deltas = np.empty(np.max(starts[1:] - starts[:-1]))
    loss = 0.0
    for g in order:
        s, e = starts[g], starts[g + 1]
        mean_d = 0.0
        mean_r = 0.0
        for i in range(s, e):
            deltas[i - s] = pattern_delta(table, ring, befores[i], afters[i], scoring[i], phases[i], mark,
                                          wins)
            mean_d += deltas[i - s]
            mean_r += residual[i]
        mean_d /= e - s
        mean_r /= e - s
        for i in range(s, e):
            error = (deltas[i - s] - mean_d) - (residual[i] - mean_r)
            loss += error * error
            _update(table, ring, befores[i], afters[i], scoring[i], phases[i], error, lr, decay, mark, wins)
    return loss


def fit_table(rows: dict[str, np.ndarray], theta: np.ndarray, rings: int = 3, epochs: int = 20,
              lr: float = 0.01, decay: float = 1e-3, held_out: float = 0.25,
              seed: int = 0) -> tuple[np.ndarray, TableReport]:
    """Fit a pattern table to the labelled rows' targets minus the linear model ``theta``'s values
    (rows of a decision contiguous; keys ``group``, ``phase``, ``features``, ``target``, ``befores``,
    ``afters``, ``scoring``) by :func:`agents.learned.fit.fit_pattern_table`, each epoch a shuffled
    pass of :func:`fit_epoch`; an empty table when no epoch gains on held-out decisions."""
    ring = window_rings(rings)
    phases = rows["phase"].astype(np.int64)
    befores, afters, scoring = rows["befores"], rows["afters"], rows["scoring"]

    def epoch(table, residual, starts, order):
        fit_epoch(table, ring, befores, afters, scoring, phases, residual, starts, order, lr, decay)

    def deltas(table, held):
        return row_deltas(table, ring, befores[held], afters[held], scoring[held], phases[held])

    return fit_pattern_table(rows, theta, table_shape(rings), epoch, deltas, epochs, held_out, seed)
