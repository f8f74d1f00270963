"""The environments the generic env tests run on.

The Nim test game always; every registered meeplelab env whose env module and game engine exist
(Cartographers, Cascadia, Dorfromantik as they land), built with ``gymnasium.make``; and the
multi-agent class ``<Game>MultiAgentEnv`` of each such env module.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

import gymnasium as gym

import envs  # noqa: F401  (registers the meeplelab ids)
from envs.core.gym_env import GameEnv
from envs.core.multiagent_env import GameMultiAgentEnv
from envs.core.registry import available_games
from tests.envs.nim_game import NimGame

NIM_ID = "meeplelab-test/Nim-v0"
MEEPLELAB_IDS = {
    "meeplelab/Cartographers-v0": ("envs.cartographers.env", "cartographers", "CartographersMultiAgentEnv"),
    "meeplelab/Cascadia-v0": ("envs.cascadia.env", "cascadia", "CascadiaMultiAgentEnv"),
    "meeplelab/Dorfromantik-v0": ("envs.dorfromantik.env", "dorfromantik", "DorfromantikMultiAgentEnv"),
}


def make_nim_env(players: int = 1, **kwargs: Any) -> GameEnv:
    """The Nim game as a GameEnv (entry point of the test id)."""
    return GameEnv(NimGame(players), **kwargs)


if NIM_ID not in gym.registry:
    gym.register(id=NIM_ID, entry_point=make_nim_env)


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def landed_env_ids() -> list[str]:
    """The meeplelab env ids whose env module and game engine both exist."""
    games = set(available_games())
    return [env_id for env_id, (module, game, _) in MEEPLELAB_IDS.items()
            if game in games and _module_exists(module)]


def single_agent_cases() -> list[tuple[str, dict[str, Any]]]:
    """(env id, make kwargs) pairs for the generic single-agent tests."""
    cases = [(NIM_ID, {"players": 1}), (NIM_ID, {"players": 2}), (NIM_ID, {"players": 3, "seat": 1})]
    cases += [(env_id, {}) for env_id in landed_env_ids()]
    return cases


def multi_agent_cases() -> list[tuple[str, Callable[..., GameMultiAgentEnv], int]]:
    """(label, factory(players=..., **kw), players) triples for the multi-agent tests."""
    cases: list[tuple[str, Callable[..., GameMultiAgentEnv], int]] = [
        (f"nim-{n}p", lambda players, **kw: GameMultiAgentEnv(NimGame(players), **kw), n) for n in (2, 3)
    ]
    for env_id in landed_env_ids():
        module_name, game, class_name = MEEPLELAB_IDS[env_id]
        cls = getattr(importlib.import_module(module_name), class_name, None)
        if cls is not None:
            cases += [(f"{game}-{n}p", cls, n) for n in (2, 3)]
    return cases


def case_id(case: tuple) -> str:
    """A readable pytest id."""
    label, second = case[0], case[1]
    if isinstance(second, dict):
        return label.split("/")[-1] + "".join(f"-{k}{v}" for k, v in second.items())
    return label
