"""One agent name per search, each with its own frozen options dataclass.

``mcts`` covers every search of the project through two switches (``engine`` and ``value``) and
22 options, most of which belong to one search only. These names pick the search and take only
its options; each is the same agent as an ``mcts:`` spec with the switches set, so both spellings
play the same games (tested), and every ``mcts:...`` spec keeps working as before.

| name | search | games | the same as |
| --- | --- | --- | --- |
| ``uct`` | open-loop information-set UCT in Python | every game | ``mcts:engine=python`` |
| ``puct`` | network-guided PUCT (needs ``value=ppo:<checkpoint>``) | every game | ``mcts:value=...`` |
| ``root`` | compiled root bandit with random rollouts | cartographers | ``mcts:engine=compiled`` |
| ``flat`` | compiled flat search | cartographers | ``mcts:engine=compiled,rollout=greedy`` |
| ``turn`` | compiled whole-turn search | cascadia | ``mcts:engine=compiled,rollout=greedy`` |
| ``placement`` | compiled placement search | dorfromantik | ``mcts:engine=compiled`` |
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any

from agents.search.catalog import SEARCHES
from agents.search.mcts import MCTSAgent
from envs.core.errors import ConfigError
from envs.core.game import Game


@functools.cache
def options_class(name: str) -> type:
    """A frozen dataclass of search ``name``'s options, with :class:`MCTSAgent`'s defaults."""
    parameters = inspect.signature(MCTSAgent.__init__).parameters
    fields = [(key, Any, dataclasses.field(default=parameters[key].default))
              for key in SEARCHES[name].options]
    return dataclasses.make_dataclass(f"{name.capitalize()}Options", fields, frozen=True)


def build_search(name: str, game: Game, **given: Any) -> MCTSAgent:
    """The search ``name`` for ``game`` with ``given`` options; the agent keeps them, defaults filled
    in, as the frozen ``search_options`` (an :func:`options_class` instance)."""
    search = SEARCHES[name]
    if search.games is not None and game.name not in search.games:
        others = [s.name for s in SEARCHES.values() if s.games is None or game.name in s.games]
        raise ConfigError(f"agent {name!r} is the {search.summary} of {', '.join(search.games)}; "
                          f"searches for {game.name}: {', '.join(others)}")
    options = search.spec_options(given)
    if name == "puct" and options.get("value") is None:
        raise ConfigError("agent 'puct' needs value=ppo:<checkpoint> (the network that values leaves)")
    agent = MCTSAgent(game, **options)
    agent.search_options = options_class(name)(**given)
    return agent


def _factory(name: str):
    def factory(game: Game, **options: Any) -> MCTSAgent:
        return build_search(name, game, **options)
    factory.__name__ = name
    factory.__doc__ = f"The ``{name}`` agent: {SEARCHES[name].summary}."
    return factory


uct = _factory("uct")
puct = _factory("puct")
root = _factory("root")
flat = _factory("flat")
turn = _factory("turn")
placement = _factory("placement")
