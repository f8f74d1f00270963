"""The Agent protocol and the registry that builds agents by name.

An agent is built for one game (``make_agent("mcts:simulations=400", game)``) and answers
``act(state, legal_mask, rng) -> action``. ``rng`` is the seat's own numpy Generator, so an
agent's randomness is reproducible from the game seed and independent of other seats.
Agents must never read the hidden future of ``state``; planners call ``game.determinize``.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agents.labels import agent_label  # noqa: F401  (re-exported: agents.base.agent_label)
from agents.spec import PATH_AGENTS, parse_agent_spec  # noqa: F401  (re-exported)
from envs.core.errors import ConfigError
from envs.core.game import Game, State


@runtime_checkable
class Agent(Protocol):
    """What every agent offers."""

    name: str

    def act(self, state: State, legal_mask: np.ndarray, rng: np.random.Generator) -> int:
        """Choose a legal action for the current player of ``state``."""
        ...


#: agent name -> "module:factory"; the factory is called as factory(game, **options).
AGENTS: dict[str, str] = {
    "random": "agents.random:RandomAgent",
    "greedy": "agents.greedy:make_greedy",
    "mcts": "agents.search.mcts:MCTSAgent",
    # one name per search (agents/search/names.py); each equals an mcts spec with its switches set
    "uct": "agents.search.names:uct",
    "puct": "agents.search.names:puct",
    "root": "agents.search.names:root",
    "flat": "agents.search.names:flat",
    "turn": "agents.search.names:turn",
    "placement": "agents.search.names:placement",
    "ppo": "agents.learned.ppo_agent:make_ppo",
    "learned": "agents.learned.agent:make_learned",
}


def make_agent(spec: str | dict[str, Any], game: Game) -> Agent:
    """Build an agent from ``"name:key=value,..."`` or ``{"name": ..., **options}`` for ``game``."""
    if isinstance(spec, dict):
        options = dict(spec)
        name = str(options.pop("name", "")).lower()
    else:
        name, options = parse_agent_spec(spec)
    options.pop("label", None)  # display only (agents.labels), never an option of the agent
    if name not in AGENTS:
        raise ConfigError(f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}")
    module_name, factory_name = AGENTS[name].split(":")
    try:
        factory = getattr(importlib.import_module(module_name), factory_name)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"agent {name!r} is not implemented yet") from exc
    unknown = _unknown_options(factory, options)
    if unknown:
        raise ConfigError(f"agent {name!r}: unknown option(s) {', '.join(unknown)}; "
                          f"known: {', '.join(_known_options(factory) or []) or 'none'}")
    try:
        return factory(game, **options)
    except TypeError as exc:
        raise ConfigError(f"bad options for agent {name!r}: {exc}") from exc


def _known_options(factory: Any) -> list[str] | None:
    """The keyword options ``factory(game, ...)`` takes, or None when it takes any (``**options``)."""
    try:
        parameters = list(inspect.signature(factory).parameters.values())[1:]  # after the game
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _unknown_options(factory: Any, options: dict[str, Any]) -> list[str]:
    known = _known_options(factory)
    return [] if known is None else sorted(set(options) - set(known))
