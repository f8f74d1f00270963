"""Greedy Dorfromantik agent: one compiled call values every legal placement, the best is played.

The value of a placement (``agents.greedy.dorfromantik_kernels.evaluate_placement``, computed per
frontier cell by ``agents.greedy.dorfromantik_cells``) is the immediate score change plus features,
each with a weight that is an option of the agent (defaults in ``DEFAULT_WEIGHTS``, tuned on compiled
greedy games and checked on held-out seeds):

* ``points`` (1.0): per point gained now: a task group reaching exactly its target, a flagged area
  closed, the longest rail or river grown;
* ``fail`` (0.8): per target point of an open task that the placement makes fail (overshoot, or
  its group closed below the target), including the drawn task tile itself;
* ``progress`` (4.8): per tile an open task's group gains without overshooting;
* ``match`` (0.35) / ``mismatch`` (0.125): per contact of two equal forest/field/village edges, and
  per contact where such an edge meets another terrain (which closes that edge for good);
* ``tight`` (4.0): an unfinished open task left with a single open edge (keep room for the task);
* ``line`` (0.15): per tile of the rail or river line the tile joins;
* ``new_task`` (0.6): for a drawn task tile, the open edges its group keeps (up to 4) minus half
  the tiles still missing.

``preset=selfplay`` (:data:`PRESETS`) sets the weights retuned on 2,000 compiled greedy games
(seeds 0-1999, coordinate search: each weight x0, x0.5, x0.75, x1.25, x1.5, x2, two rounds):
``fail`` and ``match`` 0, the rest as the defaults (measured in docs/search.md);
``meeplelab tune-greedy`` reproduces it. Single options override a preset.

Ties are broken uniformly with the seat's rng. The same evaluation drives the compiled greedy
rollout (``DorfromantikGame.rollout_returns(state, seed, policy="greedy")``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.greedy import ValueGreedy, check_game, parse_weights
from agents.greedy import dorfromantik_kernels as GK
from envs.core.errors import ConfigError
from envs.core.game import Game, State
from envs.core.rng import new_stream
from envs.dorfromantik import kernels as K

#: retuned on compiled greedy games (see the module docstring)
SELFPLAY_WEIGHTS = GK.DEFAULT_WEIGHTS.copy()
SELFPLAY_WEIGHTS[[GK.WEIGHT_NAMES.index(name) for name in ("fail", "match")]] = 0.0
#: named weight sets: ``greedy:preset=NAME`` and the compiled search's ``greedy=NAME``
PRESETS = {"default": GK.DEFAULT_WEIGHTS, "selfplay": SELFPLAY_WEIGHTS}


def preset_weights(preset: str) -> np.ndarray:
    """The weight vector of a named preset (:data:`PRESETS`), a copy."""
    if preset not in PRESETS:
        raise ConfigError(f"greedy (dorfromantik): unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    return PRESETS[preset].copy()


class DorfromantikGreedyAgent(ValueGreedy):
    """Plays the placement with the highest greedy value (features in the module docstring)."""

    name = "greedy"

    def __init__(self, game: Game, preset: str = "default", **weights: Any):
        check_game(game, "dorfromantik")
        self.game = game
        self.weights = parse_weights("dorfromantik", weights, GK.WEIGHT_NAMES, preset_weights(preset))
        self._mask = np.zeros((K.MAX_FRONTIER, 6), np.bool_)
        self._values = np.zeros((K.MAX_FRONTIER, 6), np.float64)

    def action_values(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """Every legal action inside the window and its greedy value."""
        game = self.game
        GK.greedy_values(state.board(), game._rot_edges, game._task_type, game._flag, self.weights,
                         self._mask, self._values)
        n = int(state.meta[K.M_FRONT])
        slots, rots = np.nonzero(self._mask[:n])
        cells = state.frontier[slots]
        cq, cr = game.window_centre(state)
        W, side = game.window_radius, game.side
        wq = cells % K.GRID_SIDE - K.GRID_RADIUS - cq + W
        wr = cells // K.GRID_SIDE - K.GRID_RADIUS - cr + W
        inside = (wq >= 0) & (wq < side) & (wr >= 0) & (wr < side)
        actions = (wr * side + wq) * 6 + rots
        return actions[inside].astype(np.int64), self._values[slots, rots][inside].copy()


GreedyAgent = DorfromantikGreedyAgent


def greedy_rollout(game: Game, state: State, seed: int) -> np.ndarray:
    """Compiled greedy playout of ``state`` (consumed) to the end with the default weights; the shared
    final score for every seat (``DorfromantikGame.rollout_returns(..., policy="greedy")``)."""
    stream = new_stream(int(seed), "dorfromantik/rollout")
    GK.play_greedy(state.cells, state.frontier, state.placed, state.uf, state.tasks, state.deck, state.meta,
                   game._rot_edges, game._task_type, game._flag, GK.DEFAULT_WEIGHTS, stream, game._mask)
    total = float(game.score_vector(state)[K.S_TOTAL])
    return np.full(game.players, total, dtype=np.float64)
