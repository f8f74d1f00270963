"""Greedy Cartographers agent: one compiled call values every legal decision, the best is played.

Features (weights are options of the agent; the defaults were tuned by paired solo runs of
200-300 seeds per setting, one weight at a time, and no tried change was significantly better;
see ``DEFAULT_WEIGHTS`` in :mod:`agents.greedy.cartographers_kernels`):

* ``future`` (0.5) / ``decay`` (1.0): edict points after the move count 1 for the current
  season's two edicts plus ``future * decay ** (d - 1)`` for the season d seasons ahead that
  scores the same edict (every edict is scored in two seasons, so a card under a later edict
  is prepared for in advance);
* ``coin`` (1.0): each coin gained (coin shapes, newly surrounded mountains) is worth
  ``coin`` x the number of season ends still to come, the current one included;
* ``monster`` (1.0): each empty cell touching a monster costs ``monster`` x seasons left;
* ``hole`` (0.5) / ``hole_size`` (2): each empty cell in an empty region of at most
  ``hole_size`` cells costs ``hole`` (keeps room for big shapes);
* ``ruin`` (0.5): each empty ruins cell covered when no ruins card requires it costs ``ruin``
  (ruins cells left empty keep later ruins cards from forcing a 1x1).

* ``lines`` / ``barony`` / ``clusters`` / ``stoneside`` (0 by default): progress toward the cards
  that pay only for a finished shape (:func:`agents.greedy.cartographers_kernels.progress_value`):
  unfinished rows, columns (Borderlands) and diagonals (The Broken Road) by their cubed fill; the
  fill of the next larger square (Lost Barony); village clusters below 6 cells (Wildholds) or
  below 3 neighbouring kinds (Greengold Plains); forest reaching from one mountain toward another
  (Stoneside Forest). ``preset=progress`` sets them, with ``future`` 0.8 and ``monster`` 0.7, to
  the tuned :data:`~agents.greedy.cartographers_kernels.PROGRESS_WEIGHTS` (measured in
  docs/search.md); single options override a preset. ``preset=quick`` is ``progress`` without the
  ``hole`` term, whose floods take about a quarter of a decision: 0.72x the time as a solo player
  for -0.30 [-0.73, +0.13] points (1,000 paired games), a cheaper playout policy for the searches.

* ``contact`` (0: off): value only the placements with at least this many contacts (sides touching a
  filled cell or the map's edge), or the most any has when none reaches it: ``contact=2`` plays as
  well (+0.23 [-0.47, +0.93] over ``quick`` alone on 600 paired solo games) in 0.73x the time, ``3``
  loses 2.08 in 0.53x.

In a multiplayer ambush the agent draws the monster where it exposes most empty cells of the
target's map. Ties are broken with the seat's rng.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.greedy import ValueGreedy, check_game, parse_weights
from agents.greedy import cartographers_kernels as G
from envs.cartographers import kernels as K
from envs.core.errors import ConfigError
from envs.core.game import Game, State
from envs.core.rng import new_stream


class GreedyAgent(ValueGreedy):
    """Maximises the value of the map after the move (features in the module docstring)."""

    name = "greedy"

    def __init__(self, game: Game, preset: str = "default", **weights: Any):
        check_game(game, "cartographers")
        self.game = game
        self.weights = parse_weights("cartographers", weights, G.WEIGHT_NAMES, preset_weights(preset),
                                     integers=("hole_size", "contact"))
        self._buf = np.empty((4096, 2), dtype=np.int32)
        self._actions = np.empty(G.MAX_CANDIDATES, dtype=np.int64)
        self._values = np.empty(G.MAX_CANDIDATES, dtype=np.float64)

    def action_values(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """Every legal action of the current decision and its greedy value (copies)."""
        n = G.score_candidates(state.arrays(), self.game.tb, self.weights, self._buf, self._actions,
                               self._values)
        return self._actions[:n].copy(), self._values[:n].copy()


def preset_weights(preset: str) -> np.ndarray:
    """The weight vector of a named preset (:data:`agents.greedy.cartographers_kernels.PRESETS`)."""
    if preset not in G.PRESETS:
        raise ConfigError(f"greedy (cartographers): unknown preset {preset!r}; known: {', '.join(G.PRESETS)}")
    return G.PRESETS[preset]


def greedy_rollout(game: Game, state: State, seed: int, epsilon: float = 0.0,
                   weights: np.ndarray | None = None) -> np.ndarray:
    """Compiled greedy playout of ``state`` (consumed) to the end; final score per seat (float64).
    ``CartographersGame.rollout_returns(..., policy="greedy")`` (and so MCTS) plays through it."""
    w = G.DEFAULT_WEIGHTS if weights is None else weights
    stream = new_stream(int(seed), "greedy/rollout")
    G.greedy_playout(state.arrays(), game.tb, w, float(epsilon), stream, 4)
    return K.totals(state.record).astype(np.float64)
