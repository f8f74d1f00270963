"""Policies that the envs call but do not own: opponent agents built from specs, and compiled
rollout policies beyond "random".

Dependencies point down (``experiments -> agents -> envs``), so nothing in ``envs`` imports
``agents``. The agents package registers its builders here instead: on import of ``agents``, and
through the ``meeplelab.plugins`` entry point (``pyproject.toml``), which :func:`build_agent` and
:func:`rollout_policy` load the first time they find nothing registered. Another package can
register its own agents and rollouts the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from envs.core.errors import ConfigError

#: builds an agent object from a spec (``"greedy"``, ``"mcts:simulations=50"`` or a dict) for a game
AgentBuilder = Callable[[Any, Any], Any]
#: finishes a determinized state (consumed) from ``seed``: final score per seat (float64)
RolloutPolicy = Callable[[Any, Any, int], Any]

_agent_builder: list[AgentBuilder] = []
_rollouts: dict[tuple[str, str], RolloutPolicy] = {}
_plugins_loaded: list[bool] = []

PLUGIN_GROUP = "meeplelab.plugins"


def register_agent_builder(builder: AgentBuilder) -> None:
    """Make ``builder(spec, game)`` the way envs turn an agent spec into an agent."""
    _agent_builder[:] = [builder]


def register_rollout(game_name: str, policy: str, rollout: RolloutPolicy) -> None:
    """Make ``game.rollout_returns(state, seed, policy)`` call ``rollout(game, state, seed)``."""
    _rollouts[(game_name, policy)] = rollout


def load_plugins() -> None:
    """Run every installed ``meeplelab.plugins`` entry point once (the agents package is one)."""
    if _plugins_loaded:
        return
    _plugins_loaded.append(True)
    for entry in entry_points(group=PLUGIN_GROUP):
        entry.load()()


def build_agent(spec: Any, game: Any) -> Any:
    """The agent of ``spec`` for ``game``, built by the registered builder."""
    if not _agent_builder:
        load_plugins()
    if not _agent_builder:
        raise ConfigError(f"no agent builder registered for spec {spec!r}: install meeplelab's agents "
                          "package (pip install .) or pass an agent object")
    return _agent_builder[0](spec, game)


def rollout_policy(game_name: str, policy: str) -> RolloutPolicy:
    """The registered rollout ``policy`` of ``game_name`` (ConfigError naming the known ones)."""
    if (game_name, policy) not in _rollouts:
        load_plugins()
    if (game_name, policy) not in _rollouts:
        known = ", ".join(rollout_names(game_name))
        raise ConfigError(f"unknown rollout policy {policy!r}; known: {known}")
    return _rollouts[(game_name, policy)]


def rollout_names(game_name: str) -> list[str]:
    """The rollout policies of ``game_name``: "random" and every registered one."""
    load_plugins()
    return ["random"] + sorted(p for g, p in _rollouts if g == game_name)
