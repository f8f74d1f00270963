"""Greedy agents, one module per game: ``agents.greedy.<game name>.GreedyAgent(game, **options)``.

``make_greedy(game, **options)`` is the registry factory behind the agent name ``greedy``; it
picks the module by ``game.name``. Each greedy agent maximises the immediate score change plus
cheap look-ahead features the game rewards (documented in its module) and may offer
``rank_actions(state, legal_mask) -> actions best first``, which MCTS uses as a widening prior.
"""

from __future__ import annotations

import importlib
from typing import Any

from envs.core.errors import ConfigError
from envs.core.game import Game


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
