"""Dorfromantik's candidate view for learned agents (contract: :mod:`agents.learned`).

A candidate is one legal placement (window cell x rotation) of the drawn tile, exactly the actions
the greedy agent values. Its feature row (:data:`FEATURES`, one compiled call per decision in
:mod:`agents.learned.dorfromantik_kernels`):

* the greedy valuation's terms, unweighted, in ``GK.WEIGHT_NAMES`` order: each column is the
  derivative of :func:`agents.greedy.dorfromantik_kernels.evaluate_placement` by that weight (the
  ``fail`` and ``mismatch`` columns are therefore negative), so ``features @ weights`` is the
  greedy value and :func:`greedy_theta` is the preset's weights in every phase;
* descriptors greedy ignores: time left, the tile and its edges, the frontier, the groups the tile
  joins, the open tasks after the placement (statuses, missing tiles, open edges) and a few terms
  times the fraction of the game left.

Phases (:func:`phase`) by landscape tiles left in the stack (45 at the start): early ``>= 30``,
middle ``15..29``, late ``< 15``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agents.greedy import dorfromantik_kernels as GK
from agents.greedy.dorfromantik import preset_weights
from agents.learned import dorfromantik_after as LA
from agents.learned import dorfromantik_columns as LC
from agents.learned import dorfromantik_kernels as LK
from agents.learned.explore import check_exploration, explore_pick
from envs.core.errors import ConfigError
from envs.core.game import Game, State
from envs.core.rng import new_stream, next_u64
from envs.dorfromantik import kernels as K

_GREEDY_MEANINGS = {
    "points": "points gained now (tasks completed exactly, flagged areas closed, longest lines grown)",
    "fail": "minus the target points of open tasks this placement makes fail (the new task's included)",
    "progress": "tiles open tasks' groups gain without overshooting",
    "match": "contacts of two equal forest/field/village edges",
    "mismatch": "minus the contacts where a forest/field/village edge meets another terrain",
    "tight": "minus the unfinished open tasks left with a single open edge",
    "line": "tiles of the rail/river groups the tile joins, minus one per line",
    "new_task": "a new task tile: its group's open edges (up to 4) minus half the tiles missing",
}
_EXTRA = (
    ("land_left", "landscape tiles left in the stack (before the next draw)"),
    ("frac_left", "fraction of the landscape stack left (time left)"),
    ("tasks_left", "task tiles left in the task stack"),
    ("task_tile", "1 when the drawn tile is a task tile"),
    ("neighbours", "placed neighbours of the cell (1-6)"),
    ("area_free", "forest/field/village edges of the tile facing empty cells"),
    ("line_free", "rail/river edges of the tile facing empty cells"),
    ("meadow_free", "meadow edges of the tile facing empty cells"),
    ("frontier", "frontier cells after the placement"),
    ("new_frontier", "frontier cells after minus before, plus one (cells the placement opened)"),
    ("group_open", "open edges of the groups the tile's pieces belong to after the placement"),
    ("largest_area", "tiles in the largest forest/field/village group the tile is part of"),
    ("areas_closed", "forest/field/village groups of the tile closed (no open edge) after it"),
    ("flag_open", "the tile's flag area size when that area is still open (0 without a flag)"),
    ("rail_len", "tiles of the tile's rail line after the placement (0 without rail)"),
    ("river_len", "tiles of the tile's river after the placement (0 without river)"),
    ("open_tasks", "open tasks after the placement"),
    ("missing", "tiles still missing over the open tasks after the placement"),
    ("task_open_edges", "open edges of the open tasks' groups after the placement"),
    ("tight_tasks", "open tasks left with exactly one open edge"),
    ("completed", "tasks this placement completes"),
    ("failed", "tasks this placement makes fail"),
    ("progress_x_left", "progress times frac_left"),
    ("match_x_left", "match times frac_left"),
    ("mismatch_x_left", "mismatch times frac_left"),
    ("missing_x_left", "missing times frac_left"),
    ("area_free_x_left", "area_free times frac_left"),
    ("new_task_x_left", "new_task times frac_left"),
)
#: (name, meaning) of every feature column
FEATURES: tuple[tuple[str, str], ...] = tuple((n, _GREEDY_MEANINGS[n]) for n in GK.WEIGHT_NAMES) + _EXTRA
N_FEATURES = len(FEATURES)
assert N_FEATURES == LK.N_COLUMNS
#: early / middle / late by landscape tiles left in the stack
N_PHASES = 3
#: the best greedy preset: the playouts that label candidates play it
DEFAULT_PRESET = "selfplay"
#: a phase starts when at most this many landscape tiles are left (middle, late)
PHASE_LAND_LEFT = LC.PHASE_LAND_LEFT

_ROWS = K.MAX_FRONTIER * 6


def phase(game: Game, state: State) -> int:
    """0 early (>= 30 landscape tiles left in the stack), 1 middle (15-29), 2 late (< 15)."""
    left = K.NUM_LAND - int(state.meta[K.M_LAND_POS])
    return 0 if left > PHASE_LAND_LEFT[0] else 1 if left > PHASE_LAND_LEFT[1] else 2


def greedy_theta(preset: str = DEFAULT_PRESET) -> np.ndarray:
    """float64[N_PHASES, N_FEATURES]: the greedy ``preset``'s weights on its terms, 0 elsewhere."""
    theta = np.zeros((N_PHASES, N_FEATURES))
    theta[:, :LK.N_GREEDY] = preset_weights(preset)
    return theta


def _check_theta(theta: np.ndarray) -> np.ndarray:
    theta = np.asarray(theta, dtype=np.float64)
    if theta.shape != (N_PHASES, N_FEATURES):
        raise ConfigError(f"dorfromantik theta must have shape {(N_PHASES, N_FEATURES)}, got {theta.shape}")
    return theta


def _rows(game: Game, state: State) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Actions, kernel cells, rotations and features of the legal placements inside the window."""
    mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
    slots = np.zeros(_ROWS, np.int64)
    rots = np.zeros(_ROWS, np.int64)
    feats = np.zeros((_ROWS, N_FEATURES), np.float32)
    n = 0
    if not game.is_over(state):
        n = LA.candidate_features(state.board(), game._rot_edges, game._task_type, game._flag, mask, slots,
                                  rots, feats)
    cells = state.frontier[slots[:n]].astype(np.int64)
    rots = rots[:n]
    cq, cr = game.window_centre(state)
    radius, side = game.window_radius, game.side
    wq = cells % K.GRID_SIDE - K.GRID_RADIUS - cq + radius
    wr = cells // K.GRID_SIDE - K.GRID_RADIUS - cr + radius
    inside = (wq >= 0) & (wq < side) & (wr >= 0) & (wr < side)
    actions = ((wr * side + wq) * 6 + rots)[inside]
    return actions.astype(np.int64), cells[inside], rots[inside], feats[:n][inside]


def candidates(game: Game, state: State) -> tuple[np.ndarray, np.ndarray]:
    """The legal placements inside the action window (the greedy agent's actions, same order) and
    their features: ``(int64[n], float32[n, N_FEATURES])``."""
    actions, _, _, feats = _rows(game, state)
    return actions, feats


def _first_best(values: np.ndarray) -> int:
    """Index of the first value within 1e-9 of the maximum."""
    return int(np.flatnonzero(values >= values.max() - 1e-9)[0])


class LinearPolicy:
    """Plays the candidate with the highest ``features @ theta[phase]`` (ties: the first best)."""

    name = "learned"

    def __init__(self, game: Game, theta: np.ndarray, preset: str = DEFAULT_PRESET):
        # every decision is a placement with candidates: ``preset`` (the model's labelling preset) is unused
        if getattr(game, "name", "") != "dorfromantik":
            raise ConfigError(f"the dorfromantik learned policy cannot play {getattr(game, 'name', game)!r}")
        self.game = game
        self.theta = _check_theta(theta)
        self._mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
        self._values = np.zeros((K.MAX_FRONTIER, 6))

    def placement_values(self, state: State) -> np.ndarray:
        """float64[MAX_FRONTIER, 6]: ``features @ theta[phase]`` of every legal placement (frontier
        slot x rotation, the whole frontier, not only the action window), -inf elsewhere."""
        values = np.full((K.MAX_FRONTIER, 6), -np.inf)
        g = self.game
        LK.linear_placement(state.board(), g._rot_edges, g._task_type, g._flag, self.theta, self._mask,
                            values)
        return values

    def playout(self, board: K.DorfBoard, work: K.DorfBoard, cell: int, rot: int, future_seed: int,
                score: np.ndarray) -> float:
        """The final total of placing the drawn tile of ``board`` (``state.board()``) at ``cell``/``rot``
        on the future of ``future_seed`` (resampled as the placement search does) and playing this
        policy to the end (:func:`agents.learned.dorfromantik_kernels.playout_linear`); ``work`` is
        ``envs.dorfromantik.kernels.new_arrays()`` scratch."""
        g = self.game
        return float(LK.playout_linear(board, work, cell, rot, np.uint64(future_seed), g._rot_edges,
                                       g._task_type, g._flag, self.theta, self._mask, self._values, score))

    def act(self, state: State, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        actions, feats = candidates(self.game, state)
        keep = legal_mask[actions]
        actions, feats = actions[keep], feats[keep]
        if actions.size == 0:
            raise RuntimeError("no legal action: the game should be over")
        values = feats.astype(np.float64) @ self.theta[phase(self.game, state)]
        return int(actions[_first_best(values)])


def _decision(game: Game, state: State, theta: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
    """Cells, rotations, features, phase and ``theta``'s values of the current decision's placements."""
    actions, cells, rots, feats = _rows(game, state)
    if actions.size == 0:
        raise RuntimeError("no legal placement inside the action window")
    ph = phase(game, state)
    return cells, rots, feats, ph, feats.astype(np.float64) @ theta[ph]


def _place(game: Game, state: State, cell: int, rot: int) -> None:
    """Place the drawn tile at ``cell`` turned ``rot`` and draw the next one."""
    K.place(state.cells, state.frontier, state.placed, state.uf, state.tasks, state.meta,
            game._rot_edges, game._task_type, cell, rot)
    K.advance(state.cells, state.frontier, state.deck, state.meta, game._rot_edges, game._task_type)


def label_games(game: Game, seeds: Sequence[int], theta: np.ndarray, width: int = 6, futures: int = 8,
                preset: str = DEFAULT_PRESET, seed: int = 0) -> dict[str, np.ndarray]:
    """Play ``seeds`` with :class:`LinearPolicy` and label the top ``width`` candidates of every
    decision by their mean final score over ``futures`` paired greedy (``preset``) playouts.

    Future ``f`` of decision ``i`` of game ``s`` is the ``f``-th draw of the stream
    ``new_stream(seed, "dorfromantik/label/{s}/{i}")``: the hidden order is resampled from it
    (:func:`agents.search.placement_kernels.determinize_deck`), identically for every candidate.
    Returns ``group``, ``phase``, ``features``, ``target`` (one row per labelled candidate, the
    policy's choice first in each group) and ``scores`` (each game's final score).

    The cost is the playouts: with ``width=6, futures=8`` a game of about 60 decisions makes about
    2,900 greedy playouts of 1.5 ms on average, 4-8 s per game on one busy core. Games are
    independent, so split ``seeds`` over processes (group ids then restart at 0 in each call)."""
    theta = _check_theta(theta)
    if width < 0 or (width > 0 and futures < 1):
        raise ConfigError(f"label_games needs width >= 0 (0: only play) and futures >= 1, "
                          f"got {width}, {futures}")
    weights = preset_weights(preset)
    work = K.new_arrays()
    mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
    score = np.zeros(K.SCORE_SIZE, np.int64)
    groups, phases, feats_out, targets = [], [], [], []
    scores = np.zeros(len(seeds), np.float64)
    group = 0
    for g, game_seed in enumerate(seeds):
        state = game.new_game(int(game_seed))
        decision = 0
        while not game.is_over(state):
            cells, rots, feats, ph, values = _decision(game, state, theta)
            best = _first_best(values)
            rest = np.argsort(-values, kind="stable")
            top = np.concatenate([[best], rest[rest != best]])[:width]
            if width == 0:  # only play the policy's move
                top = top[:0]
            stream = new_stream(int(seed), f"dorfromantik/label/{int(game_seed)}/{decision}")
            future_seeds = np.array([next_u64(stream) for _ in range(futures)], dtype=np.uint64)
            out = np.zeros((top.size, futures), np.int64)
            if top.size:
                LK.label_playouts(state.board(), work, cells[top], rots[top], future_seeds, game._rot_edges,
                                  game._task_type, game._flag, weights, mask, score, out)
                groups.append(np.full(top.size, group, np.int64))
                phases.append(np.full(top.size, ph, np.int64))
                feats_out.append(feats[top])
                targets.append(out.mean(axis=1).astype(np.float32))
            _place(game, state, int(cells[best]), int(rots[best]))
            group += 1
            decision += 1
        scores[g] = float(game.score_vector(state)[K.S_TOTAL])
    if not groups:
        return {"group": np.zeros(0, np.int64), "phase": np.zeros(0, np.int64),
                "features": np.zeros((0, N_FEATURES), np.float32), "target": np.zeros(0, np.float32),
                "scores": scores}
    return {"group": np.concatenate(groups), "phase": np.concatenate(phases),
            "features": np.concatenate(feats_out), "target": np.concatenate(targets), "scores": scores}


def return_games(game: Game, seeds: Sequence[int], theta: np.ndarray, explore: float = 0.1, width: int = 6,
                 seed: int = 0) -> dict[str, np.ndarray]:
    """Self-play for the afterstate learner: play ``seeds`` with :class:`LinearPolicy` (``theta``),
    except that with probability ``explore`` a decision plays a candidate drawn uniformly from the
    top ``width`` by ``theta``. One row per decision: the played candidate's features and, as its
    target, the points the game scores from that decision on (the final total minus the total
    before the move), so ``features @ theta`` learns the placement's points plus the value of the
    position after it. Returns ``group`` (one id per decision), ``phase``, ``features``, ``target``
    and ``scores`` (each game's final total). Exploration draws come from a generator seeded by
    ``(seed, game seed)``: the same call gives the same rows on any machine."""
    theta = _check_theta(theta)
    check_exploration(explore, width)
    phases, feats_out, befores, targets = [], [], [], []
    scores = np.zeros(len(seeds), np.float64)
    for g, game_seed in enumerate(seeds):
        state = game.new_game(int(game_seed))
        rng = np.random.default_rng([int(seed), int(game_seed)])
        start = len(befores)
        while not game.is_over(state):
            cells, rots, feats, ph, values = _decision(game, state, theta)
            pick = explore_pick(values, _first_best(values), rng, explore, width)
            phases.append(ph)
            feats_out.append(feats[pick])
            befores.append(float(game.score_vector(state)[K.S_TOTAL]))
            _place(game, state, int(cells[pick]), int(rots[pick]))
        scores[g] = float(game.score_vector(state)[K.S_TOTAL])
        targets.extend(scores[g] - b for b in befores[start:])
    n = len(befores)
    return {"group": np.arange(n, dtype=np.int64), "phase": np.asarray(phases, np.int64),
            "features": np.asarray(feats_out, np.float32).reshape(n, N_FEATURES),
            "target": np.asarray(targets, np.float32), "scores": scores}
