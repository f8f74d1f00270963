"""Evaluation configs: what to evaluate (:class:`EvalSpec`) from the command line or a YAML file.

A YAML config may give ``game``, ``agents`` (a list or a comma-separated string), ``games``,
``seed``, ``players``, ``suite`` (a named seed suite, see :mod:`experiments.eval.suites`) and
``options`` (game options), ``seating`` ("mixed" or "same", see :mod:`experiments.eval.evaluate`) and
``metric`` (the score compared: "total" or a game's extra score such as "base"). Command-line
values win key by key. An unknown key or a value of the
wrong type raises ConfigError naming the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.base import parse_agent_spec
from agents.labels import unique_labels
from envs.core.errors import ConfigError
from envs.core.textfile import read_yaml
from experiments.eval.suites import resolve_seeds

CONFIG_KEYS = {"game": str, "agents": list, "games": int, "seed": int, "players": int,
               "suite": str, "options": dict, "seating": str, "metric": str}
SEATINGS = ("mixed", "same")


@dataclass
class EvalSpec:
    """What to evaluate: a game (with options), agents, seeds."""

    game: str
    agents: list[str]
    seeds: tuple[int, ...]
    players: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    seeds_label: str = ""
    #: "mixed": agents share tables (rotated seats); "same": each agent fills a table alone
    seating: str = "mixed"
    #: the score compared: "total", or a key of the game's ScoreSheet.extra (column x_<metric>)
    metric: str = "total"

    @property
    def metric_column(self) -> str:
        """The games.csv column holding :attr:`metric`."""
        return "total" if self.metric == "total" else f"x_{self.metric}"

    def game_options(self) -> dict[str, Any]:
        options = dict(self.options)
        if self.players is not None:
            options["players"] = self.players
        return options


def split_agents(text: str | Sequence[str]) -> list[str]:
    """``"random,mcts:simulations=64,rollout=greedy,greedy"`` -> agent specs.

    A comma starts a new agent unless the piece is ``key=value`` with no ``:`` in the key (an option
    of the previous one, whose value may hold a ``:``: ``value=ppo:runs/x``).
    """
    pieces = text.split(",") if isinstance(text, str) else list(text)
    specs: list[str] = []
    for piece in (p.strip() for p in pieces):
        if not piece:
            continue
        if "=" in piece and ":" not in piece.split("=", 1)[0] and specs:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    if not specs:
        raise ConfigError("no agents given")
    for spec in specs:
        parse_agent_spec(spec)  # raises ConfigError on malformed options
    unique_labels(specs)  # a spec listed twice, or two specs shown under one label
    return specs


def load_config(path: str | Path, keys: dict[str, type] = CONFIG_KEYS) -> dict[str, Any]:
    """Read an eval config (``keys``: the allowed keys and their types; the ladder adds its own); an
    unknown key or a value of the wrong type raises ConfigError naming the key."""
    path = Path(path)
    data = read_yaml(path, "config file")
    if not isinstance(data, dict):
        raise ConfigError(f"config {path}: expected a mapping of keys to values")
    for key, value in data.items():
        if key not in keys:
            raise ConfigError(f"config {path}: unknown key {key!r}; known keys: {', '.join(keys)}")
        expected = keys[key]
        if key == "agents" and isinstance(value, str):
            continue
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(f"config {path}: key {key!r} must be a {expected.__name__}, "
                              f"got {type(value).__name__} {value!r}")
    if "agents" in data and isinstance(data["agents"], list):
        for i, agent in enumerate(data["agents"]):
            if not isinstance(agent, str):
                raise ConfigError(f"config {path}: key 'agents' item {i} must be a string "
                                  "like 'mcts:simulations=64'")
    return data


def build_spec(game: str | None, agents: str | Sequence[str] | None, games: int | None, seed: int | None,
               players: int | None, suite: str | None = None, config: str | None = None,
               default_games: int = 100, seating: str | None = None, metric: str | None = None) -> EvalSpec:
    """Merge a YAML config with command-line values (the command line wins)."""
    data = load_config(config) if config else {}
    game = game or data.get("game")
    agents = agents or data.get("agents")
    if not game:
        raise ConfigError("no game given (argument GAME or key 'game' in --config)")
    if not agents:
        raise ConfigError("no agents given (--agents or key 'agents' in --config)")
    if suite is None and seed is None and games is None:
        suite = data.get("suite")
    if suite is None:
        seed = data.get("seed") if seed is None else seed
        games = data.get("games") if games is None else games
    seeds, label = resolve_seeds(suite, seed, games, default_games=default_games)
    players = players if players is not None else data.get("players")
    if players is not None and players < 1:
        raise ConfigError(f"players must be at least 1, got {players}")
    seating = seating or data.get("seating") or "mixed"
    if seating not in SEATINGS:
        raise ConfigError(f"seating must be one of {', '.join(SEATINGS)}, got {seating!r}")
    metric = metric or data.get("metric") or "total"
    return EvalSpec(game=game, agents=split_agents(agents), seeds=seeds, players=players,
                    options=dict(data.get("options") or {}), seeds_label=label, seating=seating,
                    metric=metric)
