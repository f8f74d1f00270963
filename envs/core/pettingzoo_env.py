"""A PettingZoo ``AECEnv`` over any :class:`envs.core.game.Game`, turn-based.

Agents are ``"player_0"``, ``"player_1"``, ... (one per seat); ``agent_selection`` is the seat that
must act (``game.current_player``). Each agent observes
``Dict(observation=<the game's observation Box, float32>, action_mask=Box(0, 1, (num_actions,), int8))``
as PettingZoo documents action masking: the mask is 1 where the action is legal, and all zeros for
an agent that is not to move (or once the game is over). The action space is
``Discrete(game.num_actions)``; sample legal actions with ``action_space(agent).sample(mask)``.

Rewards: after every step ``rewards[a]`` is the change of seat ``a``'s total score that the step
caused, so ``last()`` (PettingZoo's cumulative reward) gives the acting agent its score change
since its previous step, as the RLlib multi-agent env does (:mod:`envs.core.multiagent_env`); each
agent's rewards add up to its final score less its score at the start (Cascadia's starting tiles
already score). In a cooperative game (Dorfromantik) every seat's total is the shared score. When
the game ends every agent is terminated (never truncated) and must be stepped once more with
``None`` (PettingZoo's dead steps), which removes it from ``agents``.

Illegal actions raise :class:`~envs.core.errors.IllegalActionError` naming the action and the reason.
``reset(seed=s)`` starts game ``s`` (``options={"game_seed": s}`` too); ``seed=None`` draws one
from the env's own generator. Infos hold ``player`` and ``score`` (the seat's total).

PettingZoo is a ``dev`` extra: import this module (and ``envs/<game>/pettingzoo.py``'s ``env``)
only where PettingZoo is wanted.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from envs.core.errors import ConfigError, IllegalActionError
from envs.core.game import Game, State, action_index
from envs.core.gym_env import check_render_mode, choose_game_seed, observation_space_for, render_state


def agent_id(seat: int) -> str:
    """The agent name of ``seat`` (the RLlib env's too)."""
    return f"player_{seat}"


def seat_of(agent: str) -> int:
    """The seat of an agent name ``"player_<seat>"``."""
    prefix, _, number = agent.partition("_")
    if prefix != "player" or not number.isdigit():
        raise ValueError(f"agent names look like 'player_0', got {agent!r}")
    return int(number)


class GameAECEnv(AECEnv):
    """Turn-based PettingZoo AEC env for one game (see the module docstring).

    Args:
        game: the rules object (``envs.core.registry.make_game(...)``).
        render_mode: None, "ansi" or "rgb_array" (the whole table).
        observation_box: the Box of the ``observation`` entry; by default the one of the game's
            Gymnasium env (:func:`envs.core.gym_env.observation_space_for`).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "name": "meeplelab_v0", "is_parallelizable": False,
                "render_fps": 4}

    def __init__(self, game: Game, render_mode: str | None = None, observation_box: spaces.Box | None = None):
        super().__init__()
        if not isinstance(game, Game):
            raise ConfigError(f"GameAECEnv needs an envs.core.game.Game, got {type(game).__name__}")
        self.game = game
        self.render_mode = check_render_mode(render_mode)
        self.metadata = dict(self.metadata, name=f"meeplelab_{game.name}_v0")
        self.possible_agents = [agent_id(i) for i in range(game.num_players())]
        box = observation_box if observation_box is not None else observation_space_for(game)["observations"]
        # one space object per agent, so that seeding it (PettingZoo's seed_test) sticks
        self.observation_spaces = {a: spaces.Dict({
            "observation": spaces.Box(box.low, box.high, shape=box.shape, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(game.num_actions,), dtype=np.int8),
        }) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(game.num_actions) for a in self.possible_agents}
        self.state: State | None = None
        self.game_seed: int | None = None
        self._totals = np.zeros(len(self.possible_agents), dtype=np.float64)
        self._np_random: np.random.Generator | None = None
        self.agents: list[str] = []

    # ---- PettingZoo API -----------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game: ``seed`` is the game seed; None draws one from the env's generator."""
        if seed is not None or self._np_random is None:
            self._np_random = np.random.default_rng(seed)
        self.game_seed = game_seed = choose_game_seed(seed, options, self._np_random)
        self.state = self.game.new_game(game_seed)
        self.agents = list(self.possible_agents)
        self._totals = np.asarray(self.game.returns(self.state), dtype=np.float64)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: self._info(a) for a in self.agents}
        self.agent_selection = agent_id(self.game.current_player(self.state))

    def step(self, action: Any) -> None:
        """Apply the selected agent's ``action`` (``None`` for a terminated agent)."""
        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        index = action_index(action, self.game.num_actions)
        self.game.check_legal(self.state, index)
        self._cumulative_rewards[agent] = 0.0
        self.game.step(self.state, index)
        totals = np.asarray(self.game.returns(self.state), dtype=np.float64)
        change = totals - self._totals
        self._totals = totals
        self.rewards = {a: float(change[seat_of(a)]) for a in self.agents}
        self.infos = {a: self._info(a) for a in self.agents}
        if self.game.is_over(self.state):
            self.terminations = {a: True for a in self.agents}
            # dead steps go in seat order, starting after the agent that ended the game
            seat = seat_of(agent)
            self.agent_selection = agent_id((seat + 1) % len(self.possible_agents))
        else:
            self.agent_selection = agent_id(self.game.current_player(self.state))
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before observe()")
        seat = seat_of(agent)
        obs = np.asarray(self.game.observation(self.state, seat), dtype=np.float32)
        return {"observation": obs, "action_mask": self._legal(seat).astype(np.int8)}

    def render(self):
        """The whole table as text ("ansi") or an RGB array ("rgb_array"); None without a mode."""
        return render_state(self.game, self.state, self.render_mode, None)

    def close(self) -> None:
        """Nothing to release (no window)."""

    # ---- helpers ------------------------------------------------------------------------------

    def action_mask(self, agent: str | None = None) -> np.ndarray:
        """The legal actions of ``agent`` (default: the selected one) as a bool array."""
        return self._legal(seat_of(agent if agent is not None else self.agent_selection))

    def _legal(self, seat: int) -> np.ndarray:
        if self.game.is_over(self.state) or self.game.current_player(self.state) != seat:
            return np.zeros(self.game.num_actions, dtype=bool)
        return np.asarray(self.game.legal_mask(self.state), dtype=bool)

    def _info(self, agent: str) -> dict[str, Any]:
        seat = seat_of(agent)
        return {"player": seat, "score": int(self._totals[seat])}


def wrap(env: GameAECEnv) -> AECEnv:
    """``env`` with PettingZoo's usual wrappers (order enforcing: reset before step, no observe
    before reset)."""
    return wrappers.OrderEnforcingWrapper(env)


def make_aec_env(game: Game, render_mode: str | None = None, observation_box: spaces.Box | None = None,
                 wrapped: bool = True) -> AECEnv:
    """The AEC env of ``game``; ``wrapped`` adds :func:`wrap`'s wrappers."""
    env = GameAECEnv(game, render_mode=render_mode, observation_box=observation_box)
    return wrap(env) if wrapped else env


__all__ = ["GameAECEnv", "IllegalActionError", "agent_id", "make_aec_env", "seat_of", "wrap"]
