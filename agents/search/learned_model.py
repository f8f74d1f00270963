"""The learned linear model behind a compiled search's ``model=<folder>`` option."""

from __future__ import annotations

from typing import Any

from envs.core import policies
from envs.core.errors import ConfigError
from envs.core.game import Game


def linear_model(game: Game, path: str, *methods: str) -> Any:
    """The linear candidate model of ``model=<folder>``, built as ``learned:<folder>`` through the
    registered agent builder (the learned package imports the searches, so not the other way round);
    ConfigError unless it has every one of ``methods``."""
    model = policies.build_agent(f"learned:{path}", game)
    if not all(hasattr(model, m) for m in methods):
        raise ConfigError(f"mcts: model={path!r} is not a linear candidate model (model.json) of {game.name}")
    return model
