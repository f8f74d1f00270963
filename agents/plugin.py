"""What the agents package offers the envs (see :mod:`envs.core.policies`): the agent builder for
opponent specs and the compiled greedy rollouts, registered on import of ``agents`` and through the
``meeplelab.plugins`` entry point."""

from __future__ import annotations

import importlib
from typing import Any

from agents.base import make_agent
from envs.core import policies

#: games whose greedy agent has a compiled playout: module with ``greedy_rollout(game, state, seed)``
GREEDY_ROLLOUTS = {"cartographers": "agents.greedy.cartographers", "cascadia": "agents.greedy.cascadia",
                   "dorfromantik": "agents.greedy.dorfromantik"}


def _greedy_rollout(module_name: str, **options: Any):
    def rollout(game: Any, state: Any, seed: int) -> Any:
        return importlib.import_module(module_name).greedy_rollout(game, state, seed, **options)
    return rollout


def register() -> None:
    """Register the agent builder and the greedy rollouts with the envs."""
    policies.register_agent_builder(make_agent)
    policies.register_rollout("cartographers", "greedy", _greedy_rollout(GREEDY_ROLLOUTS["cartographers"]))
    policies.register_rollout("cascadia", "greedy", _greedy_rollout(GREEDY_ROLLOUTS["cascadia"], epsilon=0.0))
    policies.register_rollout("dorfromantik", "greedy", _greedy_rollout(GREEDY_ROLLOUTS["dorfromantik"]))
