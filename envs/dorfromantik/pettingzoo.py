"""Dorfromantik as a PettingZoo AEC env (:mod:`envs.core.pettingzoo_env`): ``env(players=2)``.

Needs PettingZoo (the ``dev`` extra). Agents ``player_0..``; observation
``Dict(observation=<the Gymnasium env's observations Box>, action_mask=Box(0, 1, (num_actions,), int8))``;
action ``Discrete(num_actions)`` with the codec of :mod:`envs.dorfromantik.env`. Cooperative: every seat's
score is the shared one, so each agent's reward is the shared score's change since its last step.
"""

from __future__ import annotations

from typing import Any

from envs.dorfromantik.env import bounded_observation_space
from envs.dorfromantik.game import DorfromantikGame


def env(render_mode: str | None = None, **options: Any):
    """The wrapped (order-enforcing) AEC env; ``options`` are game options (``players``, ...)."""
    from envs.core.pettingzoo_env import make_aec_env

    game = DorfromantikGame(**options)
    return make_aec_env(game, render_mode=render_mode,
                        observation_box=bounded_observation_space(game)["observations"])


def raw_env(render_mode: str | None = None, **options: Any):
    """The unwrapped AEC env."""
    from envs.core.pettingzoo_env import make_aec_env

    game = DorfromantikGame(**options)
    return make_aec_env(game, render_mode=render_mode,
                        observation_box=bounded_observation_space(game)["observations"], wrapped=False)
