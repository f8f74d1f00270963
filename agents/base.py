"""The Agent protocol and the registry that builds agents by name.

An agent is built for one game (``make_agent("mcts:simulations=400", game)``) and answers
``act(state, legal_mask, rng) -> action``. ``rng`` is the seat's own numpy Generator, so an
agent's randomness is reproducible from the game seed and independent of other seats.
Agents must never read the hidden future of ``state``; planners call ``game.determinize``.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol, runtime_checkable

import numpy as np

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
    "mcts": "agents.mcts:MCTSAgent",
    "ppo": "agents.ppo.agent:make_ppo",
}


#: agents whose spec starts with a bare path: ``ppo:runs/train/x`` means ``ppo:path=runs/train/x``
PATH_AGENTS = ("ppo",)


def parse_agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"mcts:simulations=400,rollout=greedy"`` into a name and typed options."""
    spec = spec.strip()
    if not spec:
        raise ConfigError("empty agent name")
    name, _, rest = spec.partition(":")
    options: dict[str, Any] = {}
    if rest:
        for index, part in enumerate(rest.split(",")):
            key, eq, raw = part.partition("=")
            if index == 0 and not eq and key.strip() and name.strip().lower() in PATH_AGENTS:
                options["path"] = key.strip()
                continue
            if not eq or not key.strip():
                raise ConfigError(f"agent option {part!r} in {spec!r} is not of the form key=value")
            options[key.strip()] = _parse_value(raw.strip())
    return name.strip().lower(), options


def _parse_value(raw: str) -> Any:
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw


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
    try:
        return factory(game, **options)
    except TypeError as exc:
        raise ConfigError(f"bad options for agent {name!r}: {exc}") from exc


def agent_label(spec: str | dict[str, Any]) -> str:
    """The display label of an agent spec: its ``label=`` option or a short automatic name such as
    ``mcts(8, greedy)`` (see :mod:`agents.labels`)."""
    from agents.labels import agent_label as label_of

    return label_of(spec)
