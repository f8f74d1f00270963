"""Agent display labels: short automatic names, an explicit label= option that never reaches the
agent, and no two specs shown under one label."""

from __future__ import annotations

import pytest

from agents.base import agent_label, make_agent
from agents.labels import unique_labels
from envs.core.errors import ConfigError
from envs.core.registry import make_game


@pytest.mark.parametrize(("spec", "label"), [
    ("random", "random"),
    ("greedy", "greedy"),
    ("mcts:simulations=8,prior=greedy,rollout=greedy,widening=1/0.4,paired=true", "mcts(8, greedy)"),
    ("mcts:engine=compiled,rollout=greedy,simulations=64,widening=1/0.5", "mcts(64, greedy, compiled)"),
    ("mcts:engine=compiled,rollout=greedy,simulations=64,greedy=progress,halving=true",
     "mcts(64, greedy progress, compiled, halving)"),
    ("mcts:engine=compiled,rollout=greedy,simulations=2048,halving=true,horizon=1",
     "mcts(2048, greedy, compiled, halving, horizon 1)"),
    ("mcts:engine=compiled,rollout=greedy,simulations=768,halving=true,greedy=selfplay,redraws=true",
     "mcts(768, greedy selfplay, compiled, halving, redraws)"),
    ("mcts:engine=compiled,rollout=greedy,simulations=512,halving=true,free_redraw=true",
     "mcts(512, greedy, compiled, halving, free redraw)"),
    ("mcts:engine=compiled,rollout=greedy,simulations=512,free_redraw=true,playout_redraw=true",
     "mcts(512, greedy, compiled, free redraw, redrawing playouts)"),
    ("mcts:engine=compiled,rollout=greedy,simulations=768,halving=true,greedy=selfplay,objective=base",
     "mcts(768, greedy selfplay, compiled, halving, base objective)"),
    ("mcts:engine=compiled,rollout=greedy,simulations=768,halving=true,rotations=2",
     "mcts(768, greedy, compiled, halving, 2 rotations)"),
    ("mcts:simulations=4", "mcts(4, random)"),
    ("mcts:simulations=none,time_limit=1.5,rollout=greedy", "mcts(1.5s, greedy)"),
    ("mcts:simulations=16,prior=greedy", "mcts(16, random, prior greedy)"),
    ("greedy:future=0.7,coin=2", "greedy(future=0.7, coin=2)"),
    ("ppo:runs/train/league/policy.pt", "ppo(league)"),
    ("mcts:simulations=96,rollout=greedy,label=strong", "strong"),
    ("mcts:prior=ppo:a.pt,value=ppo:a.pt,simulations=16,value_weight=0.5", "puct(16, value_weight 0.5)"),
    ("mcts:value=ppo:a.pt,simulations=64,c_puct=2", "puct(64, value_weight 1.0, c_puct 2)"),
    ("mcts:value=ppo:a.pt,simulations=64,batch=8", "puct(64, value_weight 1.0, batch 8)"),
    ({"name": "mcts", "simulations": 8, "rollout": "greedy"}, "mcts(8, greedy)"),
    ({"name": "greedy", "label": "mine"}, "mine"),
])
def test_labels(spec, label):
    assert agent_label(spec) == label


def test_the_label_option_is_stripped_before_the_agent_is_built():
    game = make_game("cartographers")
    agent = make_agent("random:label=baseline", game)  # RandomAgent takes no options at all
    assert agent.name == "random"
    with pytest.raises(ConfigError, match="label= needs a name"):
        agent_label("random:label=")


def test_two_specs_under_one_label_are_refused_with_a_hint():
    with pytest.raises(ConfigError, match="would both be shown as 'mcts\\(8, greedy\\)'; give one of them"):
        unique_labels(["mcts:simulations=8,rollout=greedy", "mcts:simulations=8,rollout=greedy,paired=true"])
    with pytest.raises(ConfigError, match="agent listed twice: greedy"):
        unique_labels(["greedy", "greedy"])
    labels = unique_labels(["mcts:simulations=8,rollout=greedy",
                            "mcts:simulations=8,rollout=greedy,paired=true,label=paired"])
    assert labels == ["mcts(8, greedy)", "paired"]
