"""Cartographers candidate view for learned agents (the contract is in :mod:`agents.learned`).

A candidate is one legal exploring decision (terrain x shape x orientation x anchor, or a 1x1
fallback); its features are read on the map after it (:mod:`agents.learned.cartographers_kernels`,
columns in :data:`FEATURES`). The model keeps one weight row per season (:data:`N_PHASES` = 4).
Ambush decisions of multiplayer games (drawing a monster on a neighbour's map) are played as the
greedy agent plays them.
"""

from __future__ import annotations

import numpy as np

from agents.greedy import cartographers_kernels as G
from agents.greedy.cartographers import preset_weights
from agents.learned import cartographers_kernels as CK
from agents.learned.explore import check_exploration, explore_pick
from envs.cartographers import kernels as K
from envs.cartographers.kernels import N_CELLS
from envs.core.errors import ConfigError
from envs.core.game import Game, State
from envs.core.rng import new_stream

FEATURES = CK.FEATURES
N_FEATURES = CK.N_FEATURES
N_PHASES = 4
#: the greedy preset whose moves ambushes follow and whose playouts label the candidates by default
DEFAULT_PRESET = "progress"
#: most rows one labelled game can give per unit of ``width`` (decisions of a 6-seat game, with margin)
_MAX_DECISIONS = 64


def phase(game: Game, state: State) -> int:
    """The season (0 spring .. 3 winter)."""
    return int(state.meta[K.M_SEASON])


def greedy_theta(preset: str = DEFAULT_PRESET) -> np.ndarray:
    """Weights (float64[N_PHASES, N_FEATURES]) that rank candidates as greedy ``preset`` does."""
    return np.tile(CK.greedy_weights(preset_weights(preset)), (N_PHASES, 1))


class _Buffers:
    """Scratch arrays of one candidate listing (reused between calls)."""

    def __init__(self) -> None:
        self.buf = np.empty((4096, 2), dtype=np.int32)
        self.actions = np.empty(G.MAX_CANDIDATES, dtype=np.int64)
        self.feats = np.empty((G.MAX_CANDIDATES, N_FEATURES), dtype=np.float32)
        self.values = np.empty(G.MAX_CANDIDATES, dtype=np.float64)
        self.greedy_values = np.empty(G.MAX_CANDIDATES, dtype=np.float64)


_SHARED = _Buffers()


def candidates(game: Game, state: State) -> tuple[np.ndarray, np.ndarray]:
    """The legal exploring decisions of ``state`` and their features (copies); empty for an ambush
    decision or a finished game."""
    b = _SHARED
    n = CK.candidate_features(state.arrays(), game.tb, b.buf, b.actions, b.feats)
    return b.actions[:n].copy(), b.feats[:n].copy()


class LinearPolicy:
    """Plays the candidate with the highest ``features @ theta[season]`` plus, with a pattern
    ``table`` (:mod:`agents.learned.cartographers_patterns`), the change of the map's pattern value
    (first on ties); ambushes as greedy ``preset`` does. With ``width`` it chooses among the ``width``
    candidates greedy ``preset`` values best and describes only those (:func:`CK.reranked_candidate`:
    about greedy's cost per decision)."""

    name = "learned"

    def __init__(self, game: Game, theta: np.ndarray, preset: str = DEFAULT_PRESET,
                 table: np.ndarray | None = None, width: int | None = None):
        self.game = game
        self.width = width
        self.model = CK.valuation(theta, table)
        self.theta = self.model.theta
        self.greedy = preset_weights(preset)
        self._b = _Buffers()

    def act(self, state: State, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        b = self._b
        arrays = state.arrays()
        if self.width is not None:
            action = CK.reranked_candidate(arrays, self.game.tb, self.model, self.greedy, self.width, b.buf,
                                           b.actions, b.feats, b.values, b.greedy_values)
        else:
            action = CK.best_candidate(arrays, self.game.tb, self.model, b.buf, b.actions, b.feats, b.values)
        if action < 0:
            action = G.greedy_action(arrays, self.game.tb, self.greedy, b.buf, b.actions, b.values)
        if not legal_mask[action]:
            raise RuntimeError(f"learned (cartographers): candidate {action} is not legal here")
        return int(action)

    def candidate_values(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """Every exploring decision of ``state`` and its value (copies; empty for an ambush decision or
        a finished game): what :meth:`act` maximises."""
        b = self._b
        n = CK.candidate_values(state.arrays(), self.game.tb, self.model, b.buf, b.actions, b.feats, b.values)
        return b.actions[:n].copy(), b.values[:n].copy()

    def playout(self, src: tuple, det: tuple, work: tuple, action: int, seed: int, stop_season: int,
                out: np.ndarray, width: int | None = None) -> None:
        """The flat search's playout of ``action`` from the state arrays ``src`` on the future of
        ``seed``, played on by this policy (:func:`CK.linear_paired_playout`; ``det`` and ``work`` are
        scratch copies of ``src``): every seat's total into ``out``, cut when season ``stop_season``
        begins (4: the whole game). With ``width`` the policy chooses among greedy's ``width`` best
        candidates only (:func:`CK.reranked_candidate`)."""
        if width is None:
            CK.linear_paired_playout(src, det, work, self.game.tb, self.model, self.greedy, int(action),
                                     np.uint64(seed), int(stop_season), out)
        else:
            CK.reranked_paired_playout(src, det, work, self.game.tb, self.model, self.greedy, int(width),
                                       int(action), np.uint64(seed), int(stop_season), out)


def label_games(game: Game, seeds: np.ndarray, theta: np.ndarray, width: int, futures: int,
                preset: str = DEFAULT_PRESET, seed: int = 0, horizon: int = 0,
                table: np.ndarray | None = None, patterns: bool = False) -> dict[str, np.ndarray]:
    """Rows of candidate features and paired-playout targets from the games of ``seeds`` played by
    ``LinearPolicy(theta, table=table)`` (see :mod:`agents.learned`); ``scores`` holds each game's
    final totals. ``horizon`` H > 0 cuts the playouts H seasons on, as the flat search's
    ``horizon=H`` (0: whole games). ``patterns`` adds the rows a pattern table is fitted to
    (``befores``, ``afters``, ``scoring``: :class:`agents.learned.cartographers_kernels.LabelRows`)."""
    if isinstance(horizon, bool) or not isinstance(horizon, int | np.integer) or not 0 <= horizon <= 3:
        raise ConfigError(f"learned (cartographers): horizon must be 0 (whole games) to 3, got {horizon!r}")
    model = CK.valuation(theta, table)
    w = preset_weights(preset)
    seats = game.num_players()
    cap = _MAX_DECISIONS * seats * max(width, 1)
    keys = ("group", "phase", "features", "target") + (("befores", "afters", "scoring") if patterns else ())
    chunks: dict[str, list[np.ndarray]] = {key: [] for key in keys}
    scores = np.zeros((len(seeds), seats))
    group = 0
    for g, game_seed in enumerate(seeds):
        state = game.new_game(int(game_seed))
        st = state.arrays()
        det = tuple(a.copy() for a in st)
        work = tuple(a.copy() for a in st)
        stream = new_stream(int(seed), f"learned/label/{int(game_seed)}")
        groups = np.empty(cap, np.int64)
        phases = np.empty(cap, np.int64)
        feats = np.empty((cap, N_FEATURES), np.float32)
        targets = np.empty(cap, np.float32)
        maps = cap if patterns else 0
        befores, afters = np.empty((maps, N_CELLS), np.int8), np.empty((maps, N_CELLS), np.int8)
        scoring = np.empty((maps, 8), np.int8)
        rows = CK.label_game(st, det, work, game.tb, model, int(width), int(futures), w, stream, group,
                             CK.LabelRows(groups, phases, feats, targets, befores, afters, scoring),
                             int(horizon))
        if rows:
            group = int(groups[rows - 1]) + 1
        for key, arr in (("group", groups), ("phase", phases), ("features", feats), ("target", targets),
                         ("befores", befores), ("afters", afters), ("scoring", scoring)):
            if key in chunks:
                chunks[key].append(arr[:rows])
        scores[g] = game.returns(state)
    out = {key: np.concatenate(parts) for key, parts in chunks.items()}
    out["scores"] = scores
    return out


def return_games(game: Game, seeds: np.ndarray, theta: np.ndarray, explore: float = 0.1, width: int = 8,
                 seed: int = 0) -> dict[str, np.ndarray]:
    """Self-play for the afterstate learner (contract in :mod:`agents.learned`): every seat plays
    ``LinearPolicy(theta)``, except that with probability ``explore`` an exploring decision plays a
    candidate drawn uniformly from the top ``width``; ambushes as greedy plays them. One row per
    exploring decision: the played candidate's features and the points its seat scores from that
    decision on (final total minus the seasons recorded before it). Exploration draws come from a
    generator seeded by ``(seed, game seed)``."""
    check_exploration(explore, width)
    theta = np.ascontiguousarray(theta, dtype=np.float64).reshape(N_PHASES, N_FEATURES)
    ambush = preset_weights(DEFAULT_PRESET)
    b = _Buffers()
    seats, phases, feats_out, befores, targets = [], [], [], [], []
    scores = np.zeros((len(seeds), game.num_players()))
    for g, game_seed in enumerate(seeds):
        state = game.new_game(int(game_seed))
        rng = np.random.default_rng([int(seed), int(game_seed)])
        start = len(befores)
        while not game.is_over(state):
            arrays = state.arrays()
            n = CK.candidate_features(arrays, game.tb, b.buf, b.actions, b.feats)
            if n == 0:  # an ambush: drawn as greedy draws it
                game.step(state, int(G.greedy_action(arrays, game.tb, ambush, b.buf, b.actions, b.values)))
                continue
            ph = phase(game, state)
            values = b.feats[:n].astype(np.float64) @ theta[ph]
            pick = explore_pick(values, int(np.argmax(values)), rng, explore, width)
            seat = game.current_player(state)
            seats.append(seat)
            phases.append(ph)
            feats_out.append(b.feats[pick].copy())
            befores.append(float(game.returns(state)[seat]))
            game.step(state, int(b.actions[pick]))
        scores[g] = game.returns(state)
        targets.extend(scores[g, s] - b for s, b in zip(seats[start:], befores[start:], strict=True))
    n = len(befores)
    return {"group": np.arange(n, dtype=np.int64), "phase": np.asarray(phases, np.int64),
            "features": np.asarray(feats_out, np.float32).reshape(n, N_FEATURES),
            "target": np.asarray(targets, np.float32), "scores": scores}
