"""Greedy agents, one module per game: ``agents.greedy.<game name>.GreedyAgent(game, **options)``.

``make_greedy(game, **options)`` is the registry factory behind the agent name ``greedy``; it
picks the module by ``game.name``. Each greedy agent maximises the immediate score change plus
cheap look-ahead features the game rewards (documented in its module) and may offer
``rank_actions(state, legal_mask) -> actions best first``, which MCTS uses as a widening prior.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.explain import ranked_values
from envs.core.errors import ConfigError
from envs.core.game import Game


class ValueGreedy:
    """Base of greedy agents that value their candidate moves: a subclass provides
    ``action_values(state) -> (actions, values)`` and gets ``act`` (the best legal action, ties
    broken by the seat's rng) and ``rank_actions`` (legal actions best first, the MCTS prior).
    With ``explaining`` set, ``act`` leaves its ranked values in ``last_explanation``."""

    explaining = False
    last_explanation: dict[str, Any] | None = None

    def action_values(self, state) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _legal_values(self, state, legal_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        actions, values = self.action_values(state)
        keep = legal_mask[actions]
        return actions[keep], values[keep]

    def rank_actions(self, state, legal_mask: np.ndarray) -> np.ndarray:
        """The actions allowed by ``legal_mask``, best first."""
        actions, values = self._legal_values(state, legal_mask)
        return actions[np.argsort(-values, kind="stable")]

    def act(self, state, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        actions, values = self._legal_values(state, legal_mask)
        if actions.size == 0:
            raise RuntimeError("no legal action: the game should be over")
        best = np.flatnonzero(values >= values.max() - 1e-9)
        choice = int(actions[best[rng.integers(best.size)]])
        if self.explaining:
            self.last_explanation = ranked_values("greedy", actions, values, choice)
        return choice


def check_game(game: Game, expected: str) -> None:
    """ConfigError unless ``game`` is the game a greedy agent was written for."""
    if getattr(game, "name", "") != expected:
        raise ConfigError(f"the {expected} greedy agent cannot play {getattr(game, 'name', game)!r}")


def parse_weights(game_name: str, options: dict[str, Any], names: Sequence[str], defaults: np.ndarray,
                  integers: Sequence[str] = ()) -> np.ndarray:
    """The weight vector of a greedy agent: ``defaults`` overridden by ``options`` (finite numbers,
    keys from ``names``; those in ``integers`` whole and >= 0). Clear ConfigErrors otherwise."""
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise ConfigError(f"greedy ({game_name}): unknown option(s) {', '.join(unknown)}; "
                          f"known: {', '.join(names)}")
    weights = np.array(defaults, dtype=np.float64)
    for key, value in options.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
            raise ConfigError(f"greedy ({game_name}): {key} must be a number, got {value!r}")
        if key in integers and (value < 0 or int(value) != value):
            raise ConfigError(f"greedy ({game_name}): {key} must be an integer >= 0, got {value!r}")
        weights[list(names).index(key)] = float(value)
    return weights


def make_greedy(game: Game, **options: Any):
    """The greedy agent of ``game`` built with ``options``; ConfigError if the game has none."""
    name = getattr(game, "name", "") or type(game).__name__
    module_name = f"agents.greedy.{name}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise ConfigError(f"no greedy agent for game {name!r} yet") from exc
        raise
    factory = getattr(module, "GreedyAgent", None)
    if factory is None:
        raise ConfigError(f"{module_name} defines no GreedyAgent")
    return factory(game, **options)
