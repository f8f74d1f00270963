"""Policies that the envs call but do not own: opponent agents built from specs, compiled
rollout policies beyond "random", and candidate views (``action_space="candidates"``).

Dependencies point down (``experiments -> agents -> envs``), so nothing in ``envs`` imports
``agents``. The agents package registers its builders here instead: on import of ``agents``, and
through the ``meeplelab.plugins`` entry point (``pyproject.toml``), which :func:`build_agent` and
:func:`rollout_policy` load the first time they find nothing registered. Another package can
register its own agents, rollouts and candidate views the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from envs.core.errors import ConfigError

if TYPE_CHECKING:
    from envs.core.candidates import CandidateView

#: builds an agent object from a spec (``"greedy"``, ``"mcts:simulations=50"`` or a dict) for a game
AgentBuilder = Callable[[Any, Any], Any]
#: finishes a determinized state (consumed) from ``seed``: final score per seat (float64)
RolloutPolicy = Callable[[Any, Any, int], Any]

_agent_builder: list[AgentBuilder] = []
_rollouts: dict[tuple[str, str], RolloutPolicy] = {}
#: a game's candidate view, or a function building it on first use
_candidate_views: dict[str, Any] = {}
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


def register_candidate_view(game_name: str, view: CandidateView | Callable[[], CandidateView]) -> None:
    """Make ``view`` (:class:`envs.core.candidates.CandidateView`, or a function without arguments
    that builds it on first use) the candidate view of ``game_name``."""
    _candidate_views[game_name] = view


def candidate_view(game_name: str) -> CandidateView:
    """The registered candidate view of ``game_name`` (ConfigError naming the games with one)."""
    if game_name not in _candidate_views:
        load_plugins()
    if game_name not in _candidate_views:
        known = ", ".join(sorted(_candidate_views)) or "none"
        raise ConfigError(f"no candidate view for game {game_name!r}; games with one: {known}")
    view = _candidate_views[game_name]
    if callable(view):
        view = _candidate_views[game_name] = view()
    return view
