"""Cartographers as a PettingZoo AEC env (:mod:`envs.core.pettingzoo_env`): ``env(players=2)``.

Needs PettingZoo (the ``dev`` extra). Agents ``player_0..``; observation
``Dict(observation=<the Gymnasium env's observations Box>, action_mask=Box(0, 1, (num_actions,), int8))``;
action ``Discrete(num_actions)`` with the codec of :mod:`envs.cartographers.env`.
"""

from __future__ import annotations

from typing import Any

from envs.core.registry import make_game


def env(render_mode: str | None = None, **options: Any):
    """The wrapped (order-enforcing) AEC env; ``options`` are game options (``players``, ...)."""
    from envs.core.pettingzoo_env import make_aec_env

    return make_aec_env(make_game("cartographers", **options), render_mode=render_mode)


def raw_env(render_mode: str | None = None, **options: Any):
    """The unwrapped AEC env."""
    from envs.core.pettingzoo_env import make_aec_env

    return make_aec_env(make_game("cartographers", **options), render_mode=render_mode, wrapped=False)
