"""Games by name: ``make_game("cartographers", players=2)``."""

from __future__ import annotations

import importlib
from typing import Any

from envs.core.errors import ConfigError
from envs.core.game import Game

#: name -> "module:factory"; modules are imported only when a game is made.
GAMES: dict[str, str] = {
    "cartographers": "envs.cartographers.game:CartographersGame",
    "cascadia": "envs.cascadia.game:CascadiaGame",
    "dorfromantik": "envs.dorfromantik.game:DorfromantikGame",
}


def available_games() -> list[str]:
    """Names of the games whose engine is installed."""
    names = []
    for name, target in GAMES.items():
        module = target.split(":")[0]
        if importlib.util.find_spec(module) is not None:
            names.append(name)
    return names


def make_game(name: str, **options: Any) -> Game:
    """Build the rules object of game ``name`` with ``options`` (players, variants...)."""
    key = name.strip().lower()
    if key not in GAMES:
        raise ConfigError(f"unknown game {name!r}; known games: {', '.join(sorted(GAMES))}")
    module_name, factory = GAMES[key].split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise ConfigError(f"game {name!r} is not implemented yet") from exc
        raise
    cls = getattr(module, factory)
    try:
        return cls(**options)
    except TypeError as exc:
        raise ConfigError(f"bad options for game {name!r}: {exc}") from exc
