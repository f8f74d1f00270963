"""An RLlib multi-agent environment over any :class:`envs.core.game.Game`, turn-based.

Agents are ``"player_0"``, ``"player_1"``, ... (one per seat). Only the agent that must act next
receives an observation; its reward is the change of its own total score since its previous
observation (with ``shared_reward=True``: the change of the seats' mean total, which is the
shared score of a cooperative game). An agent's first observation carries reward 0 (RLlib drops
rewards that come before an agent's first action); what changed before it is paid with the next
one, so each agent's rewards add up to its final score minus its score at the start (not 0 where
the starting position already scores: the corridors of Cascadia's starter habitats). When the game
ends every agent that has observed before gets a final observation and its last reward, and
``terminateds["__all__"]`` is True. ``reward="margin"`` pays the change of its own score minus the
others' mean score over the same interval (rewards add up to own final score minus the others'
mean); ``reward="win"`` pays 0 until the end and then the rank reward (:mod:`envs.core.rewards`).

Observation and action spaces are the single-agent ones (:mod:`envs.core.gym_env`): a Dict of
``observations`` and a float32 ``action_mask``, and ``Discrete(game.num_actions)``; infos carry
``action_mask``, ``score`` and ``player``.

``action_space="candidates"`` (``max_candidates=K`` optional) gives every agent the candidate view of
:class:`envs.core.candidate_env.CandidateEnv`: observation ``Dict(candidates, candidate_mask,
context)`` (the mover's candidate moves, best greedy value first, and the context from its seat),
action ``Discrete(K)`` a row index; a Cascadia row is a whole turn. Decisions without candidates
(a Cartographers ambush) are played inside the step by the view's fallback agent, their points paid
with the next reward as any other change. Infos add ``candidate_actions``, ``num_candidates`` and
``candidates_truncated``.

Illegal actions: ``illegal_action="raise"`` (default) raises IllegalActionError. RLlib's env
pre-check (``check_multiagent_environments``) steps with an unmasked sample, so either build the
algorithm with ``.environment(..., disable_env_checking=True)`` or use
``illegal_action="penalize"``: the state is unchanged, the acting agent gets ``illegal_penalty``
and observes again, and its info holds ``illegal_action``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from envs.core.candidates import CandidateView
from envs.core.errors import ConfigError, IllegalActionError
from envs.core.game import Game, State, action_index
from envs.core.gym_env import (
    MAX_GAME_SEED,
    check_illegal_action_mode,
    check_render_mode,
    merge_env_config,
    observation_space_for,
)
from envs.core.policies import candidate_view
from envs.core.registry import make_game
from envs.core.rewards import check_reward_mode, seat_value, terminal_rewards
from envs.core.rng import numpy_generator

ACTION_SPACES = ("plain", "candidates")


def agent_id(seat: int) -> str:
    """The RLlib agent id of ``seat``."""
    return f"player_{seat}"


def seat_of(agent: str) -> int:
    """The seat of an agent id ``"player_<seat>"``."""
    prefix, _, number = agent.partition("_")
    if prefix != "player" or not number.isdigit():
        raise ValueError(f"agent ids look like 'player_0', got {agent!r}")
    return int(number)


class GameMultiAgentEnv(MultiAgentEnv):
    """Turn-based RLlib ``MultiAgentEnv`` for one game (see the module docstring).

    Args:
        game: the rules object.
        shared_reward: reward every agent with the change of the seats' mean score instead of
            its own score (cooperative games).
        illegal_action: "raise" (default) or "penalize".
        illegal_penalty: reward of a penalized illegal action.
        render_mode: None, "ansi" or "rgb_array" (the whole table).
        reward: "score" (default), "margin" or "win"; with ``shared_reward`` only "score".
        action_space: "plain" (default) or "candidates" (module docstring).
        max_candidates: K of the candidate mode (default: the view's).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, game: Game, shared_reward: bool = False, illegal_action: str = "raise",
                 illegal_penalty: float = -1.0, render_mode: str | None = None, reward: str = "score",
                 action_space: str = "plain", max_candidates: int | None = None):
        if not isinstance(game, Game):
            raise ConfigError(f"GameMultiAgentEnv needs an envs.core.game.Game, got {type(game).__name__}")
        self.game = game
        self.shared_reward = bool(shared_reward)
        self.reward_mode = check_reward_mode(reward)
        if self.shared_reward and self.reward_mode != "score":
            raise ConfigError(f"reward={reward!r} compares seats, but shared_reward=True gives every seat "
                              "the same score: use reward='score'")
        self.illegal_action = check_illegal_action_mode(illegal_action)
        self.illegal_penalty = float(illegal_penalty)
        self.render_mode = check_render_mode(render_mode)
        self.possible_agents = [agent_id(i) for i in range(game.num_players())]
        self.agents = list(self.possible_agents)
        if action_space not in ACTION_SPACES:
            raise ConfigError(f"action_space must be one of {ACTION_SPACES}, got {action_space!r}")
        if action_space == "plain" and max_candidates is not None:
            raise ConfigError("max_candidates needs action_space='candidates'")
        self.view: CandidateView | None = None
        if action_space == "candidates":
            self.view = candidate_view(game.name)
            k = self.view.max_candidates if max_candidates is None else max_candidates
            if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
                raise ConfigError(f"max_candidates must be an integer >= 1, got {max_candidates!r}")
            self.max_candidates = int(k)
            d, c, bound = len(self.view.feature_names), len(self.view.context_names), self.view.bound
            obs_space = spaces.Dict({
                "candidates": spaces.Box(-bound, bound, shape=(self.max_candidates, d), dtype=np.float32),
                "candidate_mask": spaces.Box(0.0, 1.0, shape=(self.max_candidates,), dtype=np.float32),
                "context": spaces.Box(-bound, bound, shape=(c,), dtype=np.float32),
            })
            act_space = spaces.Discrete(self.max_candidates)
        else:
            obs_space = observation_space_for(game)
            act_space = spaces.Discrete(game.num_actions)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        super().__init__()
        self._ranked: tuple[np.ndarray, np.ndarray, int] | None = None  # the mover's rows (candidates)
        self._fallback_agent: Any = None
        self._fallback_rng = np.random.default_rng(0)
        self.state: State | None = None
        self.game_seed: int | None = None
        self._score_at_last_obs: dict[str, float] = {}
        self._observed: set[str] = set()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a new game (``seed`` = game seed; None draws one) and observe the first mover."""
        super().reset(seed=seed, options=options)
        options = options or {}
        if "game_seed" in options:
            self.game_seed = int(options["game_seed"])
        elif seed is not None:
            self.game_seed = int(seed)
        else:
            self.game_seed = int(self.np_random.integers(0, MAX_GAME_SEED))
        if self.game_seed < 0:
            raise ConfigError(f"game seed must be >= 0, got {self.game_seed}")
        self.state = self.game.new_game(self.game_seed)
        if self.view is not None:
            self._fallback_rng = numpy_generator(self.game_seed, "candidates/fallback")
            self._skip_fallbacks()
        self.agents = list(self.possible_agents)
        # every agent's reward baseline starts at its score when the game starts
        self._score_at_last_obs = {a: self._score(a) for a in self.possible_agents}
        mover = agent_id(self.game.current_player(self.state))
        self._observed = {mover}
        return {mover: self._observation(mover)}, {mover: self._info(mover)}

    def step(self, action_dict: dict[str, Any]):
        """Apply the acting agent's action; observe the next mover (or everyone at the end)."""
        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.game.is_over(self.state):
            raise IllegalActionError(-1, "the game is over; call reset()")
        mover = agent_id(self.game.current_player(self.state))
        if mover not in action_dict:
            raise ConfigError(f"it is {mover}'s turn; the actions given are for {sorted(action_dict)}")
        others = sorted(set(action_dict) - {mover})
        if others:
            raise ConfigError(f"only {mover} may act now, got actions for {others} too")
        action = action_dict[mover]
        try:
            move = self._move(action)
        except IllegalActionError as exc:
            if self.illegal_action == "raise":
                raise
            info = self._info(mover)
            info["illegal_action"] = str(exc)
            return ({mover: self._observation(mover)}, {mover: self.illegal_penalty},
                    {"__all__": False}, {"__all__": False}, {mover: info})
        move(self.state)
        if self.view is not None:
            self._skip_fallbacks()

        if self.game.is_over(self.state):
            observers = [a for a in self.possible_agents if a in self._observed]
            obs = {a: self._observation(a) for a in observers}
            rewards = {a: self._reward_since_last_obs(a) for a in observers}
            if self.reward_mode == "win":
                final = terminal_rewards(self.game, self.state)
                rewards = {a: rewards[a] + float(final[seat_of(a)]) for a in observers}
            infos = {a: self._info(a) for a in observers}
            terminateds = {a: True for a in observers}
            terminateds["__all__"] = True
            truncateds = {a: False for a in observers}
            truncateds["__all__"] = False
            self.agents = []
            return obs, rewards, terminateds, truncateds, infos

        nxt = agent_id(self.game.current_player(self.state))
        reward = self._reward_since_last_obs(nxt)
        return ({nxt: self._observation(nxt)}, {nxt: reward}, {"__all__": False}, {"__all__": False},
                {nxt: self._info(nxt)})

    def render(self):
        """The whole table as text ("ansi") or an RGB array ("rgb_array"); None without a mode."""
        if self.render_mode is None or self.state is None:
            return None
        if self.render_mode == "ansi":
            return self.game.render_ansi(self.state, None)
        return np.asarray(self.game.render_rgb(self.state, None), dtype=np.uint8)

    # ---- helpers ------------------------------------------------------------------------------

    def current_agent(self) -> str | None:
        """The agent that must act now (None once the game is over)."""
        if self.state is None or self.game.is_over(self.state):
            return None
        return agent_id(self.game.current_player(self.state))

    def _score(self, agent: str) -> float:
        """The value whose change is ``agent``'s reward (0 throughout for "win")."""
        if self.reward_mode == "win":
            return 0.0
        totals = np.array([s.total for s in self.game.scores(self.state)], dtype=np.float64)
        if self.shared_reward:
            return float(totals.mean())
        return seat_value(self.reward_mode, totals, seat_of(agent))

    def _reward_since_last_obs(self, agent: str) -> float:
        if agent not in self._observed:  # first observation: 0, the baseline stays at the start
            self._observed.add(agent)
            return 0.0
        now = self._score(agent)
        reward = now - self._score_at_last_obs[agent]
        self._score_at_last_obs[agent] = now
        return float(reward)

    def _move(self, action: Any):
        """``move(state)`` of the mover's ``action`` (a plain action, or a candidate row index);
        IllegalActionError naming it when it is not legal now."""
        if self.view is None:
            action = action_index(action, self.game.num_actions)
            self.game.check_legal(self.state, action)
            return lambda state: self.game.step(state, action)
        index = action_index(action, self.max_candidates)
        actions, _, n = self._ranked
        if index >= min(n, self.max_candidates):
            raise IllegalActionError(index, f"candidate index {index} is masked out: this decision has "
                                            f"{min(n, self.max_candidates)} candidate(s)")
        chosen = int(actions[index])
        if self.view.play is None:
            return lambda state: self.game.step(state, chosen)
        return lambda state: self.view.play(self.game, state, chosen)  # a whole turn (Cascadia)

    def _skip_fallbacks(self) -> None:
        """List the next decision's candidates; play decisions without any by the fallback agent."""
        self._ranked = None
        while not self.game.is_over(self.state):
            self._ranked = self.view.ranked(self.game, self.state, self.max_candidates)
            if self._ranked[2]:
                return
            if self._fallback_agent is None:
                self._fallback_agent = self.view.fallback_agent(self.game)
            self.game.step(self.state, self.view.fallback(self.game, self.state, self._fallback_rng,
                                                          self._fallback_agent))

    def _candidate_rows(self, agent: str) -> tuple[np.ndarray, np.ndarray, int]:
        """The candidate actions, feature rows and count ``agent`` sees (none unless it must act)."""
        if self._ranked is None or self.current_agent() != agent:
            return np.zeros(0, np.int64), np.zeros((0, len(self.view.feature_names)), np.float32), 0
        return self._ranked

    def _legal(self, agent: str) -> np.ndarray:
        if self.game.is_over(self.state) or agent_id(self.game.current_player(self.state)) != agent:
            return np.zeros(self.game.num_actions, dtype=bool)
        return np.asarray(self.game.legal_mask(self.state), dtype=bool)

    def _observation(self, agent: str) -> dict[str, np.ndarray]:
        if self.view is not None:
            k = self.max_candidates
            actions, features, n = self._candidate_rows(agent)
            rows = np.zeros((k, len(self.view.feature_names)), dtype=np.float32)
            rows[:actions.size] = features
            return {"candidates": rows, "candidate_mask": (np.arange(k) < n).astype(np.float32),
                    "context": self.view.context(self.game, self.state, seat_of(agent))}
        obs = np.asarray(self.game.observation(self.state, seat_of(agent)), dtype=np.float32)
        return {"observations": obs, "action_mask": self._legal(agent).astype(np.float32)}

    def _info(self, agent: str) -> dict[str, Any]:
        info = {
            "action_mask": self._legal(agent).astype(np.float32),
            "score": self.game.scores(self.state)[seat_of(agent)].as_dict(),
            "player": seat_of(agent),
        }
        if self.view is not None:
            actions, _, n = self._candidate_rows(agent)
            padded = np.full(self.max_candidates, -1, dtype=np.int64)
            padded[:actions.size] = actions
            info.update(candidate_actions=padded, num_candidates=n,
                        candidates_truncated=n if n > self.max_candidates else 0)
        return info


#: the multi-agent env's own keywords; every other keyword is a game option
ENV_KEYWORDS = ("shared_reward", "illegal_action", "illegal_penalty", "render_mode", "reward", "action_space",
                "max_candidates")


def seat_env_class(game_name: str, module: str, class_name: str, doc: str) -> type:
    """The turn-based multi-agent env class of ``game_name`` (``players`` 2 unless given; keywords or
    one RLlib ``env_config`` dict), named ``module.class_name`` so that it pickles by reference."""

    def __init__(self, config: dict | int | None = None, **options: Any) -> None:
        options = merge_env_config(config, options, "players")
        options.setdefault("players", 2)
        env_kwargs = {k: options.pop(k) for k in ENV_KEYWORDS if k in options}
        GameMultiAgentEnv.__init__(self, make_game(game_name, **options), **env_kwargs)

    return type(class_name, (GameMultiAgentEnv,),
                {"__init__": __init__, "__doc__": doc, "__module__": module, "__qualname__": class_name})
