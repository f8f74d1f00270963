"""Compiled candidate features of Cartographers: one row per legal decision, read on the map after it.

A candidate (terrain option x shape option x orientation x anchor, or a 1x1 fallback cell) is drawn
on a scratch copy of the decision map, as the greedy evaluation does
(:func:`agents.greedy.cartographers_kernels.score_all`), and described by the columns of
:data:`FEATURES`. The first :data:`N_GREEDY` columns are the greedy valuation's own terms, unweighted,
so that a linear model with :func:`greedy_weights` gives back the greedy value of
:func:`agents.greedy.cartographers_kernels.map_value` (edicts weighted ``1`` this season and
``future`` per later season that scores them, i.e. ``decay`` 1); the rest describe the map in ways the
greedy valuation ignores.

Ambush decisions (a neighbour's monster drawn on another map) have no features: the learned agent
plays them as greedy does.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from agents.greedy import cartographers_kernels as G
from agents.learned import cartographers_patterns as P
from agents.search.flat import begin_playout, paired_playout, playout_totals
from envs.cartographers.kernels import (
    _SIZ,
    C_COIN,
    C_NTERR,
    C_TERR,
    EMPTY,
    FALLBACK_BASE,
    M_ACTOR,
    M_CAP,
    M_CARD,
    M_PHASE,
    M_RUINS,
    M_SEASON,
    M_TIME,
    N_CELLS,
    PHASE_EXPLORE,
    PHASE_OVER,
    SCRATCH,
    _neighbor,
    _place_action,
    enumerate_legal,
    label_terrain,
    monster_penalty,
    score_card_into,
    step,
)
from envs.core.rng import next_u64

#: (name, meaning) of every column, in order
FEATURES: tuple[tuple[str, str], ...] = (
    ("now_A", "points of edict A on the map after the move, if A scores this season (else 0)"),
    ("now_B", "the same for edict B"),
    ("now_C", "the same for edict C"),
    ("now_D", "the same for edict D"),
    ("later_A", "points of edict A after the move times the later seasons that score A"),
    ("later_B", "the same for edict B"),
    ("later_C", "the same for edict C"),
    ("later_D", "the same for edict D"),
    ("now_lines", "progress toward unfinished lines (Borderlands, The Broken Road) of this season's edicts"),
    ("now_barony", "progress toward the next larger square (Lost Barony) of this season's edicts"),
    ("now_clusters", "progress of village clusters (Wildholds, Greengold Plains) of this season's edicts"),
    ("now_stoneside", "progress of forests toward a second mountain (Stoneside Forest) this season"),
    ("later_lines", "line progress times the later seasons that score the card"),
    ("later_barony", "square progress times the later seasons that score the card"),
    ("later_clusters", "village cluster progress times the later seasons that score the card"),
    ("later_stoneside", "forest link progress times the later seasons that score the card"),
    ("coin_seasons", "coins gained by the move times the season ends still to come (this one included)"),
    ("monster_seasons", "empty cells touching a monster after the move times the season ends to come"),
    ("small_holes", "empty cells in empty regions of at most 2 cells"),
    ("ruins_covered", "empty ruins cells covered when no ruins card asks for it"),
    # descriptors the greedy valuation ignores
    ("coins", "coins gained by the move"),
    ("monster_cells", "empty cells touching a monster after the move"),
    ("holes_1", "empty regions of exactly 1 cell"),
    ("holes_2", "empty cells in empty regions of exactly 2 cells"),
    ("holes_3_4", "empty cells in empty regions of 3 or 4 cells"),
    ("regions", "number of empty regions"),
    ("cells_drawn", "cells the move fills"),
    ("season_ends", "1 when this move ends the season (its time reaches the threshold)"),
    ("now_if_ends", "this season's edict points when the move ends the season (else 0)"),
    ("now_x_time_left", "this season's edict points times the share of the season's time left after it"),
    ("mountain_1_seasons", "unpaid mountains with one empty neighbour left, times the season ends to come"),
    ("mountain_2_seasons", "unpaid mountains with two empty neighbours left, times the season ends to come"),
    ("ruins_open", "empty ruins cells left after the move"),
    ("border_empty", "empty cells on the map's border after the move"),
    ("next_A", "points of edict A after the move if next season scores it (else 0)"),
    ("next_B", "the same for edict B"),
    ("next_C", "the same for edict C"),
    ("next_D", "the same for edict D"),
) + tuple((f"card_now_{c}", f"points of scoring card {c} after the move if it scores this season")
          for c in range(16)) + tuple(
    (f"card_later_{c}", f"points of scoring card {c} after the move times the later seasons that score it")
    for c in range(16))
N_FEATURES = len(FEATURES)
#: the first columns are the greedy valuation's own terms
N_GREEDY = 20
(F_NOW, F_LATER, F_NOW_PROGRESS, F_LATER_PROGRESS, F_COIN_SEASONS, F_MONSTER_SEASONS, F_SMALL_HOLES,
 F_RUINS_COVERED) = (0, 4, 8, 12, 16, 17, 18, 19)
(F_COINS, F_MONSTER, F_HOLES_1, F_HOLES_2, F_HOLES_3_4, F_REGIONS, F_CELLS, F_SEASON_ENDS, F_NOW_IF_ENDS,
 F_NOW_TIME_LEFT, F_MOUNTAIN_1, F_MOUNTAIN_2, F_RUINS_OPEN, F_BORDER_EMPTY) = range(20, 34)
#: per edict letter, points if next season scores it; per scoring card, points now and later
F_NEXT, F_CARD_NOW, F_CARD_LATER = 34, 38, 54

#: the progress kind of each scoring card (-1: none): 0 lines, 1 barony, 2 clusters, 3 stoneside
PROGRESS_KIND = np.array([-1, -1, -1, 3, -1, -1, -1, -1, 2, -1, 2, -1, 0, 1, 0, -1], dtype=np.int64)
#: greedy weights that switch every progress term on with weight 1 (to read them unweighted)
UNIT_PROGRESS = G.DEFAULT_WEIGHTS.copy()
UNIT_PROGRESS[[G.W_LINES, G.W_BARONY, G.W_CLUSTERS, G.W_STONESIDE]] = 1.0


class FeatureDecision(NamedTuple):
    """The arrays of one exploring decision that every candidate's :func:`describe_map` reads, in this
    order: ``drawn`` int8[121] (the decision map with the candidate drawn on it), ``ruins`` bool[121]
    and ``mountains`` int16[M] (``tb``), ``done`` bool[M] (the seat's mountains already paid),
    ``edicts`` int8[4], ``now``, ``later`` and ``nxt`` float64[4] (:func:`season_counts`), ``scratch``
    int32[SCRATCH]. :func:`candidate_features` builds it once per decision (compiled code passes a
    ``typing.NamedTuple`` like a tuple, at no cost)."""

    drawn: np.ndarray
    ruins: np.ndarray
    mountains: np.ndarray
    done: np.ndarray
    edicts: np.ndarray
    now: np.ndarray
    later: np.ndarray
    nxt: np.ndarray
    scratch: np.ndarray


class LabelRows(NamedTuple):
    """The rows :func:`label_game` writes, one per valued candidate, in this order: ``groups``
    int64[cap] (decision id), ``phases`` int64[cap] (season), ``feats`` float32[cap, N_FEATURES],
    ``targets`` float32[cap] (mean paired-playout total of the acting seat); for a pattern table's fit
    (:mod:`agents.learned.cartographers_patterns`; arrays with no rows: not written) ``befores`` and
    ``afters`` int8[cap, 121] (the coded map before and after the candidate) and ``scoring``
    int8[cap, 8] (:func:`agents.learned.cartographers_patterns.decision_scoring`)."""

    groups: np.ndarray
    phases: np.ndarray
    feats: np.ndarray
    targets: np.ndarray
    befores: np.ndarray
    afters: np.ndarray
    scoring: np.ndarray


class Valuation(NamedTuple):
    """What a learned candidate model values a decision with: the linear weights ``theta``
    (float64[4, N_FEATURES], one row per season) and a pattern table with its windows' rings
    (:mod:`agents.learned.cartographers_patterns`; a table with no rows adds nothing)."""

    theta: np.ndarray
    table: np.ndarray
    ring: np.ndarray


def valuation(theta: np.ndarray, table: np.ndarray | None = None) -> Valuation:
    """The :class:`Valuation` of linear weights ``theta`` and an optional pattern table."""
    theta = np.ascontiguousarray(theta, dtype=np.float64).reshape(4, N_FEATURES)
    if table is None or table.shape[0] == 0:
        return Valuation(theta, P.empty_table(), P.window_rings(1))
    table = np.ascontiguousarray(table, dtype=np.float64)
    return Valuation(theta, table, P.window_rings(table.shape[1]))


def greedy_weights(w: np.ndarray) -> np.ndarray:
    """The linear weights (float64[N_FEATURES]) under which the features give the greedy value of
    weights ``w`` (``hole_size`` 2 and ``decay`` 1 only: the features are read at those)."""
    if w[G.W_HOLE_SIZE] != 2.0 or w[G.W_DECAY] != 1.0:
        raise ValueError("the candidate features read small holes of <= 2 cells and decay 1")
    theta = np.zeros(N_FEATURES)
    theta[F_NOW:F_NOW + 4] = 1.0
    theta[F_LATER:F_LATER + 4] = w[G.W_FUTURE]
    kinds = w[[G.W_LINES, G.W_BARONY, G.W_CLUSTERS, G.W_STONESIDE]]
    theta[F_NOW_PROGRESS:F_NOW_PROGRESS + 4] = kinds
    theta[F_LATER_PROGRESS:F_LATER_PROGRESS + 4] = w[G.W_FUTURE] * kinds
    theta[F_COIN_SEASONS] = w[G.W_COIN]
    theta[F_MONSTER_SEASONS] = -w[G.W_MONSTER]
    theta[F_SMALL_HOLES] = -w[G.W_HOLE]
    theta[F_RUINS_COVERED] = -w[G.W_RUIN]
    return theta


@njit(cache=True)
def season_counts(seasons: np.ndarray, season: int) -> tuple[np.ndarray, np.ndarray]:
    """Per edict letter: 1 if it scores this season (``now``), how many later seasons score it, and
    1 if the next season scores it."""
    now = np.zeros(4, np.float64)
    later = np.zeros(4, np.float64)
    nxt = np.zeros(4, np.float64)
    now[seasons[season, 1]] = 1.0
    now[seasons[season, 2]] = 1.0
    for s in range(season + 1, 4):
        later[seasons[s, 1]] += 1.0
        later[seasons[s, 2]] += 1.0
    if season < 3:
        nxt[seasons[season + 1, 1]] = 1.0
        nxt[seasons[season + 1, 2]] = 1.0
    return now, later, nxt


@njit(cache=True)
def _mountains_close(grid: np.ndarray, mountains: np.ndarray, done: np.ndarray) -> tuple[int, int]:
    """Unpaid mountains with exactly one, and exactly two, empty orthogonal neighbours."""
    one = two = 0
    for m in range(mountains.shape[0]):
        if done[m]:
            continue
        empty = 0
        for k in range(4):
            nb = _neighbor(mountains[m], k)
            if nb >= 0 and grid[nb] == EMPTY:
                empty += 1
        if empty == 1:
            one += 1
        elif empty == 2:
            two += 1
    return one, two


@njit(cache=True)
def describe_map(dec: FeatureDecision, seasons_left: int, gain: int, covered: int, ncells: int,
                 time_left: float, ends: bool, row: np.ndarray) -> None:
    """Write the features of the map ``dec.drawn`` (the decision map after a move that gains ``gain``
    coins, covers ``covered`` ruins cells the rules did not ask for and fills ``ncells`` cells) into
    ``row`` (float32[N_FEATURES]); ``time_left`` is the fraction of the season's time left after it."""
    drawn, ruins, mountains, done, edicts = dec.drawn, dec.ruins, dec.mountains, dec.done, dec.edicts
    now, later, nxt, scratch = dec.now, dec.later, dec.nxt, dec.scratch
    row[:] = 0.0
    for e in range(4):
        if now[e] == 0.0 and later[e] == 0.0:
            continue
        card = edicts[e]
        points = score_card_into(card, drawn, ruins, scratch)
        row[F_NOW + e] = now[e] * points
        row[F_LATER + e] = later[e] * points
        row[F_NEXT + e] = nxt[e] * points
        row[F_CARD_NOW + card] = now[e] * points
        row[F_CARD_LATER + card] = later[e] * points
        kind = PROGRESS_KIND[card]
        if kind >= 0:
            progress = G.progress_value(card, drawn, mountains, UNIT_PROGRESS, scratch)
            row[F_NOW_PROGRESS + kind] += now[e] * progress
            row[F_LATER_PROGRESS + kind] += later[e] * progress
    monsters = monster_penalty(drawn)
    row[F_COIN_SEASONS] = seasons_left * gain
    row[F_MONSTER_SEASONS] = seasons_left * monsters
    n = label_terrain(drawn, EMPTY, scratch)
    for i in range(n):
        size = scratch[_SIZ + i]
        if size <= 2:
            row[F_SMALL_HOLES] += size
        if size == 1:
            row[F_HOLES_1] += 1.0
        elif size == 2:
            row[F_HOLES_2] += size
        elif size <= 4:
            row[F_HOLES_3_4] += size
    row[F_REGIONS] = n
    row[F_RUINS_COVERED] = covered
    row[F_COINS] = gain
    row[F_MONSTER] = monsters
    row[F_CELLS] = ncells
    now_points = row[F_NOW] + row[F_NOW + 1] + row[F_NOW + 2] + row[F_NOW + 3]
    if ends:
        row[F_SEASON_ENDS] = 1.0
        row[F_NOW_IF_ENDS] = now_points
    row[F_NOW_TIME_LEFT] = now_points * time_left
    one, two = _mountains_close(drawn, mountains, done)
    row[F_MOUNTAIN_1] = seasons_left * one
    row[F_MOUNTAIN_2] = seasons_left * two
    ruins_open = 0
    border = 0
    for cell in range(N_CELLS):
        if drawn[cell] != EMPTY:
            continue
        if ruins[cell]:
            ruins_open += 1
        r, c = cell // 11, cell % 11
        if r == 0 or r == 10 or c == 0 or c == 10:
            border += 1
    row[F_RUINS_OPEN] = ruins_open
    row[F_BORDER_EMPTY] = border


@njit(cache=True)
def candidate_features(st, tb, buf: np.ndarray, actions: np.ndarray, feats: np.ndarray) -> int:
    """Write every legal action of the current exploring decision and its features into ``actions``
    (int64[>= MAX_CANDIDATES]) and ``feats`` (float32[>= MAX_CANDIDATES, N_FEATURES]); the same
    actions in the same order as :func:`agents.greedy.cartographers_kernels.score_candidates`.
    Returns the count (0 when the game is over or the decision is an ambush)."""
    return described_candidates(st, tb, buf, actions, feats, np.ones(0, np.bool_))


@njit(cache=True)
def described_candidates(st, tb, buf: np.ndarray, actions: np.ndarray, feats: np.ndarray,
                         wanted: np.ndarray) -> int:
    """:func:`candidate_features` describing only the candidates ``i`` with ``wanted[i]`` (every one
    when ``wanted`` is empty): the other rows of ``feats`` are left as they were. Describing a map
    is most of a learned decision's cost, so a policy that values a few candidates skips the rest."""
    every = wanted.shape[0] == 0
    meta, cards, pl_cells = st[6], tb[2], tb[5]
    if meta[M_PHASE] != PHASE_EXPLORE:
        return 0
    p = meta[M_ACTOR]  # the exploring seat draws on its own map
    grid = st[0][p]
    ruins, mountains, done, edicts = tb[0], tb[1], st[2][p], st[5]
    season = meta[M_SEASON]
    seasons_left = 4 - season
    now, later, nxt = season_counts(tb[3], season)
    cap = meta[M_CAP]
    room = cap < 0 or st[1][p] < cap
    card = meta[M_CARD]
    ruins_required = meta[M_RUINS] != 0
    threshold = tb[3][season, 0]
    time_after = meta[M_TIME]  # the card's time was added when it was revealed
    ends = time_after >= threshold
    time_left = max(threshold - time_after, 0) / threshold
    drawn = grid.copy()
    scratch = np.empty(SCRATCH, np.int32)
    n = enumerate_legal(grid, ruins, cards, tb[4], tb[6], card, ruins_required, buf, False)
    dec = FeatureDecision(drawn, ruins, mountains, done, edicts, now, later, nxt, scratch)
    count = 0
    if n > 0:
        for i in range(n):
            k = buf[i, 0]
            pid = buf[i, 1]
            ncells = pl_cells[pid, 7]
            covered = 0 if ruins_required else G.ruins_covered(ruins, pl_cells[pid], ncells)
            for t in range(cards[card, C_NTERR]):
                terrain = cards[card, C_TERR + t]
                for j in range(ncells):
                    drawn[pl_cells[pid, j]] = terrain
                gain = G.new_mountain_coins(drawn, mountains, done)
                if cards[card, C_COIN + k] != 0:
                    gain += 1
                if not room:
                    gain = 0
                actions[count] = _place_action(t, k, pl_cells[pid, 5], pl_cells[pid, 6])
                if every or wanted[count]:
                    describe_map(dec, seasons_left, gain, covered, ncells, time_left, ends, feats[count])
                for j in range(ncells):
                    drawn[pl_cells[pid, j]] = grid[pl_cells[pid, j]]
                count += 1
        return count
    for cell in range(N_CELLS):  # 1x1 fallback: any empty cell in forest, village, farm, water or monster
        if grid[cell] != EMPTY:
            continue
        for t in range(5):
            terrain = 1 + t
            drawn[cell] = terrain
            gain = G.new_mountain_coins(drawn, mountains, done) if room else 0
            covered = 1 if ruins[cell] else 0
            actions[count] = FALLBACK_BASE + t * N_CELLS + cell
            if every or wanted[count]:
                describe_map(dec, seasons_left, gain, covered, 1, time_left, ends, feats[count])
            drawn[cell] = grid[cell]
            count += 1
    return count


@njit(cache=True)
def candidate_values(st, tb, model: Valuation, buf: np.ndarray, actions: np.ndarray, feats: np.ndarray,
                     values: np.ndarray) -> int:
    """Lists the candidates (``actions``, ``feats``) with their values ``features @ theta[season]``
    plus the pattern table's change (``values``) and returns how many there are (0 for an ambush or
    the game's end)."""
    n = candidate_features(st, tb, buf, actions, feats)
    if n == 0:
        return 0
    value_rows(st, tb, model, actions, feats, np.arange(n), values)
    return n


@njit(cache=True)
def value_rows(st, tb, model: Valuation, actions: np.ndarray, feats: np.ndarray, rows: np.ndarray,
               values: np.ndarray) -> None:
    """``values[i]`` := ``feats[i] @ theta[season]`` plus the pattern table's change of ``actions[i]``,
    for each candidate row ``i`` of ``rows`` (int64) of the exploring decision of ``st``."""
    meta = st[6]
    season = meta[M_SEASON]
    row = model.theta[season]
    for i in rows:
        v = 0.0
        for j in range(row.shape[0]):
            v += feats[i, j] * row[j]
        values[i] = v
    if model.table.shape[0] > 0:
        scoring = np.empty(8, np.int8)
        P.decision_scoring(st[5], tb[3], season, scoring)
        deltas = np.empty(rows.shape[0])
        P.candidate_deltas(model.table, model.ring, tb, st[0][meta[M_ACTOR]], meta[M_CARD], scoring, season,
                           actions[rows], rows.shape[0], deltas)
        for j in range(rows.shape[0]):
            values[rows[j]] += deltas[j]


@njit(cache=True)
def best_candidate(st, tb, model: Valuation, buf: np.ndarray, actions: np.ndarray, feats: np.ndarray,
                   values: np.ndarray) -> int:
    """The action of the candidate with the highest value (:func:`candidate_values`; first on ties),
    or -1 when the decision has no candidates (an ambush or the game's end)."""
    n = candidate_values(st, tb, model, buf, actions, feats, values)
    if n == 0:
        return -1
    best = 0
    best_value = -np.inf
    for i in range(n):
        if values[i] > best_value:
            best_value = values[i]
            best = i
    return actions[best]


@njit(cache=True)
def reranked_candidate(st, tb, model: Valuation, w: np.ndarray, width: int, buf: np.ndarray,
                       actions: np.ndarray, feats: np.ndarray, values: np.ndarray, greedy_values: np.ndarray,
                       ) -> int:
    """The learned choice among the ``width`` candidates greedy ``w`` values best (ties: the listing
    order): only those are described and valued (:func:`candidate_values`' value; first on ties), so
    a decision costs about a greedy one plus ``width`` learned rows. An ambush is greedy's; -1 when
    the game is over. With ``width`` >= the candidates it is :func:`best_candidate`'s action."""
    n = G.score_candidates(st, tb, w, buf, actions, greedy_values)
    if n == 0:
        return -1
    meta = st[6]
    if meta[M_PHASE] != PHASE_EXPLORE:
        return actions[np.argmax(greedy_values[:n])]
    wanted = np.zeros(n, np.bool_)
    if width >= n:
        wanted[:] = True
    else:
        order = np.argsort(-greedy_values[:n], kind="mergesort")
        for j in range(width):
            wanted[order[j]] = True
    described_candidates(st, tb, buf, actions, feats, wanted)
    chosen = np.flatnonzero(wanted)
    value_rows(st, tb, model, actions, feats, chosen, values)
    best = chosen[0]
    for i in chosen:
        if values[i] > values[best]:
            best = i
    return actions[best]


@njit(cache=True)
def reranked_playout(st, tb, model: Valuation, w: np.ndarray, width: int, stop_season: int) -> None:
    """:func:`linear_playout` with :func:`reranked_candidate`'s choices: the learned model picks among
    greedy ``w``'s ``width`` best candidates (ambushes as greedy draws them)."""
    buf = np.empty((4096, 2), np.int32)
    actions = np.empty(G.MAX_CANDIDATES, np.int64)
    feats = np.empty((G.MAX_CANDIDATES, N_FEATURES), np.float32)
    values = np.empty(G.MAX_CANDIDATES, np.float64)
    greedy_values = np.empty(G.MAX_CANDIDATES, np.float64)
    meta = st[6]
    while meta[M_PHASE] != PHASE_OVER and meta[M_SEASON] < stop_season:
        step(st, tb, reranked_candidate(st, tb, model, w, width, buf, actions, feats, values, greedy_values))


@njit(cache=True)
def linear_playout(st, tb, model: Valuation, w: np.ndarray, stop_season: int) -> None:
    """Play ``st`` with the learned policy ``model`` in every seat (:func:`best_candidate`; ambushes as
    greedy ``w`` draws them) to the end, or until season ``stop_season`` begins (4: the end)."""
    buf = np.empty((4096, 2), np.int32)
    actions = np.empty(G.MAX_CANDIDATES, np.int64)
    feats = np.empty((G.MAX_CANDIDATES, N_FEATURES), np.float32)
    values = np.empty(G.MAX_CANDIDATES, np.float64)
    meta = st[6]
    while meta[M_PHASE] != PHASE_OVER and meta[M_SEASON] < stop_season:
        action = best_candidate(st, tb, model, buf, actions, feats, values)
        if action < 0:
            action = G.greedy_action(st, tb, w, buf, actions, values)
        step(st, tb, action)


@njit(cache=True)
def linear_paired_playout(st, det, work, tb, model: Valuation, w: np.ndarray, action: int, seed: np.uint64,
                          stop_season: int, out: np.ndarray) -> None:
    """:func:`agents.search.flat.paired_playout` with the learned policy ``model`` playing after
    ``action`` instead of greedy (the flat search's ``rollout=learned``): the same future for the
    same ``seed``, the same cut at ``stop_season`` and the same totals (``out``)."""
    begin_playout(st, det, work, tb, action, seed)
    linear_playout(work, tb, model, w, stop_season)
    playout_totals(work, tb, out)


@njit(cache=True)
def reranked_paired_playout(st, det, work, tb, model: Valuation, w: np.ndarray, width: int, action: int,
                            seed: np.uint64, stop_season: int, out: np.ndarray) -> None:
    """:func:`linear_paired_playout` played on by :func:`reranked_playout` (the model choosing among
    greedy ``w``'s ``width`` best candidates)."""
    begin_playout(st, det, work, tb, action, seed)
    reranked_playout(work, tb, model, w, width, stop_season)
    playout_totals(work, tb, out)


@njit(cache=True)
def _top_candidates(values: np.ndarray, n: int, width: int) -> np.ndarray:
    """Indices of the ``width`` best of ``values[:n]``, the first best first, then by value."""
    order = np.argsort(-values[:n], kind="mergesort")
    return order[:min(width, n)]


@njit(cache=True)
def label_game(st, det, work, tb, model: Valuation, width: int, futures: int, w: np.ndarray,
               stream: np.ndarray, group0: int, labels: LabelRows, horizon: int) -> int:
    """Play ``st`` to the end with the learned policy ``model`` in every seat (ambushes as greedy
    ``w`` plays them) and, at each exploring decision, value its ``width`` best candidates by
    ``futures`` paired playouts (:func:`agents.search.flat.paired_playout`: the hidden cards
    resampled from one seed per future, the same for every candidate, then greedy ``w`` to the end,
    or with ``horizon`` H > 0 until the season H seasons after the decision's begins, the seasons left
    valued on the map there as the flat search's ``horizon=H`` values them).
    Writes one row per valued candidate into ``labels`` (:class:`LabelRows`; decision ids from
    ``group0``; the coded maps only when its ``befores`` has rows) and returns the row count;
    ``width`` 0 only plays the game. Called once per game
    from Python: the record's type check (about 1.5 us) does not show."""
    groups, phases, feats_out, targets, befores, afters, scoring = labels
    patterns = befores.shape[0] > 0
    buf = np.empty((4096, 2), np.int32)
    actions = np.empty(G.MAX_CANDIDATES, np.int64)
    feats = np.empty((G.MAX_CANDIDATES, N_FEATURES), np.float32)
    values = np.empty(G.MAX_CANDIDATES, np.float64)
    gvalues = np.empty(G.MAX_CANDIDATES, np.float64)
    seats = st[0].shape[0]
    out = np.zeros(seats)
    sums = np.zeros(G.MAX_CANDIDATES)
    meta = st[6]
    rows = 0
    group = group0
    while meta[M_PHASE] != PHASE_OVER:
        n = candidate_values(st, tb, model, buf, actions, feats, values)
        if n == 0:
            step(st, tb, G.greedy_action(st, tb, w, buf, actions, gvalues))
            continue
        top = _top_candidates(values, n, max(width, 1))
        if width > 0 and top.shape[0] > 1:
            actor = meta[M_ACTOR]
            m = top.shape[0]
            sums[:m] = 0.0
            stop = 4 if horizon <= 0 else min(4, meta[M_SEASON] + horizon)
            for _ in range(futures):
                seed = next_u64(stream)
                for k in range(m):
                    paired_playout(st, det, work, tb, w, actions[top[k]], seed, stop, out)
                    sums[k] += out[actor]
            for k in range(m):
                groups[rows] = group
                phases[rows] = meta[M_SEASON]
                feats_out[rows] = feats[top[k]]
                targets[rows] = sums[k] / futures
                if patterns:
                    P.encode_map(st[0][actor], tb[0], befores[rows])
                    afters[rows] = befores[rows]
                    P.draw_coded(tb, meta[M_CARD], actions[top[k]], afters[rows])
                    P.decision_scoring(st[5], tb[3], meta[M_SEASON], scoring[rows])
                rows += 1
            group += 1
        step(st, tb, actions[top[0]])
    return rows
