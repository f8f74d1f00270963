"""One agent name per search: each is the same agent as its mcts spec (same moves on the same
positions), takes only its own options, and refuses games it does not play."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from agents.base import make_agent
from agents.labels import agent_label
from agents.search.catalog import SEARCHES, search_name_of
from agents.search.names import options_class
from agents.spec import parse_agent_spec
from envs.core.errors import ConfigError
from envs.core.registry import make_game
from tests.paths import CONFIGS


def _published_mcts_specs() -> list[tuple[str, dict, str]]:
    """(game, game options, spec) for every mcts spec of the published ladder configs."""
    found = []
    for path in sorted((CONFIGS / "ladder").glob("*.yaml")):
        config = yaml.safe_load(path.read_text())
        found += [(config["game"], dict(config.get("game_options") or {}), spec)
                  for spec in config["agents"] if str(spec).startswith("mcts:")]
    return found


PUBLISHED = _published_mcts_specs()


def _small(options: dict) -> dict:
    """The same search with a small budget, so the comparison is quick."""
    return {**options, "simulations": min(int(options.get("simulations", 8)), 8)}


def _spec(name: str, options: dict) -> str:
    return f"{name}:" + ",".join(f"{k}={v}" for k, v in options.items())


def test_published_configs_have_mcts_specs():
    assert len(PUBLISHED) >= 15
    assert {game for game, _, _ in PUBLISHED} == {"cartographers", "cascadia", "dorfromantik"}


@pytest.mark.parametrize(("game_name", "game_options", "spec"), PUBLISHED[::3],
                         ids=[s for _, _, s in PUBLISHED[::3]])
def test_search_name_plays_the_moves_of_its_mcts_spec(game_name, game_options, spec):
    game = make_game(game_name, **game_options)
    _, options = parse_agent_spec(spec)
    options = _small(options)
    name, own = search_name_of(game_name, options)
    assert name != "mcts" and "engine" not in own
    old, new = make_agent(_spec("mcts", options), game), make_agent(_spec(name, own), game)
    state = game.new_game(seed=11)
    for decision in range(6):
        mask = game.legal_mask(state)
        a = old.act(state, mask, np.random.default_rng([11, decision]))
        b = new.act(state, mask, np.random.default_rng([11, decision]))
        assert a == b, f"decision {decision}: mcts chose {a}, {name} chose {b}"
        game.step(state, a)


def test_every_search_name_maps_back():
    assert search_name_of("cascadia", {"engine": "compiled", "rollout": "greedy", "simulations": 4}) == \
        ("turn", {"simulations": 4})
    assert search_name_of("cartographers", {"engine": "compiled", "simulations": 4}) == \
        ("root", {"simulations": 4})
    assert search_name_of("dorfromantik", {"value": "ppo:x"})[0] == "puct"
    assert search_name_of("cartographers", {"simulations": 4}) == ("uct", {"simulations": 4})


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_options_are_a_frozen_dataclass_with_mcts_defaults(name):
    options = options_class(name)()
    assert options.simulations == 200 and options.time_limit is None
    with pytest.raises(AttributeError):
        options.simulations = 5  # frozen


@pytest.mark.parametrize(("spec", "game_name", "fragment"), [
    ("turn:simulatons=8", "cascadia", "unknown option.s. simulatons; known: simulations"),
    ("turn:c=1", "cascadia", "unknown option.s. c;"),
    ("flat:simulations=8", "cascadia", "searches for cascadia: uct, puct, turn"),
    ("placement:simulations=8", "cartographers", "searches for cartographers: uct, puct, root, flat"),
    ("puct:simulations=8", "dorfromantik", "needs value=ppo"),
])
def test_bad_search_specs_name_the_problem(spec, game_name, fragment):
    with pytest.raises(ConfigError, match=fragment):
        make_agent(spec, make_game(game_name))


def test_the_agent_keeps_its_typed_options():
    agent = make_agent("turn:simulations=16,objective=base", make_game("cascadia", players=2))
    options = agent.search_options
    assert (options.simulations, options.objective, options.halving) == (16, "base", False)
    assert type(options) is options_class("turn") and not hasattr(options, "c")  # only its own options


def test_labels_name_the_search():
    assert agent_label("flat:simulations=1536,greedy=progress,halving=true,horizon=2") == \
        "flat(1536, greedy progress, halving, horizon 2)"
    assert agent_label("turn:simulations=768,objective=base") == "turn(768, greedy, base objective)"
    assert agent_label("uct:simulations=8") == "uct(8, random)"
