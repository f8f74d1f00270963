"""The ``learned`` agent: ``learned:models/<folder>`` plays a committed learned model of any learner.

A folder with ``model.json`` holds a linear candidate model (:mod:`agents.learned.model`; a
Cartographers one may add a pattern table); a folder
with ``policy.pt`` (or that file) a PPO network, played as ``ppo:`` plays it. Relative paths are
read from the working directory, then from the source checkout (so ``models/...`` works anywhere in
a checkout), and ``models/<folder>`` from the installed copy's shipped models (``pip install .``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.learned import game_module
from agents.learned.model import MODEL_FILE, load_model
from envs.core.errors import ConfigError
from envs.core.game import Game
from envs.core.install import CHECKOUT, installed_dir, running_from_checkout

POLICY_FILE = "policy.pt"


def resolve_model_path(path: str) -> Path:
    """``path`` as given if it exists, else inside the source checkout, else (``models/<folder>``) among
    the installed copy's shipped models; ConfigError if none has it."""
    given = Path(path).expanduser()
    if given.exists():
        return given
    if not given.is_absolute() and running_from_checkout() and (CHECKOUT / given).exists():
        return CHECKOUT / given
    shipped = installed_dir("models")
    if not given.is_absolute() and given.parts[:1] == ("models",) and shipped is not None:
        inside = shipped.joinpath(*given.parts[1:])
        if inside.exists():
            return inside
    raise ConfigError(f"learned: no model at {path!r}")


def make_learned(game: Game, path: str | None = None, redraw: str | None = None, width: Any = None) -> Any:
    """Registry factory of ``learned:<folder>``: the model's own agent, checked against ``game``.
    ``redraw`` (Cascadia linear models only): the free three-of-a-kind redraw, ``model`` (default),
    ``never`` or ``always`` (:class:`agents.learned.cascadia.LinearPolicy`). ``width`` (Cartographers
    linear models only): choose among the ``width`` candidates greedy values best, valuing only those."""
    if not path:
        raise ConfigError("learned: give the model folder, e.g. learned:models/cartographers_solo")
    where = resolve_model_path(path)
    if where.is_dir() and not (where / MODEL_FILE).is_file() and (where / POLICY_FILE).is_file():
        where = where / POLICY_FILE
    if redraw is not None and (game.name != "cascadia" or where.suffix == ".pt"):
        raise ConfigError("learned: redraw= is an option of Cascadia's linear models only")
    if width is not None and (game.name != "cartographers" or where.suffix == ".pt"):
        raise ConfigError("learned: width= is an option of Cartographers' linear models only")
    if width is not None and (isinstance(width, bool) or not isinstance(width, int) or width < 1):
        raise ConfigError(f"learned: width must be a positive integer, got {width!r}")
    if where.suffix == ".pt":
        from agents.learned.ppo_agent import make_ppo  # torch is optional: only PPO models need it

        return make_ppo(game, path=str(where))
    model = load_model(where)
    if model["game"] != game.name:
        raise ConfigError(f"learned: {str(where)!r} is a {model['game']} model, not {game.name}")
    module = game_module(game.name)
    options: dict[str, Any] = {} if redraw is None else {"redraw": str(redraw)}
    if width is not None:
        options["width"] = width
    if model["table"] is not None:
        options["table"] = model["table"]
    return module.LinearPolicy(game, model["theta"], preset=model["preset"], **options)
