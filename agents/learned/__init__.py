"""Learned agents over candidate moves: every legal move of a decision is one row of features of
the position after it (computed by compiled kernels), and a learned model ranks the rows.

Each game has a module ``agents.learned.<game name>`` with this contract:

* ``FEATURES``: ``(name, one-line meaning)`` per feature column; ``N_FEATURES = len(FEATURES)``.
* ``N_PHASES`` and ``phase(game, state) -> int`` in ``[0, N_PHASES)``: the model keeps one weight
  row per phase of the game (for example per season), so ``theta`` is ``float64[N_PHASES, N_FEATURES]``.
* ``greedy_theta(preset) -> float64[N_PHASES, N_FEATURES]``: the weights under which the linear
  model ranks the candidates exactly as the greedy agent of that preset does (values equal up to a
  per-decision constant; tested on thousands of positions).
* ``candidates(game, state) -> (actions int64[n], features float32[n, N_FEATURES])``: the legal
  moves of the current decision (for Cascadia whole turns, see its module) and their features.
* ``LinearPolicy(game, theta)``: an agent (``act(state, legal_mask, rng) -> int``) that plays the
  candidate with the highest ``features @ theta[phase]``.
* ``label_games(game, seeds, theta, width, futures, preset, seed) -> dict``: play the games of
  ``seeds`` with ``LinearPolicy(theta)`` in every seat and, at each decision, value the top
  ``width`` candidates (by ``theta``) by ``futures`` paired playouts of the greedy ``preset`` to the
  end (the same sampled hidden order for every candidate of a decision). Rows: ``group`` (one id
  per decision), ``phase``, ``features``, ``target`` (the acting seat's mean final score by the
  game's metric). A game may take extra keyword options (Cascadia ``model_turns``, Cartographers
  ``horizon``); the distillation passes one only when it is set, and its config accepts it only for
  the games whose ``label_games`` has the keyword.
* optional, ``return_games(game, seeds, theta, explore, width, seed) -> dict``: the afterstate
  learner's self-play (Cartographers and Dorfromantik): one row per decision, the played candidate
  (the best by ``theta``, or with probability ``explore`` one of the top ``width``) and the points
  scored from it on.
* optional (Cartographers and Cascadia), a pattern table beside the weights: ``LinearPolicy(game,
  theta, table=...)`` adds a per-window pattern value, and ``label_games(..., table=...,
  patterns=True)`` also returns what the table's fit reads of each labelled candidate. The table's
  module ``agents.learned.<game name>_patterns`` (:func:`pattern_module`) has ``MAX_RINGS``,
  ``DEFAULT_RINGS``, ``ROW_KEYS`` (those label keys), ``table_shape(rings)``, ``empty_table()`` and
  ``fit_table(rows, theta, rings, epochs, lr, decay, seed=...)``.

:mod:`agents.learned.fit` fits ``theta`` to those rows; :mod:`agents.learned.model` saves and
loads a model folder; the agent name is ``learned`` (``learned:models/<folder>``).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from envs.core.errors import ConfigError

#: the games with a candidate view, by ``Game.name``
GAMES = ("cartographers", "cascadia", "dorfromantik")
#: the games whose linear models may carry a pattern table
PATTERN_GAMES = ("cartographers", "cascadia")


def game_module(name: str) -> ModuleType:
    """The candidate module of game ``name``; ConfigError for a game without one."""
    if name not in GAMES:
        raise ConfigError(f"no learned candidate model for game {name!r}; known: {', '.join(GAMES)}")
    return importlib.import_module(f"agents.learned.{name}")


def pattern_module(name: str) -> ModuleType:
    """The pattern-table module of game ``name``; ConfigError for a game without one."""
    if name not in PATTERN_GAMES:
        raise ConfigError(f"pattern tables are for {', '.join(PATTERN_GAMES)} only, not {name!r}")
    return importlib.import_module(f"agents.learned.{name}_patterns")
