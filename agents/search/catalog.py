"""The catalogue of search names (see :mod:`agents.search.names`): plain data, so labels and docs
can read it without loading a search."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from envs.core.errors import ConfigError


@dataclass(frozen=True)
class SearchName:
    """What one search name means: the switches it sets on the ``mcts`` agent, the options it
    takes and the games it plays."""

    name: str
    summary: str
    fixed: dict[str, Any]
    options: tuple[str, ...]
    games: tuple[str, ...] | None = None  # None: every game

    def spec_options(self, given: dict[str, Any]) -> dict[str, Any]:
        """The ``mcts`` options this search with ``given`` stands for (ConfigError for options it
        does not take)."""
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            raise ConfigError(f"agent {self.name!r}: unknown option(s) {', '.join(unknown)}; "
                              f"known: {', '.join(self.options)}")
        return {**self.fixed, **given}


_BUDGET = ("simulations", "time_limit", "seed_offset")

SEARCHES: dict[str, SearchName] = {s.name: s for s in (
    SearchName("uct", "open-loop information-set UCT over determinized futures (Python tree)",
               {"engine": "python"},
               _BUDGET + ("c", "rollout", "widening", "prior", "max_depth", "determinize_every", "paired")),
    SearchName("puct", "network-guided PUCT over determinized futures (value=ppo:<checkpoint>)",
               {"engine": "python"},
               _BUDGET + ("value", "prior", "rollout", "value_weight", "c_puct", "noise", "batch")),
    SearchName("root", "compiled root bandit with random rollouts", {"engine": "compiled"},
               _BUDGET + ("c", "widening", "prior"), ("cartographers",)),
    SearchName("flat", "compiled flat search over paired futures with greedy playouts",
               {"engine": "compiled", "rollout": "greedy"},
               _BUDGET + ("rollout", "widening", "halving", "greedy", "horizon", "model", "rollout_width",
                          "screen", "model_weight"),
               ("cartographers",)),
    SearchName("turn", "compiled whole-turn search over paired futures with greedy playouts",
               {"engine": "compiled", "rollout": "greedy"},
               _BUDGET + ("rollout", "widening", "halving", "greedy", "redraws", "free_redraw",
                          "playout_redraw", "objective", "model", "rotations", "rollout_width"),
               ("cascadia",)),
    SearchName("placement", "compiled placement search over paired futures, exact endgame",
               {"engine": "compiled"},
               _BUDGET + ("rollout", "widening", "greedy", "exact_tiles", "model"), ("dorfromantik",)),
)}


def search_name_of(game_name: str, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The search name and its options that an ``mcts`` agent with ``options`` is, for ``game_name``:
    ``mcts:engine=compiled,rollout=greedy,simulations=64`` on cascadia is ``turn:simulations=64``."""
    if options.get("value") is not None:
        name = "puct"
    elif options.get("engine", "python") == "python":
        name = "uct"
    elif game_name == "cartographers":
        name = "flat" if options.get("rollout") in ("greedy", "learned") else "root"
    else:
        name = {"cascadia": "turn", "dorfromantik": "placement"}.get(game_name, "uct")
    fixed = SEARCHES[name].fixed
    return name, {k: v for k, v in options.items() if not (k in fixed and fixed[k] == v)}
